/* File marks (write layouts out, RS rows being updated): durable across
 * a reopen, listed in inode order, idempotent, deleted, malformed ones
 * skipped with an error, each kind apart from the other. */
#include <errno.h>
#include <string.h>

#include "ns_internal.h"
#include "ns_test.h"
#include "byteorder.h"

struct inos {
	int n;
	uint64_t ino[8];
};

static int collect(void *arg, uint64_t ino)
{
	struct inos *l = arg;

	if (l->n < 8)
		l->ino[l->n] = ino;
	l->n++;
	return 0;
}

static int stop_at_first(void *arg, uint64_t ino)
{
	(void)ino;
	++*(int *)arg;
	return 1;
}

static struct inos listed(struct ns_store *s)
{
	struct inos l = { 0 };

	CHECK_EQ(ns_wlayout_list(s, collect, &l), 0);
	return l;
}

static void test_records_survive_reopen_and_go_when_deleted(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct inos l;
	int calls = 0;

	CHECK_EQ(listed(s).n, 0);
	CHECK_EQ(ns_wlayout_add(s, 0), -EINVAL);
	CHECK_EQ(ns_wlayout_add(s, 300), 0);
	CHECK_EQ(ns_wlayout_add(s, 7), 0);
	CHECK_EQ(ns_wlayout_add(s, 300), 0); /* again: one record */
	ns_close(s);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	l = listed(s);
	CHECK_EQ(l.n, 2);
	CHECK_EQ(l.ino[0], 7);
	CHECK_EQ(l.ino[1], 300);
	CHECK_EQ(ns_wlayout_list(s, stop_at_first, &calls), 0);
	CHECK_EQ(calls, 1);
	CHECK_EQ(ns_wlayout_del(s, 7), 0);
	CHECK_EQ(ns_wlayout_del(s, 7), 0); /* not there: not an error */
	l = listed(s);
	CHECK_EQ(l.n, 1);
	CHECK_EQ(l.ino[0], 300);
	ns_close(s);
}

static void test_malformed_records_are_skipped_and_reported(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint8_t k[ID_KEY_LEN];
	struct inos l = { 0 };
	char *err = NULL;

	CHECK_EQ(ns_wlayout_add(s, 5), 0);
	CHECK_EQ(ns_wlayout_add(s, 9), 0);
	key_id(k, K_WLAYOUT, 6);
	rocksdb_put(s->db, s->wopts, (const char *)k, sizeof(k), "\x02", 1, &err);
	CHECK(err == NULL);
	rocksdb_put(s->db, s->wopts, (const char *)k, 5, "\x01", 1, &err); /* short key */
	CHECK(err == NULL);
	CHECK_EQ(ns_wlayout_list(s, collect, &l), -EIO);
	CHECK_EQ(l.n, 2);
	CHECK_EQ(l.ino[0], 5);
	CHECK_EQ(l.ino[1], 9);
	ns_close(s);
}

static void test_records_are_not_namespace_problems(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t f = mkfile(s, NS_ROOT_INO, "f");

	CHECK_EQ(ns_wlayout_add(s, f), 0);
	CHECK_EQ(ns_write_hole_add(s, f), 0);
	check_clean(s);
	ns_close(s);
}

static void test_row_marks_are_apart_from_write_layout_marks(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct inos rows = { 0 };

	CHECK_EQ(ns_write_hole_add(s, 0), -EINVAL);
	CHECK_EQ(ns_write_hole_add(s, 40), 0);
	CHECK_EQ(ns_write_hole_add(s, 41), 0);
	CHECK_EQ(ns_wlayout_add(s, 42), 0);
	ns_close(s);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK_EQ(ns_write_hole_list(s, collect, &rows), 0);
	CHECK_EQ(rows.n, 2);
	CHECK_EQ(rows.ino[0], 40);
	CHECK_EQ(rows.ino[1], 41);
	CHECK_EQ(listed(s).n, 1);
	CHECK_EQ(ns_write_hole_del(s, 40), 0);
	CHECK_EQ(ns_wlayout_del(s, 41), 0); /* the other kind: still marked */
	rows.n = 0;
	CHECK_EQ(ns_write_hole_list(s, collect, &rows), 0);
	CHECK_EQ(rows.n, 1);
	CHECK_EQ(rows.ino[0], 41);
	ns_close(s);
}

int main(void)
{
	test_dir_init("marks");
	test_records_survive_reopen_and_go_when_deleted();
	test_malformed_records_are_skipped_and_reported();
	test_records_are_not_namespace_problems();
	test_row_marks_are_apart_from_write_layout_marks();
	test_dir_done();
	CHECK_DONE();
}
