/* fsck_objects against three real pando-osd processes and a real namespace
 * store: a clean cluster reports nothing; an orphan object is found, and
 * removed only on repair, while a journal segment's object is left; a component missing from its OSD is found; a
 * stale component and one on an out OSD are short copies; an object longer
 * than its file is a detail, trimmed on repair; a pending intent is
 * finished on repair; a component outside its file's pool is found; an
 * OSD that does not answer is reported, and its
 * objects are not counted missing.  Each case has a store and a partition
 * of its own. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "byteorder.h"
#include "fsck_check.h"
#include "osd_fixture.h"
#include "pando/osd_ctl_client.h"
#include "pando/policy.h"
#include "pando/storage_map.h"

#define NOSDS 3
#define PART 40
#define MAP_MAX 256

static struct osd_fixture fx;
static struct osd_conns *conns;
static int cases;

/* One case: a fresh store, a fresh partition on every OSD, files in it. */
struct world {
	struct ns_store *s;
	uint64_t partition;
	char details[8][160];
	int ndetails;
	int notes;
};

/* One file mirrored on two OSDs: its inode and its objects' ids. */
struct file {
	uint64_t ino;
	uint32_t osd[2];
	uint64_t object[2];
};

static void on_detail(void *arg, const char *line)
{
	struct world *w = arg;

	fprintf(stderr, "  detail: %s\n", line);
	if (w->ndetails < 8)
		snprintf(w->details[w->ndetails++], sizeof(w->details[0]), "%s", line);
}

static void on_note(void *arg, const char *line)
{
	struct world *w = arg;

	fprintf(stderr, "  note: %s\n", line);
	w->notes++;
}

static void on_problem(void *arg, enum fsck_kind k, bool repaired, const char *line)
{
	fprintf(stderr, "  problem (%s%s): %s\n", fsck_kind_name(k), repaired ? ", repaired" : "",
		line);
}

static int osd_call_create(uint32_t osd, uint64_t partition, struct osd_ctl_create_item *it)
{
	int err = 0, res = 0;
	struct osd_ctl_client *c = osd_conns_get(conns, osd, &err);

	if (!c)
		return err;
	err = osd_ctl_objects_create(c, partition, it, 1, &res);
	osd_conns_result(conns, osd, err);
	return err ? err : res;
}

static void world_open(struct world *w)
{
	struct ns_options o = { .nosync = true };
	char path[160];

	memset(w, 0, sizeof(*w));
	w->partition = PART + (uint64_t)cases;
	snprintf(path, sizeof(path), "%s/store.%d", fx.root, cases++);
	CHECK_EQ(ns_format(path, &o), 0);
	CHECK_EQ(ns_open(path, &o, &w->s), 0);
	for (uint32_t id = 1; id <= NOSDS; id++) {
		int err = 0;
		struct osd_ctl_client *c = osd_conns_get(conns, id, &err);

		CHECK(c != NULL);
		if (!c)
			continue;
		err = osd_ctl_partition_create(c, w->partition);
		osd_conns_result(conns, id, err);
		CHECK_EQ(err, 0);
	}
}

/* The encoded RAID-1 map of f: one group, a copy on each of its OSDs. */
static size_t map_blob(const struct world *w, const struct file *f, uint8_t *buf)
{
	struct pando_map_shape shape = {
		.raid = PANDO_RAID1, .copies = 2, .data = 1, .stripe_unit = 65536, .visit_rows = 1
	};
	struct pando_storage_map *map = NULL;
	size_t len = 0;

	CHECK_EQ(pando_map_new(&shape, 1, 0, &map), 0);
	if (!map)
		return 0;
	map->partition_id = w->partition;
	for (int c = 0; c < 2; c++)
		*pando_map_component(map, 0, (uint32_t)c) =
			(struct pando_component){ f->osd[c], f->object[c] };
	CHECK_EQ(pando_map_encode(map, buf, MAP_MAX, &len), 0);
	pando_map_free(map);
	return len;
}

/* Two fresh ids from the store, an object for each on its OSD, owned by a
 * new empty file whose map names them. */
static struct file make_file(struct world *w, const char *name, uint32_t osd0, uint32_t osd1)
{
	struct ns_new in = { .mode = 0644 };
	struct file f = { .osd = { osd0, osd1 } };
	struct ns_attr a = { 0 };
	uint8_t blob[MAP_MAX];
	uint64_t first = 0;

	CHECK_EQ(ns_create(w->s, NS_ROOT_INO, name, &in, NS_GUARDED, NULL, &a, NULL), 0);
	CHECK_EQ(ns_ids_reserve(w->s, 2, &first), 0);
	f.ino = a.ino;
	for (int c = 0; c < 2; c++) {
		struct osd_ctl_create_item it = { .object = first + (uint64_t)c,
						  .owner_file = f.ino,
						  .component = (uint32_t)c };

		f.object[c] = it.object;
		CHECK_EQ(osd_call_create(f.osd[c], w->partition, &it), 0);
	}
	CHECK_EQ(ns_map_set(w->s, f.ino, 0, blob, map_blob(w, &f, blob), NULL, 0, 0), 0);
	return f;
}

static struct fsck_result run(struct world *w, bool repair, const uint32_t *out, size_t nout)
{
	const struct fsck_options o = { .repair = repair, .out = out, .nout = nout };
	const struct fsck_hooks h = {
		.arg = w, .problem = on_problem, .detail = on_detail, .note = on_note
	};
	struct cluster_map map = fx.map; /* the case's partition is the cluster's */
	struct fsck_result res;

	map.partition = w->partition;
	w->ndetails = w->notes = 0;
	CHECK_EQ(fsck_objects(w->s, &map, conns, &o, &h, &res), 0);
	return res;
}

static uint64_t problems(const struct fsck_result *r)
{
	uint64_t n = 0;

	for (int k = 0; k < FSCK_NKINDS; k++)
		n += r->t[k].found;
	return n;
}

/* Whether the object is on its OSD, and its logical length. */
static bool object_length(const struct world *w, uint32_t osd, uint64_t object, uint64_t *length)
{
	struct osd_ctl_attr_key key = { 1, 1 }; /* page 1: logical length */
	struct osd_ctl_obj_id id = { w->partition, object };
	struct osd_ctl_attr a;
	size_t n = 0;
	int err = 0;
	struct osd_ctl_client *c = osd_conns_get(conns, osd, &err);

	if (!c)
		return false;
	err = osd_ctl_getattr(c, &id, &key, 1, &a, 1, &n);
	osd_conns_result(conns, osd, err);
	if (!err && n == 1 && a.len == 8)
		*length = get_be64(a.value);
	return !err;
}

static void test_clean_cluster_reports_nothing(void)
{
	struct world w;
	struct fsck_result r;

	world_open(&w);
	make_file(&w, "a", 1, 2);
	make_file(&w, "b", 2, 3);
	r = run(&w, false, NULL, 0);
	CHECK_EQ(problems(&r), 0);
	CHECK_EQ(r.listed, 4);
	CHECK_EQ(r.intents, 0);
	CHECK_EQ(w.notes, 1); /* every file has every copy */
	ns_close(w.s);
}

static void test_orphan_object_is_found_and_removed_only_on_repair(void)
{
	struct osd_ctl_create_item it = { .object = 900, .owner_file = 77 };
	struct world w;
	struct fsck_result r;
	uint64_t len;

	world_open(&w);
	make_file(&w, "a", 1, 2);
	CHECK_EQ(osd_call_create(3, w.partition, &it), 0);
	r = run(&w, false, NULL, 0);
	CHECK_EQ(r.t[FSCK_ORPHAN_OBJECT].found, 1);
	CHECK_EQ(r.t[FSCK_ORPHAN_OBJECT].repaired, 0);
	CHECK_EQ(problems(&r), 1);
	CHECK(object_length(&w, 3, 900, &len));
	r = run(&w, true, NULL, 0);
	CHECK_EQ(r.t[FSCK_ORPHAN_OBJECT].found, 1);
	CHECK_EQ(r.t[FSCK_ORPHAN_OBJECT].repaired, 1);
	CHECK(!object_length(&w, 3, 900, &len));
	r = run(&w, false, NULL, 0);
	CHECK_EQ(problems(&r), 0);
	ns_close(w.s);
}

/* The journal's segments are named by no map: they are counted, not
 * orphans, and repair leaves them. */
static void test_a_journal_object_is_no_orphan_and_is_left(void)
{
	struct osd_ctl_create_item it = { .object = PANDO_JOURNAL_OBJECT_BIT | 5 << 2,
					  .owner_file = PANDO_JOURNAL_OBJECT_BIT | 5 };
	struct world w;
	struct fsck_result r;
	uint64_t len;

	world_open(&w);
	make_file(&w, "a", 1, 2);
	CHECK_EQ(osd_call_create(2, w.partition, &it), 0);
	r = run(&w, true, NULL, 0);
	CHECK_EQ(problems(&r), 0);
	CHECK_EQ(r.journal, 1);
	CHECK(object_length(&w, 2, it.object, &len));
	ns_close(w.s);
}

static void test_component_missing_on_its_osd_is_found(void)
{
	struct world w;
	struct fsck_result r;
	struct file f;
	struct osd_ctl_client *c;
	int err = 0, res = 0;

	world_open(&w);
	f = make_file(&w, "a", 1, 2);
	c = osd_conns_get(conns, 2, &err);
	CHECK(c != NULL);
	if (c) {
		err = osd_ctl_objects_remove(c, w.partition, &f.object[1], 1, &res);
		osd_conns_result(conns, 2, err);
	}
	CHECK_EQ(err, 0);
	CHECK_EQ(res, 0);
	r = run(&w, true, NULL, 0);
	CHECK_EQ(r.t[FSCK_MISSING_OBJECT].found, 1);
	CHECK_EQ(r.t[FSCK_MISSING_OBJECT].repaired, 0); /* rebuild's work, not fsck's */
	CHECK_EQ(problems(&r), 1);
	ns_close(w.s);
}

static void test_stale_component_is_a_short_copy(void)
{
	struct world w;
	struct fsck_result r;
	struct file f;

	world_open(&w);
	f = make_file(&w, "a", 1, 2);
	CHECK_EQ(ns_damage_add(w.s, f.ino, 2, -5, 0, true), 0);
	r = run(&w, false, NULL, 0);
	CHECK_EQ(r.t[FSCK_STALE_COMPONENT].found, 1);
	CHECK_EQ(problems(&r), 1);
	/* A failure that did not miss a write is not a short copy. */
	CHECK_EQ(ns_damage_clear(w.s, f.ino, 2), 0);
	CHECK_EQ(ns_damage_add(w.s, f.ino, 2, -5, 0, false), 0);
	r = run(&w, false, NULL, 0);
	CHECK_EQ(problems(&r), 0);
	ns_close(w.s);
}

/* Bytes past the file's size are a tail, not a problem: a detail line,
 * trimmed on repair. */
static void test_object_longer_than_its_file_is_trimmed_on_repair(void)
{
	static const char tail[100] = "written, never committed";
	struct osd_ctl_obj_id id;
	struct world w;
	struct fsck_result r;
	struct file f;
	struct osd_ctl_client *c;
	uint64_t len = 0;
	int err = 0;

	world_open(&w);
	f = make_file(&w, "a", 1, 2);
	id = (struct osd_ctl_obj_id){ w.partition, f.object[0] };
	c = osd_conns_get(conns, 1, &err);
	CHECK(c != NULL);
	if (c) {
		err = osd_ctl_write(c, &id, 0, tail, sizeof(tail), OSD_CTL_FILE_SYNC, NULL);
		osd_conns_result(conns, 1, err);
	}
	CHECK_EQ(err, 0);
	r = run(&w, false, NULL, 0);
	CHECK_EQ(problems(&r), 0);
	CHECK_EQ(w.ndetails, 4); /* the tail, then each OSD listed */
	CHECK(strstr(w.details[0], "past the file's size") != NULL);
	CHECK(object_length(&w, 1, f.object[0], &len) && len == sizeof(tail));
	run(&w, true, NULL, 0);
	CHECK(strstr(w.details[0], "truncated to 0") != NULL);
	CHECK(object_length(&w, 1, f.object[0], &len) && len == 0);
	ns_close(w.s);
}

/* The objects of an unlinked file are owed removal: a pending intent, not
 * a problem, and gone on repair. */
static void test_pending_intent_is_finished_on_repair(void)
{
	struct world w;
	struct fsck_result r;
	struct file f;
	uint64_t len;

	world_open(&w);
	f = make_file(&w, "a", 1, 2);
	CHECK_EQ(ns_unlink(w.s, NS_ROOT_INO, "a"), 0); /* the map becomes an intent */
	r = run(&w, false, NULL, 0);
	CHECK_EQ(r.intents, 1);
	CHECK_EQ(problems(&r), 0);
	r = run(&w, true, NULL, 0);
	CHECK_EQ(r.intents_done, 1);
	CHECK(!object_length(&w, 1, f.object[0], &len));
	CHECK(!object_length(&w, 2, f.object[1], &len));
	r = run(&w, false, NULL, 0);
	CHECK_EQ(r.intents, 0);
	CHECK_EQ(problems(&r), 0);
	ns_close(w.s);
}

/* OSDs 1 and 2 in pool "fast", 3 in none: a file of the pool with a
 * component on OSD 3 has it outside; one without a pool does not. */
static void test_component_outside_its_pool_is_found(void)
{
	struct cluster_map_osd osds[NOSDS];
	struct cluster_map map = fx.map;
	struct pando_policy p = { .scheme = PANDO_RAID1, .copies = 2, .pool = "fast" };
	const struct fsck_options o = { 0 };
	const struct fsck_hooks h = { .problem = on_problem };
	struct fsck_result r;
	uint8_t blob[PANDO_POLICY_MAX_LEN];
	struct world w;
	struct file in, out;
	size_t len = 0;

	world_open(&w);
	memcpy(osds, fx.map.osds, sizeof(osds));
	snprintf(osds[0].pool, sizeof(osds[0].pool), "fast");
	snprintf(osds[1].pool, sizeof(osds[1].pool), "fast");
	map.osds = osds;
	map.partition = w.partition;
	CHECK_EQ(pando_policy_encode(&p, blob, sizeof(blob), &len), 0);
	in = make_file(&w, "in", 1, 2);
	out = make_file(&w, "out", 2, 3);
	make_file(&w, "any", 1, 3);
	CHECK_EQ(ns_policy_set(w.s, in.ino, blob, len), 0);
	CHECK_EQ(ns_policy_set(w.s, out.ino, blob, len), 0);
	CHECK_EQ(fsck_objects(w.s, &map, conns, &o, &h, &r), 0);
	CHECK_EQ(r.t[FSCK_OUTSIDE_POOL].found, 1);
	CHECK_EQ(problems(&r), 1);
	ns_close(w.s);
}

/* Last: OSD 3 stops for good.  Unreachable is a problem, unless the
 * cluster map took it out; its objects are then short copies. */
static void test_osd_down_is_reported_not_a_crash(void)
{
	static const uint32_t out[] = { 3 };
	struct world w;
	struct fsck_result r;

	world_open(&w);
	make_file(&w, "a", 1, 2);
	make_file(&w, "b", 2, 3);
	CHECK_EQ(osd_fixture_stop(&fx, 2), 0);
	r = run(&w, false, NULL, 0);
	CHECK_EQ(r.t[FSCK_UNREACHABLE_OSD].found, 1);
	CHECK_EQ(r.t[FSCK_MISSING_OBJECT].found, 0);
	CHECK_EQ(problems(&r), 1);
	CHECK_EQ(r.listed, 3);
	r = run(&w, false, out, 1);
	CHECK_EQ(r.t[FSCK_UNREACHABLE_OSD].found, 0);
	CHECK_EQ(r.t[FSCK_OUT_COMPONENT].found, 1);
	CHECK_EQ(problems(&r), 1);
	CHECK_EQ(w.notes, 2); /* out and not answering; short copies */
	ns_close(w.s);
}

int main(void)
{
	CHECK_EQ(osd_fixture_start(&fx, NOSDS, PART), 0);
	CHECK_EQ(osd_fixture_pool(&fx, &conns), 0);
	if (!check_failures) {
		test_clean_cluster_reports_nothing();
		test_orphan_object_is_found_and_removed_only_on_repair();
		test_a_journal_object_is_no_orphan_and_is_left();
		test_component_missing_on_its_osd_is_found();
		test_stale_component_is_a_short_copy();
		test_object_longer_than_its_file_is_trimmed_on_repair();
		test_pending_intent_is_finished_on_repair();
		test_component_outside_its_pool_is_found();
		test_osd_down_is_reported_not_a_crash();
	}
	osd_conns_free(conns);
	CHECK_EQ(osd_fixture_finish(&fx, check_failures), 0);
	CHECK_DONE();
}
