/* The small clean tree test_ns_check and test_ns_repair break, and the
 * ways they break it: raw writes and deletes behind the store's back, as a
 * crash or a bug would leave them. */
#ifndef PANDO_NS_CORRUPT_H
#define PANDO_NS_CORRUPT_H

#include "ns_test.h"

#include "byteorder.h"
#include "ns_internal.h"

/* /d/f (also named /g), /d/sub, /d/sub/lnk -> ../f, /small with three
 * inline bytes, /obj with a storage map "map". */
struct tree {
	struct ns_store *s;
	char path[128];
	uint64_t d, f, sub, lnk, small, obj;
};

static inline struct tree tree_build(void)
{
	struct tree t = { 0 };

	t.s = test_store(t.path, sizeof(t.path), NULL);
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

static inline void raw_put(struct ns_store *s, const uint8_t *k, size_t klen, const void *v,
			   size_t vlen)
{
	char *err = NULL;

	rocksdb_put(s->db, s->wopts, (const char *)k, klen, v, vlen, &err);
	CHECK(err == NULL);
}

static inline void raw_del(struct ns_store *s, const uint8_t *k, size_t klen)
{
	char *err = NULL;

	rocksdb_delete(s->db, s->wopts, (const char *)k, klen, &err);
	CHECK(err == NULL);
}

/* Overwrites an inode record as it is, counts and all. */
static inline void put_inode(struct ns_store *s, const struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN], v[INODE_REC_LEN];

	inode_encode(r, v);
	raw_put(s, k, key_id(k, K_INODE, r->ino), v, sizeof(v));
}

/* Deletes a directory entry, and its readdir index entry if index. */
static inline void del_entry(struct ns_store *s, uint64_t dir, const char *name, bool index)
{
	uint8_t k[KEY_MAX];
	struct dirent_rec d;

	CHECK_EQ(dirent_get(s, dir, name, strlen(name), &d), 0);
	raw_del(s, k, key_dirent(k, dir, name, strlen(name)));
	if (index)
		raw_del(s, k, key_index(k, dir, d.seq));
}

/* Sets the stored next id (the base of its max merge). */
static inline void put_next_id(struct ns_store *s, uint64_t next)
{
	uint8_t k = K_NEXT, v[8];

	put_be64(v, next);
	raw_put(s, &k, 1, v, sizeof(v));
}

/* Cuts /d from the root and names it "loop" in its own subdirectory, the
 * counts and parents made to agree: a cycle no path from the root reaches,
 * which only the walk from the root can tell. */
static inline void make_cycle(struct tree *t)
{
	struct dirent_rec e = { .ino = t->d, .seq = NS_COOKIE_FIRST + 1 };
	struct ns_inode root, d, sub;
	struct txn x;

	del_entry(t->s, NS_ROOT_INO, "d", true);
	CHECK_EQ(inode_load(t->s, NS_ROOT_INO, &root), 0);
	CHECK_EQ(inode_load(t->s, t->d, &d), 0);
	CHECK_EQ(inode_load(t->s, t->sub, &sub), 0);
	root.nlink--;
	root.nentries--;
	sub.nlink++;
	sub.nentries++;
	sub.next_seq++;
	d.parent = t->sub;
	put_inode(t->s, &root);
	put_inode(t->s, &d);
	put_inode(t->s, &sub);
	txn_begin(&x, t->s);
	dirent_put(&x, t->sub, "loop", 4, &e, NS_DIR);
	CHECK_EQ(txn_commit(&x, false), 0);
}

#endif
