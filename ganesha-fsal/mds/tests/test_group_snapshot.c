/* The group's snapshot (group_snapshot.h), on real OSDs and etcd, with
 * the engine the active of its group (pando_group_join): asked by a
 * standby with no store, the active puts a snapshot of its journaled
 * store on three copies and answers the request; the standby's Db_Path
 * becomes a store at the active's seq with every file, and no working
 * copy is left on either side.  A copy whose bytes were changed is passed
 * over for the next; with every copy changed, nothing is unpacked.  A
 * second request replaces the snapshot, and the one before leaves the
 * OSDs.  Copies of the snapshot and of the journal on an OSD that goes out
 * are made anew elsewhere. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "group_snapshot.h"
#include "journal.h"
#include "journal_segment.h"
#include "mds_fixture.h"
#include "ns_store.h"
#include "objio.h"
#include "snapshot_pack.h"

#define FILES 30

static struct etcd_fixture etcd;
static char group[] = "g1";

static void tune(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
	cfg->mds_group = group;
}

struct world {
	struct mds_fixture f;
	struct etcd_client *etcd;
	struct pando_mds b; /* the standby: the active's OSDs, its own Db_Path */
	char b_store[160], other[160];
};

static bool never(void)
{
	return false;
}

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static int create_files(struct world *w)
{
	struct ns_attr a;
	char name[32];
	int rc = 0;

	for (int i = 0; !rc && i < FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		rc = mds_fixture_create(&w->f, name, &a);
	}
	return rc;
}

/* The snapshot etcd lists: its map, index and seq. */
static struct pando_storage_map *stored(struct world *w, uint64_t *index, uint64_t *seq)
{
	struct group_snapshot_listing l;
	char key[64], *value = NULL;
	size_t len = 0;

	snprintf(key, sizeof(key), "%sgroups/g1/snapshot", w->f.prefix);
	CHECK_EQ(etcd_get(w->etcd, key, &value, &len, NULL), 0);
	CHECK_EQ(group_snapshot_listing_parse(value, len, &l), 0);
	*index = l.index;
	*seq = l.seq;
	free(value);
	return l.map;
}

/* Every file of the active in the store at path, and its seq. */
static void check_store(const char *path, uint64_t seq)
{
	struct ns_store *s = NULL;
	struct ns_attr a;
	uint64_t applied = 0;
	char name[32];

	CHECK_EQ(ns_open(path, &(struct ns_options){ 0 }, &s), 0);
	if (!s)
		return;
	CHECK_EQ(ns_applied_seq(s, &applied), 0);
	CHECK_EQ(applied, seq);
	for (int i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(ns_lookup(s, NS_ROOT_INO, name, &a), 0);
	}
	ns_close(s);
}

static void test_a_standby_with_no_store_starts_from_the_actives_snapshot(struct world *w)
{
	struct pando_storage_map *map;
	char key[64], wip[200];
	uint64_t seq = 0, index = 0, listed = 0;
	char *value = NULL;
	size_t len = 0;

	CHECK_EQ(group_snapshot_fetch(&w->b, "b", never, &seq), 0);
	CHECK(seq > FILES);
	check_store(w->b_store, seq);
	map = stored(w, &index, &listed);
	CHECK_EQ(index, 1);
	CHECK_EQ(listed, seq);
	pando_map_free(map);
	snprintf(key, sizeof(key), "%sgroups/g1/snapshot_wanted", w->f.prefix);
	CHECK_EQ(etcd_get(w->etcd, key, &value, &len, NULL), -ENOENT);
	snprintf(wip, sizeof(wip), "%s.snapshot", w->f.db_path);
	CHECK(!exists(wip));
	snprintf(wip, sizeof(wip), "%s.fetch", w->b_store);
	CHECK(!exists(wip));
	CHECK_EQ(mds_fixture_log_find("snapshot 1 at seq"), 1);
	CHECK_EQ(mds_fixture_log_find("b starts from snapshot at seq"), 1);
}

/* A member that no active answers takes the listed snapshot only while
 * the journal holds every record after it: here its first segment is
 * made to start past it, as a trim would, and back. */
static void test_a_snapshot_is_taken_unasked_only_while_the_journal_follows_it(struct world *w)
{
	uint64_t index = 0, listed = 0, seq = 0, first;
	struct pando_storage_map *map = stored(w, &index, &listed);
	struct journal_segment *segs = NULL;
	char prefix[320], dir[200];
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s.covered", w->other);
	CHECK_EQ(journal_segment_prefix(w->f.mds.cfg.etcd_prefix, "g1", prefix, sizeof(prefix)), 0);
	CHECK_EQ(journal_segments_list(w->etcd, prefix, &segs, &n), 0);
	if (n == 0 || !map) {
		CHECK(!"a journal segment and a listed snapshot");
		pando_map_free(map);
		return;
	}
	first = segs[0].first_seq;
	CHECK(first <= listed + 1);
	segs[0].first_seq = listed + 2;
	CHECK_EQ(journal_segment_put(w->etcd, prefix, &segs[0]), 0);
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, index, true, dir, &seq), -EAGAIN);
	CHECK(!exists(dir));
	segs[0].first_seq = first;
	CHECK_EQ(journal_segment_put(w->etcd, prefix, &segs[0]), 0);
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, index, true, dir, &seq), 0);
	CHECK_EQ(seq, listed);
	snapshot_dir_remove(dir);
	journal_segments_free(segs, n);
	pando_map_free(map);
}

static void spoil(struct world *w, const struct pando_storage_map *map, int c)
{
	struct objio io = { .conns = w->f.mds.conns };

	CHECK_EQ(objio_component_write(&io, map->partition_id, &map->comp[c], 40, "spoilt", 6), 0);
}

static void test_a_copy_whose_bytes_changed_is_passed_over(struct world *w)
{
	uint64_t index = 0, seq = 0, listed = 0;
	struct pando_storage_map *map = stored(w, &index, &listed);

	if (!map)
		return;
	CHECK_EQ(index, 1);
	spoil(w, map, 0);
	mds_fixture_log_clear();
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, 1, false, w->other, &seq), 0);
	CHECK_EQ(seq, listed);
	check_store(w->other, seq);
	CHECK_EQ(mds_fixture_log_find("snapshot 1: the copy on OSD"), 1);
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, 1, false, w->other, &seq), -EEXIST);
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, 2, false, w->other, &seq), -EAGAIN);
	spoil(w, map, 1);
	spoil(w, map, 2);
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, 1, false, "/nonexistent/never", &seq), -ENOENT);
	snprintf(w->other + strlen(w->other), 8, ".2");
	CHECK_EQ(group_snapshot_get(&w->b, w->etcd, 1, false, w->other, &seq), -EINVAL);
	CHECK(!exists(w->other));
	pando_map_free(map);
}

/* Every active's trim floor keeps the journal after the listed snapshot
 * for the hold, whoever made it. */
static void test_the_listed_snapshot_holds_the_journal_for_the_hold(struct world *w)
{
	uint64_t index = 0, listed = 0, floor = UINT64_MAX;
	struct pando_storage_map *map = stored(w, &index, &listed);
	int64_t now = time(NULL);

	CHECK_EQ(group_snapshot_hold(&w->b, w->etcd, now, &floor), 0);
	CHECK_EQ(floor, listed);
	floor = UINT64_MAX;
	CHECK_EQ(group_snapshot_hold(&w->b, w->etcd, now + GROUP_SNAPSHOT_HOLD_S + 1, &floor), 0);
	CHECK_EQ(floor, UINT64_MAX);
	floor = listed - 1;
	CHECK_EQ(group_snapshot_hold(&w->b, w->etcd, now, &floor), 0);
	CHECK_EQ(floor, listed - 1);
	pando_map_free(map);
}

static void test_a_second_request_replaces_the_snapshot_before(struct world *w)
{
	struct objio io = { .conns = w->f.mds.conns };
	uint64_t index = 0, seq = 0, before = 0;
	struct pando_storage_map *old = stored(w, &index, &before), *map;
	struct ns_attr a;

	if (!old)
		return;
	CHECK_EQ(mds_fixture_create(&w->f, "later", &a), 0);
	snapshot_dir_remove(w->b_store);
	CHECK_EQ(group_snapshot_fetch(&w->b, "b", never, &seq), 0);
	CHECK(seq > before);
	map = stored(w, &index, &before);
	CHECK_EQ(index, 2);
	CHECK_EQ(before, seq);
	/* The first snapshot's copies are gone from the OSDs. */
	CHECK_EQ(objio_component_write(&io, old->partition_id, &old->comp[0], 0, "x", 1), -ENOENT);
	pando_map_free(old);
	pando_map_free(map);
}

/* The group's segments as etcd lists them now. */
static size_t listed(struct world *w, struct journal_segment **segs)
{
	char prefix[64];
	size_t n = 0;

	*segs = NULL;
	journal_segment_prefix(w->f.prefix, "g1", prefix, sizeof(prefix));
	CHECK_EQ(journal_segments_list(w->etcd, prefix, segs, &n), 0);
	return n;
}

static bool names(const struct pando_storage_map *map, uint32_t osd)
{
	for (int c = 0; map && c < JOURNAL_COPIES; c++)
		if (map->comp[c].osd_id == osd)
			return true;
	return false;
}

/* Whether the snapshot and every segment are off osd, on copies that
 * hold the same bytes. */
static bool off_and_whole(struct world *w, uint32_t osd)
{
	uint64_t index = 0, seq = 0;
	struct pando_storage_map *snap = stored(w, &index, &seq);
	struct journal_segment *segs = NULL;
	size_t n = listed(w, &segs);
	bool off = snap && !names(snap, osd) && n > 0;

	for (size_t i = 0; off && i < n; i++)
		off = !names(segs[i].map, osd);
	if (off) {
		CHECK_EQ(mds_fixture_copies_same(&w->f, snap), 1);
		for (size_t i = 0; i < n; i++)
			CHECK_EQ(mds_fixture_copies_same(&w->f, segs[i].map), 1);
	}
	pando_map_free(snap);
	journal_segments_free(segs, n);
	return off;
}

/* An OSD that both the snapshot and the journal's segment use goes out:
 * the writer leaves the segment for one elsewhere, and within a few of
 * the active's rebuild passes every copy that was on it is on another
 * OSD, with the same bytes. */
static void test_copies_on_an_osd_that_goes_out_are_rebuilt(struct world *w)
{
	uint64_t index = 0, seq = 0;
	struct pando_storage_map *snap = stored(w, &index, &seq);
	struct journal_segment *segs = NULL;
	size_t n = listed(w, &segs);
	uint32_t away = 0;
	struct ns_attr a;
	bool off = false;

	for (int c = 0; snap && n && c < JOURNAL_COPIES; c++)
		if (names(segs[n - 1].map, snap->comp[c].osd_id))
			away = snap->comp[c].osd_id;
	CHECK(away != 0);
	journal_segments_free(segs, n);
	pando_map_free(snap);
	/* A record after the snapshot: its hold keeps the segment from a trim. */
	CHECK_EQ(mds_fixture_create(&w->f, "before-out", &a), 0);
	CHECK_EQ(mds_fixture_mark_out(&w->f, 1, away), 0);
	mds_fixture_log_clear();
	CHECK_EQ(mds_fixture_create(&w->f, "after-out", &a), 0);
	CHECK_EQ(mds_fixture_log_find("has a copy on an OSD that is out"), 1);
	for (int i = 0; i < 60 && !(off = off_and_whole(w, away)); i++)
		usleep(250 * 1000);
	CHECK(off);
	CHECK(mds_fixture_log_find("rebuilt, now on OSDs") >= 2);
	CHECK_EQ(mds_fixture_mark_out(&w->f, 2, 0), 0);
}

int main(void)
{
	static struct world w;

	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the group's snapshot needs one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	if (mds_fixture_start(&w.f, 4, tune) == 0 && create_files(&w) == 0 &&
	    pando_etcd_client_new(&w.f.mds, 2000, "the test's", &w.etcd) == 0) {
		w.b = w.f.mds;
		snprintf(w.b_store, sizeof(w.b_store), "%s/b-store", w.f.osds.root);
		snprintf(w.other, sizeof(w.other), "%s/other", w.f.osds.root);
		w.b.cfg.db_path = w.b_store;
		test_a_standby_with_no_store_starts_from_the_actives_snapshot(&w);
		test_a_snapshot_is_taken_unasked_only_while_the_journal_follows_it(&w);
		test_a_copy_whose_bytes_changed_is_passed_over(&w);
		test_the_listed_snapshot_holds_the_journal_for_the_hold(&w);
		test_a_second_request_replaces_the_snapshot_before(&w);
		test_copies_on_an_osd_that_goes_out_are_rebuilt(&w);
	} else {
		CHECK(!"the engine starts as a group's active");
	}
	if (w.etcd)
		etcd_client_free(w.etcd);
	mds_fixture_finish(&w.f, check_failures);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
