/* The object pool (Object_Pool > 0): maps made ahead, their objects
 * created and named by intents of inode 0.  An empty file moving to
 * objects claims one, with no OSD round trip (it works with every OSD
 * down); a file with a storage policy places its own map; the pool fills
 * again and stamps the claimed objects with their file; what is left in
 * it at close is the reaper's at the next start, and no object leaks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mds_fixture.h"
#include "objio.h"
#include "pando/policy.h"

#define POOL 4
#define WAIT_MS 10000
#define POLL_US 20000
#define MAX_SEEN 16

/* The pool's intents (inode 0) as the store lists them. */
struct pooled {
	int n;
	uint64_t id[MAX_SEEN];
	uint8_t *blob[MAX_SEEN];
	size_t len[MAX_SEEN];
};

static int see(void *arg, const struct ns_intent *in)
{
	struct pooled *p = arg;

	if (in->ino != 0 || p->n == MAX_SEEN)
		return 0;
	p->blob[p->n] = malloc(in->len);
	if (!p->blob[p->n])
		return 1;
	memcpy(p->blob[p->n], in->blob, in->len);
	p->len[p->n] = in->len;
	p->id[p->n++] = in->id;
	return 0;
}

static void pooled_free(struct pooled *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->blob[i]);
	p->n = 0;
}

static void pooled_list(struct mds_fixture *f, struct pooled *p)
{
	memset(p, 0, sizeof(*p));
	CHECK_EQ(ns_intent_list(f->mds.ns, 0, see, p), 0);
}

/* The index of the entry whose map is blob, or -1. */
static int pooled_find(const struct pooled *p, const void *blob, size_t len)
{
	for (int i = 0; i < p->n; i++)
		if (p->len[i] == len && memcmp(p->blob[i], blob, len) == 0)
			return i;
	return -1;
}

static bool pooled_has_id(const struct pooled *p, uint64_t id)
{
	for (int i = 0; i < p->n; i++)
		if (p->id[i] == id)
			return true;
	return false;
}

/* Whether every object of the encoded map answers a GETATTR with want
 * (0: it is there; -ENOENT: its OSD has no such object). */
static bool objects_answer(struct mds_fixture *f, const uint8_t *blob, size_t len, int want)
{
	struct objio io = { .conns = f->mds.conns };
	struct pando_storage_map *map;
	bool all = true;

	if (pando_map_decode(blob, len, &map) != 0)
		return false;
	for (uint32_t c = 0; all && c < pando_map_width(map) * map->groups; c++) {
		uint64_t n = 0;

		all = objio_component_length(&io, map->partition_id, &map->comp[c], &n) == want;
	}
	pando_map_free(map);
	return all;
}

/* Until want entries are made (intent and objects); *p holds them. */
static bool wait_pool_full(struct mds_fixture *f, struct pooled *p, int want)
{
	for (int waited = 0;; waited += POLL_US / 1000) {
		int made = 0;

		pooled_list(f, p);
		for (int i = 0; i < p->n; i++)
			made += objects_answer(f, p->blob[i], p->len[i], 0);
		if (made == want || waited >= WAIT_MS)
			return made == want;
		pooled_free(p);
		usleep(POLL_US);
	}
}

static void pool_of_four(struct pando_mds_config *cfg)
{
	cfg->object_pool = POOL;
}

/* The file's encoded map, malloc'd. */
static void *map_of(struct mds_fixture *f, uint64_t ino, size_t *len)
{
	void *blob = NULL;

	*len = 0;
	CHECK_EQ(ns_map_get(f->mds.ns, ino, &blob, len), 0);
	return blob;
}

static void test_an_empty_file_claims_a_pooled_map_with_every_osd_down(void)
{
	struct mds_fixture f;
	struct pooled p;
	struct ns_attr a;
	void *blob;
	size_t len;
	int i;

	CHECK_EQ(mds_fixture_start(&f, 2, pool_of_four), 0);
	CHECK(wait_pool_full(&f, &p, POOL));
	CHECK_EQ(osd_fixture_stop(&f.osds, 0), 0);
	CHECK_EQ(osd_fixture_stop(&f.osds, 1), 0);
	/* A move that makes its objects fails now (one inline byte: no claim). */
	CHECK_EQ(mds_fixture_create(&f, "one-byte", &a), 0);
	CHECK_EQ(ns_write(f.mds.ns, a.ino, 0, "x", 1, true, NULL, &a), 0);
	CHECK(pando_objects_move(&f.mds, a.ino) != 0);
	CHECK_EQ(mds_fixture_create(&f, "empty", &a), 0);
	CHECK_EQ(pando_objects_move(&f.mds, a.ino), 0);
	CHECK_EQ(ns_getattr(f.mds.ns, a.ino, &a), 0);
	CHECK(a.objects);
	blob = map_of(&f, a.ino, &len);
	i = pooled_find(&p, blob, len);
	CHECK(i >= 0);
	/* Claimed: the map owns the objects, the intent went with the claim. */
	if (i >= 0)
		CHECK_EQ(ns_intent_exists(f.mds.ns, p.id[i]), 0);
	free(blob);
	pooled_free(&p);
	mds_fixture_finish(&f, check_failures);
}

/* A policy the export's configuration would not give (RAID-1, 64 KiB
 * units), so its map cannot be a pooled one. */
static void set_policy(struct mds_fixture *f, uint64_t ino)
{
	struct pando_policy pol = { .scheme = PANDO_RAID1, .copies = 2, .stripe_unit = 65536 };
	uint8_t buf[PANDO_POLICY_MAX_LEN];
	size_t len = 0;

	CHECK_EQ(pando_policy_encode(&pol, buf, sizeof(buf), &len), 0);
	CHECK_EQ(ns_policy_set(f->mds.ns, ino, buf, len), 0);
}

static void test_a_file_with_a_policy_places_its_own_map(void)
{
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	struct pooled p;
	struct ns_attr a;
	void *blob;
	size_t len;

	CHECK_EQ(mds_fixture_start(&f, 2, pool_of_four), 0);
	CHECK(wait_pool_full(&f, &p, POOL));
	CHECK_EQ(mds_fixture_create(&f, "policy", &a), 0);
	set_policy(&f, a.ino);
	CHECK_EQ(pando_objects_move(&f.mds, a.ino), 0);
	blob = map_of(&f, a.ino, &len);
	CHECK_EQ(pooled_find(&p, blob, len), -1);
	CHECK_EQ(pando_map_load(&f.mds, a.ino, &map), 0);
	if (map)
		CHECK_EQ(map->shape.stripe_unit, 65536);
	for (int i = 0; i < p.n; i++)
		CHECK(pando_object_pool_owns(f.mds.object_pool, p.id[i]));
	pando_map_free(map);
	free(blob);
	pooled_free(&p);
	mds_fixture_finish(&f, check_failures);
}

struct owner_args {
	struct osd_ctl_obj_id id;
	uint64_t owner;
};

static int owner_fn(struct osd_ctl_client *c, void *arg)
{
	static const struct osd_ctl_attr_key key = { .page = 1, .number = 5 };
	struct owner_args *a = arg;
	struct osd_ctl_attr attr;
	size_t n = 0;
	int rc = osd_ctl_getattr(c, &a->id, &key, 1, &attr, 1, &n);

	if (!rc && (n != 1 || attr.len != 8))
		rc = -EPROTO;
	a->owner = 0;
	for (int i = 0; !rc && i < 8; i++)
		a->owner = a->owner << 8 | attr.value[i];
	return rc;
}

/* Whether every object of the file's map carries the file as owner. */
static bool owned_by(struct mds_fixture *f, uint64_t ino)
{
	struct pando_storage_map *map;
	bool all = true;

	if (pando_map_load(&f->mds, ino, &map) != 0)
		return false;
	for (uint32_t c = 0; all && c < pando_map_width(map) * map->groups; c++) {
		struct owner_args a = { { map->partition_id, map->comp[c].object_id }, 0 };

		all = osd_conns_call(f->mds.conns, map->comp[c].osd_id, owner_fn, &a) == 0 &&
		      a.owner == ino;
	}
	pando_map_free(map);
	return all;
}

static bool wait_owned_by(struct mds_fixture *f, uint64_t ino)
{
	for (int waited = 0; waited < WAIT_MS && !owned_by(f, ino); waited += POLL_US / 1000)
		usleep(POLL_US);
	return owned_by(f, ino);
}

static void test_the_pool_refills_and_stamps_claimed_objects(void)
{
	uint64_t ino[POOL - 1];
	struct pooled before, after;
	struct mds_fixture f;
	int fresh = 0;

	CHECK_EQ(mds_fixture_start(&f, 2, pool_of_four), 0);
	CHECK(wait_pool_full(&f, &before, POOL));
	for (int i = 0; i < POOL - 1; i++) {
		char name[16];
		struct ns_attr a;

		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(mds_fixture_create(&f, name, &a), 0);
		CHECK_EQ(pando_objects_move(&f.mds, a.ino), 0);
		ino[i] = a.ino;
	}
	CHECK(wait_pool_full(&f, &after, POOL));
	for (int i = 0; i < after.n; i++)
		fresh += !pooled_has_id(&before, after.id[i]);
	CHECK_EQ(fresh, POOL - 1);
	for (int i = 0; i < POOL - 1; i++)
		CHECK(wait_owned_by(&f, ino[i]));
	pooled_free(&before);
	pooled_free(&after);
	mds_fixture_finish(&f, check_failures);
}

static int statfs_fn(struct osd_ctl_client *c, void *arg)
{
	return osd_ctl_statfs(c, arg);
}

/* Objects on every OSD together. */
static uint64_t objects_on_osds(struct mds_fixture *f)
{
	uint64_t n = 0;

	for (int i = 0; i < f->osds.n; i++) {
		struct osd_ctl_statfs st = { 0 };

		CHECK_EQ(osd_conns_call(f->mds.conns, f->osds.osds[i].id, statfs_fn, &st), 0);
		n += st.objects;
	}
	return n;
}

static bool wait_no_pool_intents(struct mds_fixture *f)
{
	for (int waited = 0;; waited += POLL_US / 1000) {
		struct pooled p;
		int left;

		pooled_list(f, &p);
		left = p.n;
		pooled_free(&p);
		if (left == 0 || waited >= WAIT_MS)
			return left == 0;
		usleep(POLL_US);
	}
}

/* Reopened without a pool, so only the reaper touches the objects. */
static void test_close_leaves_the_unused_entries_to_the_next_starts_reaper(void)
{
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	struct pooled p;
	struct ns_attr a;
	void *blob;
	size_t len;
	int kept;

	CHECK_EQ(mds_fixture_start(&f, 2, pool_of_four), 0);
	CHECK(wait_pool_full(&f, &p, POOL));
	CHECK_EQ(mds_fixture_create(&f, "kept", &a), 0);
	CHECK_EQ(pando_objects_move(&f.mds, a.ino), 0);
	blob = map_of(&f, a.ino, &len);
	kept = pooled_find(&p, blob, len);
	CHECK(kept >= 0);
	f.mds.cfg.object_pool = 0;
	CHECK_EQ(mds_fixture_reopen(&f), 0);
	CHECK(wait_no_pool_intents(&f));
	for (int i = 0; i < p.n; i++)
		CHECK(objects_answer(&f, p.blob[i], p.len[i], i == kept ? 0 : -ENOENT));
	/* The entry made while the claim refilled the pool went too. */
	CHECK_EQ(pando_map_load(&f.mds, a.ino, &map), 0);
	if (map)
		CHECK_EQ(objects_on_osds(&f), pando_map_width(map) * map->groups);
	pando_map_free(map);
	free(blob);
	pooled_free(&p);
	mds_fixture_finish(&f, check_failures);
}

int main(void)
{
	test_an_empty_file_claims_a_pooled_map_with_every_osd_down();
	test_a_file_with_a_policy_places_its_own_map();
	test_the_pool_refills_and_stamps_claimed_objects();
	test_close_leaves_the_unused_entries_to_the_next_starts_reaper();
	CHECK_DONE();
}
