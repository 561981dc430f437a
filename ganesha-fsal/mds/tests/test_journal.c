/* The journal on real OSDs and a real etcd: records appended by several
 * threads are written in order and are on every copy when sync returns;
 * a reader gets every one, in order, across segment rolls and a new
 * term, and from a copy when another's OSD is gone; a reader whose
 * records are no longer listed is told so; a copy that fails fails the
 * journal, and so does a writer no longer sure that it leads, so nothing
 * more is acknowledged; and a reader that applied a record the next
 * term's writer never saw is told to start again. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "etcd_fixture.h"
#include "freeze.h"
#include "journal.h"
#include "journal_segment.h"
#include "mds_fixture.h"
#include "etcd_client.h"

#define FIRST_SEQ 100
#define THREADS 4
#define PER_THREAD 200

static struct etcd_fixture etcd;
static pthread_mutex_t commit_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_seq = FIRST_SEQ;

static void tune(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
}

/* A batch whose bytes say which seq it is: 1..600 bytes. */
static size_t batch_of(uint64_t seq, uint8_t *buf)
{
	size_t len = 1 + seq * 7919 % 600;

	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seq * 31 + i);
	return len;
}

/* As the store commits: seq and append under one lock, sync after. */
static int commit_one(struct pando_journal *j, uint64_t *seq)
{
	uint8_t buf[600];
	int rc;

	pthread_mutex_lock(&commit_lock);
	*seq = next_seq++;
	rc = pando_journal_append(j, *seq, buf, batch_of(*seq, buf));
	pthread_mutex_unlock(&commit_lock);
	return rc ? rc : pando_journal_sync(j, *seq);
}

static void *committer(void *arg)
{
	struct pando_journal *j = arg;
	uintptr_t failures = 0;

	for (int i = 0; i < PER_THREAD; i++) {
		uint64_t seq;

		failures += commit_one(j, &seq) != 0;
	}
	return (void *)failures;
}

struct seen {
	uint64_t last, count, term;
	unsigned bad;
};

static int check_record(void *arg, const struct journal_record *r)
{
	struct seen *s = arg;
	uint8_t want[600];
	size_t len = batch_of(r->seq, want);

	s->bad += r->seq <= s->last || r->len != len || memcmp(r->payload, want, len);
	s->last = r->seq;
	s->term = r->term;
	s->count++;
	return 0;
}

static int open_term(struct mds_fixture *f, uint64_t term, uint64_t segment_bytes,
		     struct pando_journal **j)
{
	const struct pando_journal_options o = { .group = "g1",
						 .term = term,
						 .segment_bytes = segment_bytes };

	return pando_journal_open(&f->mds, &o, j);
}

static uint64_t commit_many(struct pando_journal *j)
{
	pthread_t t[THREADS];
	uint64_t failures = 0;

	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, committer, j), 0);
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		failures += (uintptr_t)ret;
	}
	return failures;
}

static size_t read_all(struct mds_fixture *f, uint64_t after, struct seen *s, int *rc)
{
	struct pando_journal_reader *r = NULL;
	size_t applied = 0;

	*rc = pando_journal_reader_new(&f->mds, "g1", after, 0, &r);
	if (!*rc)
		*rc = pando_journal_read(r, check_record, s, &applied);
	pando_journal_reader_free(r);
	return applied;
}

static size_t segments(struct mds_fixture *f)
{
	struct etcd_options o = { .endpoints = etcd.url };
	struct etcd_client *c = NULL;
	struct journal_segment *segs = NULL;
	size_t n = 0;
	char prefix[128];

	journal_segment_prefix(f->mds.cfg.etcd_prefix, "g1", prefix, sizeof(prefix));
	if (etcd_client_new(&o, &c) == 0)
		CHECK_EQ(journal_segments_list(c, prefix, &segs, &n), 0);
	journal_segments_free(segs, n);
	etcd_client_free(c);
	return n;
}

static void test_records_from_many_threads_read_back_in_order_across_rolls(struct mds_fixture *f)
{
	struct pando_journal *j = NULL;
	struct seen s = { .last = FIRST_SEQ - 1 };
	int rc;

	CHECK_EQ(open_term(f, 1, 64 << 10, &j), 0);
	if (!j)
		return;
	CHECK_EQ(commit_many(j), 0);
	pando_journal_close(j);
	CHECK(segments(f) > 3); /* about 260 KiB in 64 KiB segments */
	CHECK_EQ(read_all(f, FIRST_SEQ - 1, &s, &rc), THREADS * PER_THREAD);
	CHECK_EQ(rc, 0);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.last, next_seq - 1);
	/* The records right after seq 0 were never in it. */
	s = (struct seen){ 0 };
	CHECK_EQ(read_all(f, 0, &s, &rc), 0);
	CHECK_EQ(rc, -ESTALE);
}

/* A new term writes a segment of its own; a reader caught up on the old
 * one goes on into it. */
static void test_a_new_term_starts_its_own_segment(struct mds_fixture *f)
{
	struct pando_journal_reader *r = NULL;
	struct pando_journal *j = NULL;
	struct seen s = { .last = FIRST_SEQ - 1 };
	size_t before = segments(f), applied = 0;
	uint64_t seq = 0;

	CHECK_EQ(pando_journal_reader_new(&f->mds, "g1", FIRST_SEQ - 1, 0, &r), 0);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), 0);
	CHECK_EQ(pando_journal_reader_seq(r), next_seq - 1);
	CHECK_EQ(open_term(f, 2, 0, &j), 0);
	for (int i = 0; j && i < 10; i++)
		CHECK_EQ(commit_one(j, &seq), 0);
	pando_journal_close(j);
	CHECK_EQ(segments(f), before + 1);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), 0);
	CHECK_EQ(applied, 10);
	CHECK_EQ(s.term, 2);
	CHECK_EQ(s.bad, 0);
	pando_journal_reader_free(r);
}

/* A copy's OSD that stops answering (SIGSTOP) for 3 s, with no other
 * OSD to go to (three here): the write is tried again until it answers,
 * and the journal goes on, the record acknowledged late. */
static void *thaw_later(void *arg)
{
	sleep(3);
	kill(*(pid_t *)arg, SIGCONT);
	return NULL;
}

static void test_an_osd_back_within_the_give_up_time_costs_a_wait(struct mds_fixture *f)
{
	struct pando_journal *j = NULL;
	struct timespec t0, t1;
	uint64_t seq = 0;
	pthread_t t;

	CHECK_EQ(open_term(f, 4, 0, &j), 0);
	if (!j)
		return;
	CHECK_EQ(commit_one(j, &seq), 0);
	CHECK_EQ(freeze_process(f->osds.pids[1]), 0);
	CHECK_EQ(pthread_create(&t, NULL, thaw_later, &f->osds.pids[1]), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(commit_one(j, &seq), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	CHECK(t1.tv_sec - t0.tv_sec >= 2);
	CHECK_EQ(commit_one(j, &seq), 0);
	CHECK_EQ(mds_fixture_log_find("trying again for up to 10 s"), 1);
	pando_journal_close(j);
	CHECK_EQ(osd_fixture_back_in_pool(f->mds.conns, f->osds.osds[1].id), 0);
}

/* Every copy holds every record: with one copy's OSD gone the others
 * give them all; and a write that cannot reach every copy, with no other
 * OSD to go to (three here, test_journal_roll has four), fails the
 * journal for good once tried again for 10 s.  First, a copy's OSD that
 * does not answer (stopped with SIGSTOP): sync waits for it, up to the
 * OSD timeout each try, and fails. */
static void test_a_lost_copy_is_read_around_and_fails_the_writer(struct mds_fixture *f)
{
	struct pando_journal *j = NULL;
	struct seen s = { .last = FIRST_SEQ - 1 };
	uint64_t seq = 0;
	struct timespec t0, t1;
	int rc;

	CHECK_EQ(open_term(f, 3, 0, &j), 0);
	if (!j)
		return;
	CHECK_EQ(commit_one(j, &seq), 0);
	CHECK_EQ(freeze_process(f->osds.pids[1]), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(commit_one(j, &seq), -EIO);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_EQ(kill(f->osds.pids[1], SIGCONT), 0);
	CHECK(t1.tv_sec - t0.tv_sec >= 1); /* the fixture's OSD timeout is 2 s */
	CHECK_EQ(commit_one(j, &seq), -EIO);
	pando_journal_close(j);
	CHECK_EQ(osd_fixture_stop(&f->osds, 0), 0);
	/* Every record acknowledged, and not the two refused: a record a
	 * copy missed may be on the others, and a reader may apply it, as a
	 * store may keep a change it never acknowledged after a crash. */
	CHECK(read_all(f, FIRST_SEQ - 1, &s, &rc) >= next_seq - FIRST_SEQ - 2);
	CHECK_EQ(rc, 0);
	CHECK_EQ(s.bad, 0);
	CHECK(s.last >= next_seq - 3);
	CHECK_EQ(osd_fixture_restart(&f->osds, 0), 0);
	/* The read above may have found it gone, and the pool backs off. */
	CHECK_EQ(osd_fixture_back_in_pool(f->mds.conns, f->osds.osds[0].id), 0);
}

static atomic_bool sure = true;

static bool still_sure(void *arg)
{
	(void)arg;
	return atomic_load(&sure);
}

/* The lease fence: a leader acknowledges a record only while sure that it
 * leads (its lease renewed within TTL/2), checked once the record is on
 * every copy; another can lead only after the lease expired, so every
 * acknowledged record is on the copies before a new leader reads them.
 * Once unsure, the writer acknowledges nothing more, even if sure again:
 * its term may be over. */
static void test_a_writer_unsure_that_it_leads_acknowledges_nothing(struct mds_fixture *f)
{
	const struct pando_journal_options o = { .group = "g1", .term = 4, .leading = still_sure };
	struct pando_journal *j = NULL;
	uint64_t seq = 0;

	CHECK_EQ(pando_journal_open(&f->mds, &o, &j), 0);
	if (!j)
		return;
	CHECK_EQ(commit_one(j, &seq), 0);
	atomic_store(&sure, false);
	CHECK_EQ(commit_one(j, &seq), -ESHUTDOWN); /* for the next active, not lost */
	atomic_store(&sure, true);
	CHECK_EQ(commit_one(j, &seq), -ESHUTDOWN);
	pando_journal_close(j);
}

/* A record of seq past the last one given, in its own journal. */
static int write_record(struct pando_journal *j, uint64_t seq)
{
	uint8_t buf[600];
	int rc = pando_journal_append(j, seq, buf, batch_of(seq, buf));

	return rc ? rc : pando_journal_sync(j, seq);
}

/* A partitioned old leader's write that lands after the new leader read
 * the old segment's end: the new term starts at that record's seq, and a
 * standby that applied it from the old segment holds a change the new
 * leader does not.  It must start again (-ESTALE), not skip the new
 * term's record of the same seq. */
static void test_a_reader_ahead_of_the_next_term_must_start_again(struct mds_fixture *f)
{
	struct pando_journal_reader *r = NULL;
	struct pando_journal *old = NULL, *new = NULL;
	struct seen s = { 0 };
	size_t applied = 0;
	uint64_t seq = next_seq;

	CHECK_EQ(open_term(f, 5, 0, &old), 0);
	CHECK_EQ(write_record(old, seq), 0);
	CHECK_EQ(pando_journal_reader_new(&f->mds, "g1", seq - 1, 0, &r), 0);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), 0);
	CHECK_EQ(applied, 1);
	/* the new leader read up to seq; then the old one's late write */
	CHECK_EQ(write_record(old, seq + 1), 0);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), 0);
	CHECK_EQ(pando_journal_reader_seq(r), seq + 1);
	CHECK_EQ(open_term(f, 6, 0, &new), 0);
	CHECK_EQ(write_record(new, seq + 1), 0);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), -ESTALE);
	pando_journal_reader_free(r);
	pando_journal_close(new);
	pando_journal_close(old);
	next_seq = seq + 2;
}

static atomic_uint_fast64_t floor_seq;

static uint64_t trim_floor(void *arg)
{
	(void)arg;
	return atomic_load(&floor_seq);
}

/* Each new segment trims the ones before it that every member of the
 * group applied: their keys go from etcd and their objects from the
 * OSDs; a reader behind the floor is told to start again, and one at it
 * reads on. */
static void test_segments_every_member_applied_are_trimmed(struct mds_fixture *f)
{
	const struct pando_journal_options o = {
		.group = "g1", .term = 7, .segment_bytes = 16 << 10, .trim_floor = trim_floor
	};
	struct pando_journal_reader *r = NULL;
	struct pando_journal *j = NULL;
	struct seen s = { 0 };
	size_t before, applied = 0;
	long objects_before;
	uint64_t seq = 0, floor;
	int rc;

	atomic_store(&floor_seq, 0);
	CHECK_EQ(pando_journal_open(&f->mds, &o, &j), 0);
	if (!j)
		return;
	for (int i = 0; i < 60; i++)
		CHECK_EQ(commit_one(j, &seq), 0);
	before = segments(f);
	objects_before = mds_fixture_journal_objects(f);
	floor = seq - 20;
	atomic_store(&floor_seq, floor);
	for (int i = 0; i < 60; i++)
		CHECK_EQ(commit_one(j, &seq), 0);
	pando_journal_close(j);
	CHECK(segments(f) < before);
	CHECK_EQ(mds_fixture_journal_objects(f), JOURNAL_COPIES * segments(f));
	CHECK(mds_fixture_journal_objects(f) < objects_before);
	s.last = floor;
	CHECK_EQ(read_all(f, floor, &s, &rc), seq - floor);
	CHECK_EQ(rc, 0);
	CHECK_EQ(s.bad, 0);
	s = (struct seen){ 0 };
	CHECK_EQ(pando_journal_reader_new(&f->mds, "g1", FIRST_SEQ - 1, 0, &r), 0);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), -ESTALE);
	pando_journal_reader_free(r);
}

int main(void)
{
	struct mds_fixture f;

	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the journal needs one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	if (mds_fixture_start(&f, JOURNAL_COPIES, tune) == 0) {
		test_records_from_many_threads_read_back_in_order_across_rolls(&f);
		test_a_new_term_starts_its_own_segment(&f);
		test_an_osd_back_within_the_give_up_time_costs_a_wait(&f);
		test_a_lost_copy_is_read_around_and_fails_the_writer(&f);
		test_a_writer_unsure_that_it_leads_acknowledges_nothing(&f);
		test_a_reader_ahead_of_the_next_term_must_start_again(&f);
		test_segments_every_member_applied_are_trimmed(&f);
	} else {
		CHECK(!"the engine starts");
	}
	mds_fixture_finish(&f, check_failures);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
