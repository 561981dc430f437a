/* The journal on four real OSDs and a real etcd, when a copy's OSD stops
 * answering: the write goes whole into a new segment on the three others
 * and is acknowledged, the writer goes on there, and a reader gets every
 * record once, in order, also one that reads the old segment from the
 * copy that took the write late. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "freeze.h"
#include "journal.h"
#include "journal_segment.h"
#include "mds_fixture.h"
#include "objio.h"
#include "view.h"

#define OSDS 4
#define FIRST_SEQ 100
#define BATCH 300

static struct etcd_fixture etcd;
static uint64_t next_seq = FIRST_SEQ;

static void tune(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
}

static void batch_of(uint64_t seq, uint8_t *buf)
{
	for (size_t i = 0; i < BATCH; i++)
		buf[i] = (uint8_t)(seq * 31 + i);
}

static int commit_one(struct pando_journal *j)
{
	uint8_t buf[BATCH];
	uint64_t seq = next_seq++;
	int rc;

	batch_of(seq, buf);
	rc = pando_journal_append(j, seq, buf, sizeof(buf));
	return rc ? rc : pando_journal_sync(j, seq);
}

struct seen {
	uint64_t last, count;
	unsigned bad;
};

static int check_record(void *arg, const struct journal_record *r)
{
	struct seen *s = arg;
	uint8_t want[BATCH];

	batch_of(r->seq, want);
	s->bad += r->seq != s->last + 1 || r->len != BATCH || memcmp(r->payload, want, BATCH);
	s->last = r->seq;
	s->count++;
	return 0;
}

/* The group's segments, as etcd lists them; the caller frees them. */
static size_t segments(struct mds_fixture *f, const char *group, struct journal_segment **segs)
{
	struct etcd_options o = { .endpoints = etcd.url };
	struct etcd_client *c = NULL;
	size_t n = 0;
	char prefix[128];

	*segs = NULL;
	journal_segment_prefix(f->mds.cfg.etcd_prefix, group, prefix, sizeof(prefix));
	if (etcd_client_new(&o, &c) == 0)
		CHECK_EQ(journal_segments_list(c, prefix, segs, &n), 0);
	etcd_client_free(c);
	return n;
}

static int fixture_index(struct mds_fixture *f, uint32_t osd_id)
{
	for (int i = 0; i < f->osds.n; i++)
		if (f->osds.osds[i].id == osd_id)
			return i;
	return -1;
}

static bool on_osd(const struct journal_segment *s, uint32_t osd_id)
{
	for (int c = 0; c < JOURNAL_COPIES; c++)
		if (s->map->comp[c].osd_id == osd_id)
			return true;
	return false;
}

static int read_all(struct mds_fixture *f, const char *group, struct seen *s)
{
	struct pando_journal_reader *r = NULL;
	size_t applied = 0;
	int rc = pando_journal_reader_new(&f->mds, group, s->last, 0, &r);

	if (!rc)
		rc = pando_journal_read(r, check_record, s, &applied);
	pando_journal_reader_free(r);
	return rc;
}

/* With the copies of the old segment that every write reached stopped,
 * a reader must read it from the late copy, which has the failed write's
 * record too, and then meet that record again at the new segment's
 * start. */
static void read_through_the_late_copy(struct mds_fixture *f, const struct journal_segment *old,
				       int late)
{
	struct seen s = { .last = FIRST_SEQ - 1 };
	int stopped[JOURNAL_COPIES], nstopped = 0;

	for (int c = 0; c < JOURNAL_COPIES; c++) {
		int i = fixture_index(f, old->map->comp[c].osd_id);

		if (i != late && i >= 0 && osd_fixture_stop(&f->osds, i) == 0)
			stopped[nstopped++] = i;
	}
	CHECK_EQ(nstopped, JOURNAL_COPIES - 1);
	CHECK_EQ(read_all(f, "g1", &s), 0);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.count, next_seq - FIRST_SEQ);
	for (int k = 0; k < nstopped; k++) {
		CHECK_EQ(osd_fixture_restart(&f->osds, stopped[k]), 0);
		CHECK_EQ(osd_fixture_back_in_pool(f->mds.conns, f->osds.osds[stopped[k]].id), 0);
	}
}

static void test_a_copy_that_stops_answering_moves_the_journal_to_other_osds(struct mds_fixture *f)
{
	const struct pando_journal_options o = { .group = "g1", .term = 1 };
	struct pando_journal *j = NULL;
	struct journal_segment *segs = NULL;
	size_t n;
	int late;
	uint32_t away;

	CHECK_EQ(pando_journal_open(&f->mds, &o, &j), 0);
	if (!j)
		return;
	CHECK_EQ(commit_one(j), 0);
	n = segments(f, "g1", &segs);
	CHECK_EQ(n, 1);
	away = n ? segs[0].map->comp[1].osd_id : 0;
	late = fixture_index(f, away);
	CHECK(late >= 0);
	CHECK_EQ(freeze_process(f->osds.pids[late]), 0);
	CHECK_EQ(commit_one(j), 0); /* after the OSD timeout, in a new segment */
	CHECK_EQ(kill(f->osds.pids[late], SIGCONT), 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(commit_one(j), 0);
	pando_journal_close(j);
	journal_segments_free(segs, n);
	n = segments(f, "g1", &segs);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(segs[1].term, 1);
		CHECK_EQ(segs[1].first_seq, FIRST_SEQ + 1); /* the write that failed, whole */
		CHECK(!on_osd(&segs[1], away));
		read_through_the_late_copy(f, &segs[0], late);
	}
	journal_segments_free(segs, n);
}

static char *segment_value(const void *listing, const struct pando_storage_map *map)
{
	struct journal_segment s = *(const struct journal_segment *)listing;

	s.map = (struct pando_storage_map *)map;
	return journal_segment_format(&s);
}

/* The key's mod revision now; -1 when it is gone. */
static int64_t revision(struct etcd_client *c, const char *key)
{
	char *value = NULL;
	size_t len = 0;
	int64_t rev = -1;

	etcd_get(c, key, &value, &len, &rev);
	free(value);
	return rev;
}

/* Segment 1 of g2, while the OSD `away` is out: a rebuild made for a
 * listing that was written, or deleted, since it was read lists nothing
 * and leaves no copy behind. */
static void check_a_stale_listing_is_left_alone(struct mds_fixture *f, struct etcd_client *c,
						const struct journal_segment *seg)
{
	char prefix[128], key[160], *value = NULL;
	size_t len = 0, made = 9;
	int64_t rev = 0, stale;
	long objects = mds_fixture_journal_objects(f);

	journal_segment_prefix(f->mds.cfg.etcd_prefix, "g2", prefix, sizeof(prefix));
	snprintf(key, sizeof(key), "%s%016" PRIx64, prefix, seg->index);
	CHECK_EQ(etcd_get(c, key, &value, &len, &stale), 0);
	CHECK_EQ(etcd_put(c, key, value, len, 0), 0);
	CHECK_EQ(pando_journal_relist(&f->mds, c, key, stale, JOURNAL_OBJECT_BIT | seg->index,
				      seg->map, seg->index, segment_value, seg, &made),
		 -EEXIST);
	CHECK_EQ(made, 0);
	rev = revision(c, key);
	CHECK(rev > stale);
	CHECK_EQ(etcd_delete(c, key), 0);
	CHECK_EQ(pando_journal_relist(&f->mds, c, key, rev, JOURNAL_OBJECT_BIT | seg->index,
				      seg->map, seg->index, segment_value, seg, &made),
		 -EEXIST);
	CHECK_EQ(revision(c, key), -1);
	CHECK_EQ(mds_fixture_journal_objects(f), objects);
	CHECK_EQ(etcd_put(c, key, value, len, 0), 0);
	free(value);
}

/* After the writer left segment 1 (on away) for segment 2 (not on it):
 * segment 1's copy on away is rebuilt elsewhere, the same bytes, and the
 * journal reads whole with away stopped. */
static void check_rebuilt(struct mds_fixture *f, struct etcd_client *c, uint32_t away,
			  uint64_t first)
{
	struct journal_segment *segs = NULL;
	struct seen s = { .last = first - 1 };
	long objects = mds_fixture_journal_objects(f);
	size_t made = 0, n;
	int late = fixture_index(f, away);

	CHECK_EQ(pando_journal_rebuild(&f->mds, c, "g2", &made), 0);
	CHECK_EQ(made, 1);
	CHECK_EQ(mds_fixture_journal_objects(f), objects + 1);
	n = segments(f, "g2", &segs);
	CHECK_EQ(n, 2);
	for (size_t i = 0; i < n; i++)
		CHECK(!on_osd(&segs[i], away));
	if (n == 2)
		CHECK_EQ(mds_fixture_copies_same(f, segs[0].map), 1);
	CHECK_EQ(mds_fixture_log_find("cop"), 1);
	journal_segments_free(segs, n);
	CHECK_EQ(osd_fixture_stop(&f->osds, late), 0);
	CHECK_EQ(read_all(f, "g2", &s), 0);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.count, next_seq - first);
	CHECK_EQ(osd_fixture_restart(&f->osds, late), 0);
	CHECK_EQ(osd_fixture_back_in_pool(f->mds.conns, f->osds.osds[late].id), 0);
}

static void test_an_osd_out_has_its_journal_copies_rebuilt(struct mds_fixture *f)
{
	const struct pando_journal_options o = { .group = "g2", .term = 1 };
	struct etcd_options eo = { .endpoints = etcd.url };
	struct pando_journal *j = NULL;
	struct journal_segment *segs = NULL;
	struct etcd_client *c = NULL;
	uint64_t first = next_seq;
	uint32_t away = 0;
	size_t n;

	CHECK_EQ(etcd_client_new(&eo, &c), 0);
	CHECK_EQ(pando_journal_open(&f->mds, &o, &j), 0);
	if (!j || !c)
		return;
	for (int i = 0; i < 3; i++)
		CHECK_EQ(commit_one(j), 0);
	n = segments(f, "g2", &segs);
	CHECK_EQ(n, 1);
	if (n == 1)
		away = segs[0].map->comp[0].osd_id;
	CHECK_EQ(mds_fixture_mark_out(f, 1, away), 0);
	/* Idle, the writer leaves segment 1 within a second or so. */
	for (int i = 0; i < 50 && n < 2; i++) {
		journal_segments_free(segs, n);
		usleep(100 * 1000);
		n = segments(f, "g2", &segs);
	}
	CHECK_EQ(n, 2);
	CHECK_EQ(commit_one(j), 0); /* into segment 2 */
	journal_segments_free(segs, n);
	n = segments(f, "g2", &segs);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK(on_osd(&segs[0], away));
		CHECK(!on_osd(&segs[1], away));
		CHECK_EQ(segs[1].first_seq, next_seq - 1);
		check_a_stale_listing_is_left_alone(f, c, &segs[0]);
		mds_fixture_log_clear();
		check_rebuilt(f, c, away, first);
	}
	journal_segments_free(segs, n);
	pando_journal_close(j);
	etcd_client_free(c);
	CHECK_EQ(mds_fixture_mark_out(f, 2, 0), 0);
}

int main(void)
{
	struct mds_fixture f;

	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the journal needs one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	if (mds_fixture_start(&f, OSDS, tune) == 0) {
		test_a_copy_that_stops_answering_moves_the_journal_to_other_osds(&f);
		test_an_osd_out_has_its_journal_copies_rebuilt(&f);
	} else
		CHECK(!"the engine starts");
	mds_fixture_finish(&f, check_failures);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
