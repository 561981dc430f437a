/* Junctions: made in the root with their blob in one batch; nothing is
 * made, linked or moved into one (EROFS); one is neither renamed nor
 * renamed over (EXDEV) and is removed as an empty directory, its blob with
 * it; it stays across a reopen; the list has every junction and nothing
 * else; a flag without a blob or a blob without a
 * flag is reported by the check and mended by the repair. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns_internal.h"
#include "ns_test.h"

static const char TARGET[] = "volume vol1\npath /pando\nserver 10.0.0.2\n";

static uint64_t junction(struct ns_store *s, const char *name)
{
	struct ns_attr a;

	CHECK_EQ(ns_mkjunction(s, name, TEST_NEWDIR, TARGET, sizeof(TARGET) - 1, &a), 0);
	CHECK(a.junction);
	CHECK_EQ(a.type, NS_DIR);
	return a.ino;
}

static bool is_junction(struct ns_store *s, uint64_t ino)
{
	struct ns_attr a;

	CHECK_EQ(ns_getattr(s, ino, &a), 0);
	return a.junction;
}

static bool key_present(struct ns_store *s, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];
	size_t len;
	char *v = NULL;

	CHECK_EQ(db_get(s, k, key_id(k, K_JUNCTION, ino), &v, &len), 0);
	rocksdb_free(v);
	return v != NULL;
}

static void test_made_in_the_root_with_its_blob(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t j = junction(s, "vol1"), d = mkdir_(s, NS_ROOT_INO, "plain");
	char big[NS_JUNCTION_MAX + 1] = { 0 };
	struct ns_attr a;
	void *blob = NULL;
	size_t len = 0;

	CHECK_EQ(ns_lookup(s, NS_ROOT_INO, "vol1", &a), 0);
	CHECK_EQ(a.ino, j);
	CHECK(a.junction);
	CHECK_EQ(ns_junction_get(s, j, &blob, &len), 0);
	CHECK_EQ(len, sizeof(TARGET) - 1);
	CHECK(memcmp(blob, TARGET, len) == 0);
	free(blob);
	CHECK(!is_junction(s, d));
	CHECK_EQ(ns_junction_get(s, d, &blob, &len), -ENOENT);
	CHECK_EQ(ns_mkjunction(s, "vol1", TEST_NEWDIR, "x", 1, &a), -EEXIST);
	CHECK_EQ(ns_mkjunction(s, "big", TEST_NEWDIR, big, sizeof(big), &a), -EINVAL);
	CHECK_EQ(ns_mkjunction(s, "none", TEST_NEWDIR, NULL, 0, &a), -EINVAL);
	CHECK_EQ(ns_mkjunction(s, "a/b", TEST_NEWDIR, "x", 1, &a), -EINVAL);
	check_clean(s);
	ns_close(s);
}

static void test_nothing_is_made_linked_or_moved_into_one(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t j = junction(s, "vol1"), f = mkfile(s, NS_ROOT_INO, "f");
	struct ns_attr a;

	CHECK_EQ(ns_create(s, j, "new", TEST_NEW, NS_UNCHECKED, NULL, &a, NULL), -EROFS);
	CHECK_EQ(ns_mkdir(s, j, "sub", TEST_NEWDIR, &a), -EROFS);
	CHECK_EQ(ns_symlink(s, j, "lnk", "f", TEST_NEW, &a), -EROFS);
	CHECK_EQ(ns_mknod(s, j, "fifo", NS_FIFO, TEST_NEW, &a), -EROFS);
	CHECK_EQ(ns_link(s, f, j, "f2", NULL), -EROFS);
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "f", j, "f"), -EROFS);
	CHECK_EQ(ns_getattr(s, j, &a), 0);
	CHECK_EQ(a.size, 0);
	check_clean(s);
	ns_close(s);
}

static void test_it_is_neither_renamed_nor_renamed_over(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t j = junction(s, "vol1"), d = mkdir_(s, NS_ROOT_INO, "d");
	struct ns_attr a;

	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "vol1", NS_ROOT_INO, "renamed"), -EXDEV);
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "vol1", d, "vol1"), -EXDEV);
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "d", NS_ROOT_INO, "vol1"), -EXDEV);
	CHECK(is_junction(s, j));
	CHECK_EQ(ns_lookup(s, NS_ROOT_INO, "vol1", &a), 0);
	CHECK_EQ(a.ino, j);
	check_clean(s);
	ns_close(s);
}

static void test_the_blob_goes_with_its_inode_and_survives_a_reopen(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t gone = junction(s, "gone"), kept = junction(s, "kept");

	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "gone"), 0);
	CHECK(!key_present(s, gone));
	ns_close(s);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK(is_junction(s, kept));
	CHECK(key_present(s, kept));
	check_clean(s);
	ns_close(s);
}

static int collect(void *arg, uint64_t ino)
{
	uint64_t *seen = arg;

	seen[++seen[0]] = ino;
	return 0;
}

static void test_the_list_names_every_junction_and_nothing_else(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t a = junction(s, "a"), b = junction(s, "b"), seen[4] = { 0 };

	mkdir_(s, NS_ROOT_INO, "plain");
	junction(s, "gone");
	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "gone"), 0);
	CHECK_EQ(ns_junction_list(s, collect, seen), 0);
	CHECK_EQ(seen[0], 2);
	CHECK_EQ(seen[1], a);
	CHECK_EQ(seen[2], b);
	ns_close(s);
}

static void test_a_flag_or_a_blob_alone_is_reported_and_repaired(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t flag_only = junction(s, "flag-only");
	uint64_t blob_only = mkdir_(s, NS_ROOT_INO, "blob-only");
	struct ns_check_result r;
	uint8_t k[ID_KEY_LEN];
	char *err = NULL;

	rocksdb_delete(s->db, s->wopts, (const char *)k, key_id(k, K_JUNCTION, flag_only), &err);
	CHECK(err == NULL);
	rocksdb_put(s->db, s->wopts, (const char *)k, key_id(k, K_JUNCTION, blob_only), "x", 1,
		    &err);
	CHECK(err == NULL);
	CHECK_EQ(ns_check(s, NULL, NULL, &r), 0);
	CHECK_EQ(r.problems, 2);
	CHECK_EQ(r.bad_records, 1);
	CHECK_EQ(r.stray_keys, 1);
	CHECK_EQ(ns_repair(s, say_stderr, NULL, &r), 0);
	CHECK(!is_junction(s, flag_only));
	CHECK(!key_present(s, blob_only));
	CHECK(!is_junction(s, blob_only));
	check_clean(s);
	ns_close(s);
}

int main(void)
{
	test_dir_init("junction");
	test_made_in_the_root_with_its_blob();
	test_nothing_is_made_linked_or_moved_into_one();
	test_it_is_neither_renamed_nor_renamed_over();
	test_the_blob_goes_with_its_inode_and_survives_a_reopen();
	test_the_list_names_every_junction_and_nothing_else();
	test_a_flag_or_a_blob_alone_is_reported_and_repaired();
	test_dir_done();
	CHECK_DONE();
}
