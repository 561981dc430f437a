/* ns_check finds what a crash or a bug could leave: each case builds a
 * small clean tree, breaks one thing behind the store's back, and expects
 * the check to name it. */
#include "ns_corrupt.h"

#include <errno.h>

static struct ns_check_result run_check(struct ns_store *s)
{
	struct ns_check_result r;

	CHECK_EQ(ns_check(s, NULL, NULL, &r), 0);
	CHECK(r.problems > 0);
	return r;
}

static void test_finds_entry_without_index(void)
{
	struct tree t = tree_build();
	uint8_t k[INDEX_KEY_LEN];
	struct dirent_rec d;

	CHECK_EQ(dirent_get(t.s, t.d, "f", 1, &d), 0);
	raw_del(t.s, k, key_index(k, t.d, d.seq));
	CHECK_EQ(run_check(t.s).index_mismatches, 1);
	ns_close(t.s);
}

static void test_finds_index_without_entry(void)
{
	struct tree t = tree_build();
	struct ns_check_result r;

	del_entry(t.s, t.d, "f", false);
	r = run_check(t.s);
	CHECK_EQ(r.index_mismatches, 1);
	/* f has two links but one name; d counts an entry it lacks. */
	CHECK_EQ(r.bad_links, 2);
	CHECK_EQ(r.orphans, 0);
	ns_close(t.s);
}

static void test_finds_dangling(void)
{
	struct tree t = tree_build();
	uint8_t k[ID_KEY_LEN];
	struct ns_check_result r;

	raw_del(t.s, k, key_id(k, K_INODE, t.f));
	r = run_check(t.s);
	CHECK_EQ(r.dangling_dirents, 2);
	/* the store's inode counter, and f's user's and group's */
	CHECK_EQ(r.bad_counters, 3);
	CHECK_EQ(r.problems, 5);
	ns_close(t.s);
}

static void test_finds_link_counts(void)
{
	struct tree t = tree_build();
	struct ns_inode r;

	CHECK_EQ(inode_load(t.s, t.f, &r), 0);
	r.nlink = 3;
	put_inode(t.s, &r);
	CHECK_EQ(inode_load(t.s, t.d, &r), 0);
	r.nlink = 2;
	r.nentries = 5;
	put_inode(t.s, &r);
	CHECK_EQ(run_check(t.s).bad_links, 3);
	ns_close(t.s);
}

static void test_finds_orphans(void)
{
	struct tree t = tree_build();
	struct ns_check_result r;

	/* Unnamed: d is orphaned, and with it everything below. */
	del_entry(t.s, NS_ROOT_INO, "d", true);
	r = run_check(t.s);
	CHECK_EQ(r.orphans, 3);
	/* The root counts an entry and a subdirectory it no longer has. */
	CHECK_EQ(r.bad_links, 2);
	CHECK_EQ(r.problems, 5);
	ns_close(t.s);
}

/* d moved into its own subdirectory: every record agrees with its
 * neighbours, but no path from the root reaches the cycle. */
static void test_finds_cycle(void)
{
	struct tree t = tree_build();

	make_cycle(&t);
	CHECK_EQ(run_check(t.s).orphans, 3);
	/* A rename into the cycle must not spin. */
	CHECK_EQ(ns_rename(t.s, NS_ROOT_INO, "small", t.sub, "x"), 0);
	mkdir_(t.s, NS_ROOT_INO, "top");
	CHECK_EQ(ns_rename(t.s, NS_ROOT_INO, "top", t.sub, "y"), -EIO);
	ns_close(t.s);
}

static void test_finds_stray_keys(void)
{
	struct tree t = tree_build();
	uint8_t k[ID_KEY_LEN];
	struct ns_check_result r;

	raw_put(t.s, k, key_id(k, K_DATA, t.d), "x", 1);
	raw_put(t.s, k, key_id(k, K_MAP, 99999), "m", 1);
	raw_put(t.s, k, key_id(k, K_SYMLINK, t.f), "t", 1);
	raw_put(t.s, k, key_id(k, K_MAP, t.small), "m", 1);
	r = run_check(t.s);
	CHECK_EQ(r.stray_keys, 4);
	CHECK_EQ(r.problems, 4);
	ns_close(t.s);
}

static void test_finds_bad_records(void)
{
	struct tree t = tree_build();
	uint8_t k[KEY_MAX];
	struct ns_check_result r;

	raw_put(t.s, k, key_id(k, K_INODE, t.lnk), "short", 5);
	raw_put(t.s, k, key_id(k, K_DATA, t.small), "abcd", 4);
	raw_del(t.s, k, key_id(k, K_MAP, t.obj));
	raw_put(t.s, k, key_id(k, K_INTENT, 5), "?", 1);
	raw_put(t.s, k, key_dirent(k, t.d, "bad", 3), "xx", 2);
	r = run_check(t.s);
	CHECK_EQ(r.bad_records, 5);
	ns_close(t.s);
}

static void test_finds_counters(void)
{
	struct tree t = tree_build();
	uint8_t k = K_NEXT, v[8];
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t seq;

	merge_add(b, C_INODES, 1);
	merge_add(b, C_BYTES, -1);
	CHECK_EQ(db_write(t.s, b, &seq), 0);
	rocksdb_writebatch_destroy(b);
	put_be64(v, 3);
	raw_put(t.s, &k, 1, v, 8);
	CHECK_EQ(run_check(t.s).bad_counters, 3);
	ns_close(t.s);
}

static void test_finds_seq_range(void)
{
	struct tree t = tree_build();
	struct ns_inode d;

	CHECK_EQ(inode_load(t.s, t.d, &d), 0);
	d.next_seq = NS_COOKIE_FIRST + 1;
	put_inode(t.s, &d);
	CHECK_EQ(run_check(t.s).index_mismatches, 1);
	ns_close(t.s);
}

int main(void)
{
	test_dir_init("check");
	test_finds_entry_without_index();
	test_finds_index_without_entry();
	test_finds_dangling();
	test_finds_link_counts();
	test_finds_orphans();
	test_finds_cycle();
	test_finds_stray_keys();
	test_finds_bad_records();
	test_finds_counters();
	test_finds_seq_range();
	test_dir_done();
	CHECK_DONE();
}
