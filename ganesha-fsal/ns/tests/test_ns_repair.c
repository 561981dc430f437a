/* ns_repair fixes what ns_check finds: each case builds the small tree of
 * ns_corrupt.h, breaks it as test_ns_check does, repairs, and expects ns_check
 * clean, a second repair with nothing to do, and the files the damage did
 * not touch as they were. */
#include "ns_corrupt.h"

#include <errno.h>

/* What the damage in a case is allowed to have changed. */
enum {
	LEFT_ALL = 0,
	LOST_LINK = 1, /* the symlink (its record broken) */
	LOST_MAP = 2,  /* obj's map (deleted) */
};

/* ---- what a repair must leave ------------------------------------------ */

static void repair(struct tree *t)
{
	struct ns_check_result before, fixed, again;

	CHECK_EQ(ns_check(t->s, NULL, NULL, &before), 0);
	CHECK(before.problems > 0);
	CHECK_EQ(ns_repair(t->s, say_stderr, NULL, &fixed), 0);
	CHECK(fixed.problems > 0);
	check_clean(t->s);
	CHECK_EQ(ns_repair(t->s, say_stderr, NULL, &again), 0);
	CHECK_EQ(again.problems, 0);
}

static void check_untouched(const struct tree *t, unsigned lost)
{
	char buf[16] = { 0 };
	size_t n = 0;
	bool eof;
	void *map = NULL;

	CHECK_EQ(ns_read(t->s, t->small, 0, sizeof(buf), buf, &n, &eof), 0);
	CHECK_EQ(n, 3);
	CHECK_MEM(buf, "abc", 3);
	CHECK_EQ(ino_of(t->s, NS_ROOT_INO, "small"), t->small);
	if (!(lost & LOST_MAP)) {
		CHECK_EQ(ns_map_get(t->s, t->obj, &map, &n), 0);
		CHECK_EQ(n, 3);
		if (map)
			CHECK_MEM(map, "map", 3);
		free(map);
	}
	if (!(lost & LOST_LINK)) {
		CHECK_EQ(ns_readlink(t->s, t->lnk, buf, sizeof(buf), &n), 0);
		CHECK_EQ(n, 4);
		CHECK_MEM(buf, "../f", 4);
	}
}

static void done(struct tree *t, unsigned lost)
{
	check_untouched(t, lost);
	ns_close(t->s);
}

/* ---- one case per corruption test_ns_check injects --------------------- */

static void test_repairs_entry_without_index(void)
{
	struct tree t;
	uint8_t k[INDEX_KEY_LEN];
	uint64_t before, after;

	t = tree_build();
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &before), 0);
	raw_del(t.s, k, key_index(k, t.d, before));
	repair(&t);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &after), 0);
	CHECK_EQ(after, before);
	done(&t, LEFT_ALL);
}

/* The index entry still holds the name: it comes back, cookie and all. */
static void test_repairs_index_without_entry(void)
{
	struct tree t;
	uint64_t before, after;

	t = tree_build();
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &before), 0);
	del_entry(t.s, t.d, "f", false);
	repair(&t);
	CHECK_EQ(ino_of(t.s, t.d, "f"), t.f);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &after), 0);
	CHECK_EQ(after, before);
	CHECK_EQ(attr_of(t.s, t.f).nlink, 2);
	CHECK_EQ(attr_of(t.s, t.d).size, 2);
	done(&t, LEFT_ALL);
}

static void test_repairs_dangling(void)
{
	struct tree t;
	uint8_t k[ID_KEY_LEN];
	struct ns_statfs st;

	t = tree_build();
	raw_del(t.s, k, key_id(k, K_INODE, t.f));
	repair(&t);
	CHECK_EQ(ino_of(t.s, t.d, "f"), 0);
	CHECK_EQ(ino_of(t.s, NS_ROOT_INO, "g"), 0);
	CHECK_EQ(attr_of(t.s, t.d).size, 1);
	CHECK_EQ(ns_statfs(t.s, &st), 0);
	CHECK_EQ(st.inodes, 6);
	done(&t, LEFT_ALL);
}

static void test_repairs_link_counts(void)
{
	struct tree t;
	struct ns_inode r;

	t = tree_build();
	CHECK_EQ(inode_load(t.s, t.f, &r), 0);
	r.nlink = 3;
	put_inode(t.s, &r);
	CHECK_EQ(inode_load(t.s, t.d, &r), 0);
	r.nlink = 2;
	r.nentries = 5;
	put_inode(t.s, &r);
	repair(&t);
	CHECK_EQ(attr_of(t.s, t.f).nlink, 2);
	CHECK_EQ(attr_of(t.s, t.d).nlink, 3);
	CHECK_EQ(attr_of(t.s, t.d).size, 2);
	done(&t, LEFT_ALL);
}

/* d loses its name: it goes into /lost+found, and everything below it
 * with it. */
static void test_repairs_orphans(void)
{
	struct tree t;
	char name[32];
	uint64_t lf;

	t = tree_build();
	del_entry(t.s, NS_ROOT_INO, "d", true);
	repair(&t);
	lf = ino_of(t.s, NS_ROOT_INO, "lost+found");
	CHECK(lf != 0);
	CHECK_EQ(attr_of(t.s, lf).type, NS_DIR);
	snprintf(name, sizeof(name), "#%llu", (unsigned long long)t.d);
	CHECK_EQ(ino_of(t.s, lf, name), t.d);
	CHECK_EQ(attr_of(t.s, t.d).parent, lf);
	CHECK_EQ(ino_of(t.s, t.d, "sub"), t.sub);
	CHECK_EQ(ino_of(t.s, t.d, "f"), t.f);
	CHECK_EQ(attr_of(t.s, NS_ROOT_INO).nlink, 3);
	done(&t, LEFT_ALL);
}

/* d moved under its own subdirectory (make_cycle): one of the
 * two goes into /lost+found, which makes the other reachable again. */
static void test_repairs_cycle(void)
{
	struct tree t = tree_build();
	uint64_t lf;

	make_cycle(&t);
	repair(&t);
	lf = ino_of(t.s, NS_ROOT_INO, "lost+found");
	CHECK(lf != 0);
	CHECK(attr_of(t.s, t.d).parent == lf || attr_of(t.s, t.sub).parent == lf);
	CHECK_EQ(attr_of(t.s, lf).size, 1);
	done(&t, LEFT_ALL);
}

/* A stray map's objects are owed removal: it becomes an intent. */
struct seen_intents {
	size_t n;
	uint64_t ino[4];
};

static int collect_intent(void *arg, const struct ns_intent *in)
{
	struct seen_intents *seen = arg;

	CHECK_EQ(in->len, 1);
	CHECK_MEM(in->blob, "m", 1);
	seen->ino[seen->n++ & 3] = in->ino;
	return 0;
}

static void test_repairs_stray_keys(void)
{
	struct tree t;
	uint8_t k[ID_KEY_LEN];
	struct seen_intents seen = { 0 };
	size_t len;
	char *v;

	t = tree_build();
	raw_put(t.s, k, key_id(k, K_DATA, t.d), "x", 1);
	raw_put(t.s, k, key_id(k, K_MAP, 99999), "m", 1);
	raw_put(t.s, k, key_id(k, K_SYMLINK, t.f), "t", 1);
	raw_put(t.s, k, key_id(k, K_MAP, t.small), "m", 1);
	repair(&t);
	CHECK_EQ(db_get(t.s, k, key_id(k, K_DATA, t.d), &v, &len), 0);
	CHECK(v == NULL);
	CHECK_EQ(ns_intent_list(t.s, 0, collect_intent, &seen), 0);
	CHECK_EQ(seen.n, 2);
	CHECK(seen.ino[0] == t.small || seen.ino[1] == t.small);
	CHECK(seen.ino[0] == 99999 || seen.ino[1] == 99999);
	done(&t, LEFT_ALL);
}

static void test_repairs_bad_records(void)
{
	struct tree t;
	uint8_t k[KEY_MAX];
	struct ns_attr a;

	t = tree_build();
	raw_put(t.s, k, key_id(k, K_INODE, t.lnk), "short", 5);
	raw_put(t.s, k, key_id(k, K_DATA, t.small), "abcd", 4);
	raw_del(t.s, k, key_id(k, K_MAP, t.obj));
	raw_put(t.s, k, key_id(k, K_INTENT, 5), "?", 1);
	raw_put(t.s, k, key_dirent(k, t.d, "bad", 3), "xx", 2);
	repair(&t);
	CHECK_EQ(ino_of(t.s, t.sub, "lnk"), 0);
	CHECK_EQ(ino_of(t.s, t.d, "bad"), 0);
	a = attr_of(t.s, t.obj);
	CHECK(!a.objects);
	/* The 4th inline byte was past the size: never readable, now gone. */
	CHECK_EQ(attr_of(t.s, t.small).inline_len, 3);
	done(&t, LOST_LINK | LOST_MAP);
}

static void test_repairs_counters(void)
{
	struct tree t;
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	struct ns_statfs st;
	uint64_t seq;

	t = tree_build();
	merge_add(b, C_INODES, 1);
	merge_add(b, C_BYTES, -1);
	CHECK_EQ(db_write(t.s, b, &seq), 0);
	rocksdb_writebatch_destroy(b);
	put_next_id(t.s, 3);
	repair(&t);
	CHECK_EQ(ns_statfs(t.s, &st), 0);
	CHECK_EQ(st.inodes, 7);
	CHECK_EQ(st.bytes, 3);
	CHECK(mkfile(t.s, NS_ROOT_INO, "new") > t.lnk);
	done(&t, LEFT_ALL);
}

static void test_repairs_seq_range(void)
{
	struct tree t;
	struct ns_inode d;
	uint64_t f, sub, fresh;

	t = tree_build();
	CHECK_EQ(inode_load(t.s, t.d, &d), 0);
	d.next_seq = NS_COOKIE_FIRST + 1;
	put_inode(t.s, &d);
	repair(&t);
	mkfile(t.s, t.d, "fresh");
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &f), 0);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "sub", &sub), 0);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "fresh", &fresh), 0);
	CHECK(fresh > f && fresh > sub);
	done(&t, LEFT_ALL);
}

/* ---- cases only the repair has ----------------------------------------- */

/* The next id went back below ids in use, and the store was reopened with
 * it: /lost+found, made for an orphan, must still get a fresh id. */
static void test_low_next_id_and_orphan(void)
{
	struct tree t;
	struct ns_options o = { .nosync = true };
	char name[32];
	uint64_t lf;

	t = tree_build();
	del_entry(t.s, NS_ROOT_INO, "small", true);
	put_next_id(t.s, 2);
	ns_close(t.s);
	CHECK_EQ(ns_open(t.path, &o, &t.s), 0);
	repair(&t);
	lf = ino_of(t.s, NS_ROOT_INO, "lost+found");
	CHECK(lf > t.lnk);
	snprintf(name, sizeof(name), "#%llu", (unsigned long long)t.small);
	CHECK_EQ(ino_of(t.s, lf, name), t.small);
	/* check_untouched finds small under its old name: give it back. */
	CHECK_EQ(ns_rename(t.s, lf, name, NS_ROOT_INO, "small"), 0);
	done(&t, LEFT_ALL);
}

/* Without a root record, its entries still name everything: a new root
 * takes them over. */
static void test_missing_root(void)
{
	struct tree t;
	uint8_t k[ID_KEY_LEN];

	t = tree_build();
	raw_del(t.s, k, key_id(k, K_INODE, NS_ROOT_INO));
	repair(&t);
	CHECK_EQ(attr_of(t.s, NS_ROOT_INO).type, NS_DIR);
	CHECK_EQ(attr_of(t.s, NS_ROOT_INO).size, 4);
	CHECK_EQ(ino_of(t.s, NS_ROOT_INO, "d"), t.d);
	CHECK_EQ(ino_of(t.s, NS_ROOT_INO, "lost+found"), 0);
	done(&t, LEFT_ALL);
}

/* A second name for d inside its own subtree: the name its parent field
 * does not agree with goes, and no cycle is left behind. */
static void test_directory_named_twice(void)
{
	struct tree t;
	struct dirent_rec e = { .seq = NS_COOKIE_FIRST + 5 };
	struct ns_inode sub;
	struct txn x;

	t = tree_build();
	e.ino = t.d;
	CHECK_EQ(inode_load(t.s, t.sub, &sub), 0);
	sub.next_seq = e.seq + 1;
	put_inode(t.s, &sub);
	txn_begin(&x, t.s);
	dirent_put(&x, t.sub, "up", 2, &e, NS_DIR);
	CHECK_EQ(txn_commit(&x, false), 0);
	repair(&t);
	CHECK_EQ(ino_of(t.s, t.sub, "up"), 0);
	CHECK_EQ(ino_of(t.s, NS_ROOT_INO, "d"), t.d);
	CHECK_EQ(ino_of(t.s, NS_ROOT_INO, "lost+found"), 0);
	done(&t, LEFT_ALL);
}

/* Two entries with one cookie: the second gets a new one. */
static void test_shared_cookie(void)
{
	struct tree t;
	struct dirent_rec d;
	uint8_t k[KEY_MAX], v[DIRENT_REC_LEN];
	uint64_t f, sub;

	t = tree_build();
	CHECK_EQ(dirent_get(t.s, t.d, "sub", 3, &d), 0);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &f), 0);
	d.seq = f;
	dirent_encode(&d, v);
	raw_put(t.s, k, key_dirent(k, t.d, "sub", 3), v, sizeof(v));
	repair(&t);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "f", &f), 0);
	CHECK_EQ(ns_lookup_cookie(t.s, t.d, "sub", &sub), 0);
	CHECK(f != sub);
	CHECK_EQ(ino_of(t.s, t.d, "sub"), t.sub);
	done(&t, LEFT_ALL);
}

/* "lost+found" taken by a file: the repair stops and says why. */
static void test_lost_found_taken(void)
{
	struct tree t;
	struct ns_check_result fixed;

	t = tree_build();
	mkfile(t.s, NS_ROOT_INO, "lost+found");
	del_entry(t.s, NS_ROOT_INO, "obj", true);
	CHECK_EQ(ns_repair(t.s, say_stderr, NULL, &fixed), -ENOTDIR);
	ns_close(t.s);
}

static void test_clean_store(void)
{
	struct tree t;
	struct ns_check_result fixed;

	t = tree_build();
	CHECK_EQ(ns_repair(t.s, say_stderr, NULL, &fixed), 0);
	CHECK_EQ(fixed.problems, 0);
	CHECK_EQ(fixed.inodes, 7);
	CHECK_EQ(fixed.dirents, 7);
	check_clean(t.s);
	done(&t, LEFT_ALL);
}

/* ---- maps, ids, progress ----------------------------------------------- */

struct seen_maps {
	int n;
	uint64_t ino[4];
	int stop_after;
};

static int collect_map(void *arg, uint64_t ino, const void *blob, size_t len)
{
	struct seen_maps *m = arg;

	CHECK_EQ(len, 4);
	CHECK_MEM(blob, "map", 3);
	m->ino[m->n++ & 3] = ino;
	return m->n == m->stop_after ? 42 : 0;
}

static void test_map_list(void)
{
	struct tree t;
	struct seen_maps m = { 0 };
	uint64_t other;

	t = tree_build();
	CHECK_EQ(ns_map_set(t.s, t.obj, 0, "map1", 4, NULL, 0, 0), 0);
	other = mkfile(t.s, NS_ROOT_INO, "other");
	CHECK_EQ(ns_map_set(t.s, other, 0, "map2", 4, NULL, 0, 0), 0);
	CHECK_EQ(ns_map_list(t.s, collect_map, &m), 0);
	CHECK_EQ(m.n, 2);
	CHECK_EQ(m.ino[0], t.obj);
	CHECK_EQ(m.ino[1], other);
	m = (struct seen_maps){ .stop_after = 1 };
	CHECK_EQ(ns_map_list(t.s, collect_map, &m), 42);
	CHECK_EQ(m.n, 1);
	/* A scrub resumes after the last inode it did. */
	m = (struct seen_maps){ 0 };
	CHECK_EQ(ns_map_list_from(t.s, t.obj, collect_map, &m), 0);
	CHECK_EQ(m.n, 1);
	CHECK_EQ(m.ino[0], other);
	m = (struct seen_maps){ 0 };
	CHECK_EQ(ns_map_list_from(t.s, t.obj - 1, collect_map, &m), 0);
	CHECK_EQ(m.n, 2);
	m = (struct seen_maps){ 0 };
	CHECK_EQ(ns_map_list_from(t.s, other, collect_map, &m), 0);
	CHECK_EQ(m.n, 0);
	CHECK_EQ(ns_map_list_from(t.s, UINT64_MAX, collect_map, &m), 0);
	CHECK_EQ(m.n, 0);
	ns_close(t.s);
}

static void test_ids_raise(void)
{
	struct tree t;
	struct ns_options o = { .nosync = true };
	uint64_t first;

	t = tree_build();
	CHECK_EQ(ns_ids_raise(t.s, 1000), 0);
	CHECK_EQ(ns_next_id(t.s), 1000);
	CHECK_EQ(ns_ids_raise(t.s, 10), 0);
	CHECK_EQ(ns_next_id(t.s), 1000);
	CHECK_EQ(ns_ids_reserve(t.s, 5, &first), 0);
	CHECK_EQ(first, 1000);
	ns_close(t.s);
	CHECK_EQ(ns_open(t.path, &o, &t.s), 0);
	CHECK(ns_next_id(t.s) >= 1005);
	check_clean(t.s);
	ns_close(t.s);
}

struct progress {
	uint64_t inodes, entries;
};

static void count_progress(void *arg, const char *what, uint64_t done_)
{
	struct progress *p = arg;

	CHECK_EQ(done_ % NS_PROGRESS_EVERY, 0);
	if (!strcmp(what, "inodes"))
		p->inodes = done_;
	else if (!strcmp(what, "entries"))
		p->entries = done_;
}

static void test_progress(void)
{
	struct tree t;
	struct progress p = { 0 };
	struct ns_check_result res;
	char name[32];

	t = tree_build();
	for (int i = 0; i < NS_PROGRESS_EVERY; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		mkfile(t.s, t.d, name);
	}
	ns_set_progress(t.s, count_progress, &p);
	CHECK_EQ(ns_check(t.s, NULL, NULL, &res), 0);
	CHECK_EQ(res.problems, 0);
	CHECK_EQ(p.inodes, NS_PROGRESS_EVERY);
	CHECK_EQ(p.entries, NS_PROGRESS_EVERY);
	p = (struct progress){ 0 };
	CHECK_EQ(ns_repair(t.s, NULL, NULL, &res), 0);
	CHECK_EQ(p.inodes, NS_PROGRESS_EVERY);
	ns_set_progress(t.s, NULL, NULL);
	p = (struct progress){ 0 };
	CHECK_EQ(ns_check(t.s, NULL, NULL, &res), 0);
	CHECK_EQ(p.inodes, 0);
	done(&t, LEFT_ALL);
}

int main(void)
{
	test_dir_init("repair");
	test_repairs_entry_without_index();
	test_repairs_index_without_entry();
	test_repairs_dangling();
	test_repairs_link_counts();
	test_repairs_orphans();
	test_repairs_cycle();
	test_repairs_stray_keys();
	test_repairs_bad_records();
	test_repairs_counters();
	test_repairs_seq_range();
	test_low_next_id_and_orphan();
	test_missing_root();
	test_directory_named_twice();
	test_shared_cookie();
	test_lost_found_taken();
	test_clean_store();
	test_map_list();
	test_ids_raise();
	test_progress();
	test_dir_done();
	CHECK_DONE();
}
