/* Storage policy blobs: set, get, clear; inherited by what a directory
 * makes, at the moment it is made, down any depth; gone with their inode;
 * kept across a reopen; an orphan reported by the check and removed by the
 * repair. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns_internal.h"
#include "ns_test.h"

/* The inode's blob as a string, "" when it has none. */
static const char *policy_of(struct ns_store *s, uint64_t ino)
{
	static char buf[64];
	void *blob = NULL;
	size_t len = 0;
	int rc = ns_policy_get(s, ino, &blob, &len);

	buf[0] = 0;
	if (rc == 0 && len < sizeof(buf)) {
		memcpy(buf, blob, len);
		buf[len] = 0;
	} else {
		CHECK_EQ(rc, -ENOENT);
	}
	free(blob);
	return buf;
}

static void set(struct ns_store *s, uint64_t ino, const char *blob)
{
	CHECK_EQ(ns_policy_set(s, ino, blob, strlen(blob)), 0);
}

static bool key_present(struct ns_store *s, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];
	size_t len;
	char *v = NULL;

	CHECK_EQ(db_get(s, k, key_id(k, K_POLICY, ino), &v, &len), 0);
	rocksdb_free(v);
	return v != NULL;
}

static void test_set_get_and_clear(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d");
	void *blob = NULL;
	size_t len = 0;
	char big[NS_POLICY_MAX + 1] = { 0 };

	CHECK_EQ(ns_policy_get(s, d, &blob, &len), -ENOENT);
	set(s, d, "mirror3");
	CHECK(strcmp(policy_of(s, d), "mirror3") == 0);
	set(s, d, "rs8+2");
	CHECK(strcmp(policy_of(s, d), "rs8+2") == 0);
	CHECK_EQ(ns_policy_set(s, d, NULL, 0), 0);
	CHECK_EQ(ns_policy_get(s, d, &blob, &len), -ENOENT);
	CHECK_EQ(ns_policy_set(s, d, NULL, 0), 0); /* none to clear: fine */
	CHECK_EQ(ns_policy_set(s, 987654, "x", 1), -ESTALE);
	CHECK_EQ(ns_policy_set(s, d, big, sizeof(big)), -EINVAL);
	CHECK_EQ(ns_policy_set(s, d, NULL, 3), -EINVAL);
	check_clean(s);
	ns_close(s);
}

static void test_create_mkdir_mknod_symlink_inherit(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d"), f, sub, fifo, lnk;
	struct ns_attr a;

	set(s, d, "mirror3");
	f = mkfile(s, d, "f");
	sub = mkdir_(s, d, "sub");
	CHECK_EQ(ns_mknod(s, d, "fifo", NS_FIFO, TEST_NEW, &a), 0);
	fifo = a.ino;
	CHECK_EQ(ns_symlink(s, d, "lnk", "f", TEST_NEW, &a), 0);
	lnk = a.ino;
	CHECK(strcmp(policy_of(s, f), "mirror3") == 0);
	CHECK(strcmp(policy_of(s, sub), "mirror3") == 0);
	CHECK(strcmp(policy_of(s, fifo), "mirror3") == 0);
	CHECK(strcmp(policy_of(s, lnk), "mirror3") == 0);
	/* Made elsewhere: nothing to inherit. */
	CHECK(strcmp(policy_of(s, mkfile(s, NS_ROOT_INO, "plain")), "") == 0);
	check_clean(s);
	ns_close(s);
}

static void test_inheritance_goes_down_every_level(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t a = mkdir_(s, NS_ROOT_INO, "a"), b, c, f;

	set(s, a, "raid0x4");
	b = mkdir_(s, a, "b");
	c = mkdir_(s, b, "c");
	f = mkfile(s, c, "f");
	CHECK(strcmp(policy_of(s, f), "raid0x4") == 0);
	/* A subdirectory's own policy wins below it. */
	set(s, b, "rs4+2");
	CHECK(strcmp(policy_of(s, mkfile(s, b, "g")), "rs4+2") == 0);
	CHECK(strcmp(policy_of(s, mkfile(s, c, "h")), "raid0x4") == 0);
	ns_close(s);
}

static void test_a_later_set_changes_only_new_files(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d"), old, cleared;

	set(s, d, "mirror2");
	old = mkfile(s, d, "old");
	set(s, d, "mirror3");
	CHECK(strcmp(policy_of(s, old), "mirror2") == 0);
	CHECK(strcmp(policy_of(s, mkfile(s, d, "new")), "mirror3") == 0);
	CHECK_EQ(ns_policy_set(s, d, NULL, 0), 0);
	cleared = mkfile(s, d, "after-clear");
	CHECK(strcmp(policy_of(s, cleared), "") == 0);
	CHECK(strcmp(policy_of(s, old), "mirror2") == 0);
	ns_close(s);
}

static void test_policy_goes_with_its_inode(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d"), f, sub, victim;

	set(s, d, "mirror3");
	f = mkfile(s, d, "f");
	CHECK_EQ(ns_link(s, f, NS_ROOT_INO, "f2", NULL), 0);
	CHECK_EQ(ns_unlink(s, d, "f"), 0);
	CHECK(key_present(s, f)); /* one name left */
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "f2"), 0);
	CHECK(!key_present(s, f));
	sub = mkdir_(s, d, "sub");
	CHECK_EQ(ns_rmdir(s, d, "sub"), 0);
	CHECK(!key_present(s, sub));
	victim = mkfile(s, d, "victim");
	mkfile(s, d, "winner");
	CHECK_EQ(ns_rename(s, d, "winner", d, "victim"), 0);
	CHECK(!key_present(s, victim));
	check_clean(s);
	ns_close(s);
}

static void test_policies_survive_reopen(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d"), f;

	set(s, d, "rs8+2");
	f = mkfile(s, d, "f");
	ns_close(s);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK(strcmp(policy_of(s, d), "rs8+2") == 0);
	CHECK(strcmp(policy_of(s, f), "rs8+2") == 0);
	check_clean(s);
	ns_close(s);
}

static void test_orphan_policy_is_reported_and_repaired(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d");
	struct ns_check_result r;
	uint8_t k[ID_KEY_LEN];
	char *err = NULL;

	set(s, d, "kept");
	rocksdb_put(s->db, s->wopts, (const char *)k, key_id(k, K_POLICY, 424242), "x", 1, &err);
	CHECK(err == NULL);
	CHECK_EQ(ns_check(s, NULL, NULL, &r), 0);
	CHECK_EQ(r.problems, 1);
	CHECK_EQ(r.stray_keys, 1);
	CHECK_EQ(ns_repair(s, say_stderr, NULL, &r), 0);
	CHECK_EQ(r.stray_keys, 1);
	CHECK(!key_present(s, 424242));
	CHECK(strcmp(policy_of(s, d), "kept") == 0);
	check_clean(s);
	ns_close(s);
}

int main(void)
{
	test_dir_init("policy");
	test_set_get_and_clear();
	test_create_mkdir_mknod_symlink_inherit();
	test_inheritance_goes_down_every_level();
	test_a_later_set_changes_only_new_files();
	test_policy_goes_with_its_inode();
	test_policies_survive_reopen();
	test_orphan_policy_is_reported_and_repaired();
	test_dir_done();
	CHECK_DONE();
}
