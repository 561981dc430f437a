/* ns_check finds what a crash or a bug could leave: each case builds a
 * small clean tree, breaks one thing behind the store's back, and expects
 * the check to name it. */
#include "ns_test.h"

#include <errno.h>

#include "byteorder.h"
#include "ns_internal.h"

struct tree {
	struct ns_store *s;
	uint64_t d, f, sub, lnk, small, obj;
};

static struct tree build(void)
{
	char path[128];
	struct tree t = { .s = test_store(path, sizeof(path), NULL) };

	t.d = mkdir_(t.s, NS_ROOT_INO, "d");
	t.f = mkfile(t.s, t.d, "f");
	CHECK_EQ(ns_link(t.s, t.f, NS_ROOT_INO, "g", NULL), 0);
	t.sub = mkdir_(t.s, t.d, "sub");
	t.small = mkfile(t.s, NS_ROOT_INO, "small");
	CHECK_EQ(ns_write(t.s, t.small, 0, "abc", 3, true, NULL, NULL), 0);
	t.obj = mkfile(t.s, NS_ROOT_INO, "obj");
	CHECK_EQ(ns_map_set(t.s, t.obj, 0, "map", 3, NULL, 0, 0), 0);
	CHECK_EQ(ns_symlink(t.s, t.sub, "lnk", "../f", TEST_NEW, NULL), 0);
	t.lnk = ino_of(t.s, t.sub, "lnk");
	check_clean(t.s);
	return t;
}

static void raw_put(struct ns_store *s, const uint8_t *k, size_t klen, const void *v,
		    size_t vlen)
{
	char *err = NULL;

	rocksdb_put(s->db, s->wopts, (const char *)k, klen, v, vlen, &err);
	CHECK(err == NULL);
}

static void raw_del(struct ns_store *s, const uint8_t *k, size_t klen)
{
	char *err = NULL;

	rocksdb_delete(s->db, s->wopts, (const char *)k, klen, &err);
	CHECK(err == NULL);
}

static void put_inode(struct ns_store *s, const struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN], v[INODE_REC_LEN];

	inode_encode(r, v);
	raw_put(s, k, key_id(k, K_INODE, r->ino), v, sizeof(v));
}

static void del_entry(struct ns_store *s, uint64_t dir, const char *name, bool index)
{
	uint8_t k[KEY_MAX];
	struct dirent_rec d;

	CHECK_EQ(dirent_get(s, dir, name, strlen(name), &d), 0);
	raw_del(s, k, key_dirent(k, dir, name, strlen(name)));
	if (index)
		raw_del(s, k, key_index(k, dir, d.seq));
}

static struct ns_check_result run_check(struct ns_store *s)
{
	struct ns_check_result r;

	CHECK_EQ(ns_check(s, NULL, NULL, &r), 0);
	CHECK(r.problems > 0);
	return r;
}

static void test_entry_without_index(void)
{
	struct tree t = build();
	uint8_t k[INDEX_KEY_LEN];
	struct dirent_rec d;

	CHECK_EQ(dirent_get(t.s, t.d, "f", 1, &d), 0);
	raw_del(t.s, k, key_index(k, t.d, d.seq));
	CHECK_EQ(run_check(t.s).index_mismatches, 1);
	ns_close(t.s);
}

static void test_index_without_entry(void)
{
	struct tree t = build();
	struct ns_check_result r;

	del_entry(t.s, t.d, "f", false);
	r = run_check(t.s);
	CHECK_EQ(r.index_mismatches, 1);
	/* f has two links but one name; d counts an entry it lacks. */
	CHECK_EQ(r.bad_links, 2);
	CHECK_EQ(r.orphans, 0);
	ns_close(t.s);
}

static void test_dangling(void)
{
	struct tree t = build();
	uint8_t k[ID_KEY_LEN];
	struct ns_check_result r;

	raw_del(t.s, k, key_id(k, K_INODE, t.f));
	r = run_check(t.s);
	CHECK_EQ(r.dangling_dirents, 2);
	CHECK_EQ(r.bad_counters, 1);
	CHECK_EQ(r.problems, 3);
	ns_close(t.s);
}

static void test_link_counts(void)
{
	struct tree t = build();
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

static void test_orphans(void)
{
	struct tree t = build();
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
static void test_cycle(void)
{
	struct tree t = build();
	struct dirent_rec e = { .ino = t.d, .seq = NS_COOKIE_FIRST + 1 };
	struct ns_inode root, d, sub;
	struct txn x;

	del_entry(t.s, NS_ROOT_INO, "d", true);
	CHECK_EQ(inode_load(t.s, NS_ROOT_INO, &root), 0);
	CHECK_EQ(inode_load(t.s, t.d, &d), 0);
	CHECK_EQ(inode_load(t.s, t.sub, &sub), 0);
	root.nlink--;
	root.nentries--;
	sub.nlink++;
	sub.nentries++;
	sub.next_seq++;
	d.parent = t.sub;
	put_inode(t.s, &root);
	put_inode(t.s, &d);
	put_inode(t.s, &sub);
	txn_begin(&x, t.s);
	dirent_put(&x, t.sub, "loop", 4, &e, NS_DIR);
	CHECK_EQ(txn_commit(&x, false), 0);
	CHECK_EQ(run_check(t.s).orphans, 3);
	/* A rename into the cycle must not spin. */
	CHECK_EQ(ns_rename(t.s, NS_ROOT_INO, "small", t.sub, "x"), 0);
	mkdir_(t.s, NS_ROOT_INO, "top");
	CHECK_EQ(ns_rename(t.s, NS_ROOT_INO, "top", t.sub, "y"), -EIO);
	ns_close(t.s);
}

static void test_stray_keys(void)
{
	struct tree t = build();
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

static void test_bad_records(void)
{
	struct tree t = build();
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

static void test_counters(void)
{
	struct tree t = build();
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

static void test_seq_range(void)
{
	struct tree t = build();
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
	test_entry_without_index();
	test_index_without_entry();
	test_dangling();
	test_link_counts();
	test_orphans();
	test_cycle();
	test_stray_keys();
	test_bad_records();
	test_counters();
	test_seq_range();
	test_dir_done();
	CHECK_DONE();
}
