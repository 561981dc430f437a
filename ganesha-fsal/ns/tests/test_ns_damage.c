/* Damage records: only for object-backed files, counted, listed, cleared,
 * gone with the map, and checked by ns_check. */
#include <errno.h>

#include "ns_test.h"

struct seen {
	int n;
	struct ns_damage last;
};

static int collect(void *arg, const struct ns_damage *dr)
{
	struct seen *s = arg;

	s->n++;
	s->last = *dr;
	return 0;
}

static void test_records(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_check_result res;
	struct seen seen = { 0 };
	uint64_t f = mkfile(s, NS_ROOT_INO, "f"), g = mkfile(s, NS_ROOT_INO, "g");

	CHECK_EQ(ns_damage_add(s, f, 3, -5, 38, true), -ENODATA); /* inline: no objects */
	CHECK_EQ(ns_damage_add(s, 424242, 3, -5, 38, true), -ESTALE);
	CHECK_EQ(ns_map_set(s, f, 0, "map-f", 5, NULL, 0, 0), 0);
	CHECK_EQ(ns_map_set(s, g, 0, "map-g", 5, NULL, 0, 0), 0);
	CHECK_EQ(ns_damage_add(s, f, 3, -5, 38, true), 0);
	/* A later read error keeps the record stale. */
	CHECK_EQ(ns_damage_add(s, f, 3, 10008, 25, false), 0);
	CHECK_EQ(ns_damage_add(s, g, 2, -5, 25, false), 0);
	CHECK_EQ(ns_damage_list(s, 0, collect, &seen), 0);
	CHECK_EQ(seen.n, 2);
	CHECK_EQ(seen.last.ino, g);
	CHECK(!seen.last.stale);
	seen.n = 0;
	CHECK_EQ(ns_damage_list(s, g, collect, &seen), 0);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(ns_check(s, NULL, NULL, &res), 0);
	CHECK_EQ(res.problems, 0);

	/* The first record again, after a restart: counted, the last error kept. */
	ns_close(s);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	seen.n = 0;
	CHECK_EQ(ns_damage_clear(s, g, 2), 0);
	CHECK_EQ(ns_damage_clear(s, g, 2), 0);
	CHECK_EQ(ns_damage_list(s, 0, collect, &seen), 0);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.last.ino, f);
	CHECK(seen.last.stale);
	CHECK_EQ(seen.last.osd_id, 3);
	CHECK_EQ(seen.last.count, 2);
	CHECK_EQ(seen.last.status, 10008);
	CHECK_EQ(seen.last.opnum, 25);
	CHECK(seen.last.first.tv_sec > 0);
	CHECK(seen.last.last.tv_sec >= seen.last.first.tv_sec);

	/* The records go with the file's map. */
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "f"), 0);
	seen.n = 0;
	CHECK_EQ(ns_damage_list(s, 0, collect, &seen), 0);
	CHECK_EQ(seen.n, 0);
	check_clean(s);
	ns_close(s);
}

int main(void)
{
	test_dir_init("damage");
	test_records();
	test_dir_done();
	CHECK_DONE();
}
