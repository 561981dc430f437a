/* The journal on real OSDs and a real etcd: records appended by several
 * threads are written in order and are on every copy when sync returns;
 * a reader gets every one, in order, across segment rolls and a new
 * term, and from a copy when another's OSD is gone; a reader whose
 * records are no longer listed is told so; and a copy that fails fails
 * the journal, so nothing more is acknowledged. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "etcd_fixture.h"
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

	*rc = pando_journal_reader_new(&f->mds, "g1", after, &r);
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

	CHECK_EQ(pando_journal_open(&f->mds, "g1", 1, 64 << 10, &j), 0);
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

	CHECK_EQ(pando_journal_reader_new(&f->mds, "g1", FIRST_SEQ - 1, &r), 0);
	CHECK_EQ(pando_journal_read(r, check_record, &s, &applied), 0);
	CHECK_EQ(pando_journal_reader_seq(r), next_seq - 1);
	CHECK_EQ(pando_journal_open(&f->mds, "g1", 2, 0, &j), 0);
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

/* Every copy holds every record: with one copy's OSD gone the others
 * give them all; and a write that cannot reach every copy fails the
 * journal for good.  First, a copy's OSD that does not answer (stopped
 * with SIGSTOP): sync waits for it, up to the OSD timeout, and fails. */
static void test_a_lost_copy_is_read_around_and_fails_the_writer(struct mds_fixture *f)
{
	struct pando_journal *j = NULL;
	struct seen s = { .last = FIRST_SEQ - 1 };
	uint64_t seq = 0;
	struct timespec t0, t1;
	int rc;

	CHECK_EQ(pando_journal_open(&f->mds, "g1", 3, 0, &j), 0);
	if (!j)
		return;
	CHECK_EQ(commit_one(j, &seq), 0);
	CHECK_EQ(kill(f->osds.pids[1], SIGSTOP), 0);
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
		test_a_lost_copy_is_read_around_and_fails_the_writer(&f);
	} else {
		CHECK(!"the engine starts");
	}
	mds_fixture_finish(&f, check_failures);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
