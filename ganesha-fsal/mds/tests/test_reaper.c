/* The reaper: the objects a removal intent names are removed from their
 * OSDs and the intent goes; an OSD that is down keeps the intent, and the
 * removal is made again once it is back; the objects a running move or
 * the object pool owns are left alone; its statistics count removals and
 * failed tries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mds_fixture.h"
#include "objio.h"

#define WAIT_MS 10000
#define POLL_US 20000
#define MAX_SEEN 8

/* Intents as the store lists them: every one, or those of one file. */
struct seen {
	uint64_t ino;
	bool any_ino;
	int n;
	uint64_t id[MAX_SEEN];
	struct pando_storage_map *map[MAX_SEEN];
};

static int see(void *arg, const struct ns_intent *in)
{
	struct seen *s = arg;

	if ((!s->any_ino && in->ino != s->ino) || s->n == MAX_SEEN)
		return 0;
	s->map[s->n] = NULL;
	if (pando_map_decode(in->blob, in->len, &s->map[s->n]) != 0)
		return 0;
	s->id[s->n++] = in->id;
	return 0;
}

static void seen_list(struct mds_fixture *f, struct seen *s, uint64_t ino)
{
	memset(s, 0, sizeof(*s));
	s->ino = ino;
	CHECK_EQ(ns_intent_list(f->mds.ns, 0, see, s), 0);
}

static void seen_free(struct seen *s)
{
	for (int i = 0; i < s->n; i++)
		pando_map_free(s->map[i]);
	s->n = 0;
}

/* How many of map's components answer an object GETATTR with want (0:
 * the object is there; -ENOENT: its OSD has no such object). */
static int components_answering(struct mds_fixture *f, const struct pando_storage_map *map,
				int want)
{
	struct objio io = { .conns = f->mds.conns };
	int n = 0;

	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++) {
		uint64_t len = 0;

		n += objio_component_length(&io, map->partition_id, &map->comp[c], &len) == want;
	}
	return n;
}

static int ncomponents(const struct pando_storage_map *map)
{
	return (int)(pando_map_width(map) * map->groups);
}

static bool wait_intent_gone(struct mds_fixture *f, uint64_t id, int ms)
{
	for (int waited = 0; waited < ms && ns_intent_exists(f->mds.ns, id) == 1;
	     waited += POLL_US / 1000)
		usleep(POLL_US);
	return ns_intent_exists(f->mds.ns, id) == 0;
}

static uint64_t removed_by(struct mds_fixture *f, uint64_t *failed)
{
	uint64_t removed = 0, fails = 0;

	pando_reaper_stats(f->mds.reaper, &removed, &fails);
	if (failed)
		*failed = fails;
	return removed;
}

/* A file on objects with bytes in them, removed (its last name): its
 * intent's id, and its map in *map. */
static uint64_t removed_file(struct mds_fixture *f, const char *name,
			     struct pando_storage_map **map)
{
	uint8_t buf[5000];
	struct ns_attr a;
	struct objio io;
	struct seen s;
	uint64_t id;

	*map = NULL;
	osd_fixture_fill(buf, sizeof(buf), 3);
	CHECK_EQ(mds_fixture_create(f, name, &a), 0);
	/* Not empty: it makes its own objects, not a pool entry's. */
	CHECK_EQ(ns_write(f->mds.ns, a.ino, 0, buf, 1, true, NULL, &a), 0);
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	CHECK_EQ(pando_objects_open(&f->mds, a.ino, &io, map), 0);
	if (!*map)
		return 0;
	CHECK_EQ(objio_write(&io, *map, 0, buf, sizeof(buf), true), 0);
	CHECK_EQ(components_answering(f, *map, 0), ncomponents(*map));
	CHECK_EQ(ns_unlink(f->mds.ns, NS_ROOT_INO, name), 0);
	seen_list(f, &s, a.ino);
	CHECK_EQ(s.n, 1);
	id = s.n == 1 ? s.id[0] : 0;
	seen_free(&s);
	return id;
}

static void test_removed_files_objects_go_from_the_osds_and_the_intent_goes(void)
{
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	uint64_t id, failed = 0;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	CHECK_EQ(removed_by(&f, NULL), 0);
	id = removed_file(&f, "a", &map);
	pando_reaper_kick(f.mds.reaper);
	CHECK(wait_intent_gone(&f, id, WAIT_MS));
	if (map)
		CHECK_EQ(components_answering(&f, map, -ENOENT), ncomponents(map));
	CHECK_EQ(removed_by(&f, &failed), 1);
	CHECK_EQ(failed, 0);
	pando_map_free(map);
	mds_fixture_finish(&f, check_failures);
}

static bool wait_failed_tries(struct mds_fixture *f, uint64_t n, int ms)
{
	uint64_t failed = 0;

	for (int waited = 0; waited < ms; waited += POLL_US / 1000) {
		removed_by(f, &failed);
		if (failed >= n)
			return true;
		usleep(POLL_US);
	}
	return false;
}

/* No kick once the OSD is back: the reaper's own retry is what is tested
 * (every few seconds while a removal is owed). */
static void test_an_osd_down_keeps_the_intent_and_it_is_retried_when_back(void)
{
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	uint64_t id;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	id = removed_file(&f, "a", &map);
	CHECK_EQ(osd_fixture_stop(&f.osds, 1), 0);
	pando_reaper_kick(f.mds.reaper);
	CHECK(wait_failed_tries(&f, 1, WAIT_MS));
	CHECK_EQ(ns_intent_exists(f.mds.ns, id), 1);
	CHECK_EQ(removed_by(&f, NULL), 0);
	CHECK_EQ(osd_fixture_restart(&f.osds, 1), 0);
	CHECK_EQ(osd_fixture_back_in_pool(f.mds.conns, f.osds.osds[1].id), 0);
	CHECK(wait_intent_gone(&f, id, 2 * WAIT_MS));
	if (map)
		CHECK_EQ(components_answering(&f, map, -ENOENT), ncomponents(map));
	CHECK_EQ(removed_by(&f, NULL), 1);
	pando_map_free(map);
	mds_fixture_finish(&f, check_failures);
}

/* A reaper pass that removed a later intent has looked at every earlier
 * one (intents are listed oldest first). */
static void reaper_pass_after(struct mds_fixture *f, const char *marker)
{
	struct pando_storage_map *map = NULL;
	uint64_t id = removed_file(f, marker, &map);

	pando_reaper_kick(f->mds.reaper);
	CHECK(wait_intent_gone(f, id, WAIT_MS));
	pando_map_free(map);
}

/* The first steps of a move to objects (objects.c, move_once): the file
 * registered in flight, then the intent, then the objects. */
static uint64_t move_begun(struct mds_fixture *f, uint64_t ino, struct pando_storage_map **map)
{
	struct objio io = { .conns = f->mds.conns, .owner = ino };
	uint8_t *blob = NULL;
	uint64_t id = 0;
	size_t len = 0;

	*map = NULL;
	CHECK_EQ(pando_map_new_placed(&f->mds, ino, map), 0);
	if (!*map)
		return 0;
	CHECK_EQ(pando_map_blob(*map, &blob, &len), 0);
	pando_inflight_add(&f->mds, ino);
	CHECK_EQ(ns_intent_add(f->mds.ns, ino, blob, len, &id), 0);
	pando_inflight_intent(&f->mds, ino, id);
	CHECK_EQ(objio_create(&io, *map), 0);
	free(blob);
	return id;
}

static void test_objects_of_a_move_in_flight_are_left_until_it_ends(void)
{
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	struct ns_attr a;
	uint64_t id;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	CHECK_EQ(mds_fixture_create(&f, "moving", &a), 0);
	id = move_begun(&f, a.ino, &map);
	reaper_pass_after(&f, "marker");
	CHECK_EQ(ns_intent_exists(f.mds.ns, id), 1);
	if (map)
		CHECK_EQ(components_answering(&f, map, 0), ncomponents(map));
	/* The move failed and left its intent: now it is the reaper's. */
	pando_inflight_del(&f.mds, a.ino);
	pando_reaper_kick(f.mds.reaper);
	CHECK(wait_intent_gone(&f, id, WAIT_MS));
	if (map)
		CHECK_EQ(components_answering(&f, map, -ENOENT), ncomponents(map));
	CHECK_EQ(removed_by(&f, NULL), 2);
	pando_map_free(map);
	mds_fixture_finish(&f, check_failures);
}

static void pool_of_two(struct pando_mds_config *cfg)
{
	cfg->object_pool = 2;
}

/* Until the pool's entries exist: their intents (of inode 0) and every
 * object they name. */
static bool wait_pool_full(struct mds_fixture *f, struct seen *s, int want)
{
	for (int waited = 0; waited < WAIT_MS; waited += POLL_US / 1000) {
		int made = 0;

		seen_list(f, s, 0);
		for (int i = 0; i < s->n; i++)
			made += components_answering(f, s->map[i], 0) == ncomponents(s->map[i]);
		if (made == want)
			return true;
		seen_free(s);
		usleep(POLL_US);
	}
	seen_list(f, s, 0);
	return false;
}

static void test_objects_the_pool_owns_are_left_alone(void)
{
	struct mds_fixture f;
	struct seen s;

	CHECK_EQ(mds_fixture_start(&f, 2, pool_of_two), 0);
	CHECK(wait_pool_full(&f, &s, 2));
	CHECK_EQ(s.n, 2);
	reaper_pass_after(&f, "marker");
	for (int i = 0; i < s.n; i++) {
		CHECK(pando_object_pool_owns(f.mds.object_pool, s.id[i]));
		CHECK_EQ(ns_intent_exists(f.mds.ns, s.id[i]), 1);
		CHECK_EQ(components_answering(&f, s.map[i], 0), ncomponents(s.map[i]));
	}
	CHECK_EQ(removed_by(&f, NULL), 1);
	seen_free(&s);
	mds_fixture_finish(&f, check_failures);
}

int main(void)
{
	test_removed_files_objects_go_from_the_osds_and_the_intent_goes();
	test_an_osd_down_keeps_the_intent_and_it_is_retried_when_back();
	test_objects_of_a_move_in_flight_are_left_until_it_ends();
	test_objects_the_pool_owns_are_left_alone();
	CHECK_DONE();
}
