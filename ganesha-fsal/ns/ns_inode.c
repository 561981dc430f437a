/* Inode lifecycle: load, birth with a fresh id and generation, losing a
 * link, and death, which takes the inode's data, target, storage map and
 * policy with it and leaves a removal intent for its objects in the same
 * batch. */
#include "ns_internal.h"

#include <stdlib.h>
#include <string.h>

int inode_load(struct ns_store *s, uint64_t ino, struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN];
	size_t vlen;
	char *v;
	int rc = db_get(s, k, key_id(k, K_INODE, ino), &v, &vlen);

	if (rc)
		return rc;
	if (!v)
		return -ESTALE;
	rc = inode_decode(ino, (const uint8_t *)v, vlen, r);
	rocksdb_free(v);
	if (rc)
		db_say(s, "inode %llu: bad record", (unsigned long long)ino);
	return rc;
}

void inode_to_attr(const struct ns_inode *r, struct ns_attr *a)
{
	a->ino = r->ino;
	a->gen = r->gen;
	a->type = r->type;
	a->mode = r->mode;
	a->nlink = r->nlink;
	a->uid = r->uid;
	a->gid = r->gid;
	a->size = r->type == NS_DIR ? r->nentries : r->size;
	a->rdev_major = (uint32_t)(r->rdev >> 32);
	a->rdev_minor = (uint32_t)r->rdev;
	a->change = r->change;
	a->parent = r->parent;
	a->inline_len = r->inline_len;
	a->objects = r->flags & IF_OBJECTS;
	a->has_verf = r->flags & IF_VERF;
	a->junction = r->flags & IF_JUNCTION;
	memcpy(a->verf, r->verf, NS_VERF_LEN);
	a->atime = r->atime;
	a->mtime = r->mtime;
	a->ctime = r->ctime;
	a->btime = r->btime;
}

/* A generation nobody can guess from the id: splitmix64 over a counter
 * seeded at random when the store opens.  Never 0, so a zeroed handle is
 * always stale. */
static uint32_t gen_next(struct ns_store *s)
{
	uint64_t z = atomic_fetch_add(&s->gen_seed, 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (uint32_t)z ? (uint32_t)z : 1;
}

struct ns_inode *inode_new(struct txn *t, uint8_t type, const struct ns_new *in)
{
	struct ns_inode *r = txn_fresh_inode(t);

	r->type = type;
	r->mode = in->mode & 07777;
	r->uid = in->uid;
	r->gid = in->gid;
	r->nlink = type == NS_DIR ? 2 : 1;
	r->gen = gen_next(t->s);
	if (type == NS_CHR || type == NS_BLK)
		r->rdev = (uint64_t)in->rdev_major << 32 | in->rdev_minor;
	r->change = 1;
	r->next_seq = NS_COOKIE_FIRST;
	r->atime = r->mtime = r->ctime = r->btime = t->now;
	return r;
}

/* One name fewer.  A directory has only the one, so it is gone. */
void inode_unlink(struct txn *t, struct ns_inode *r)
{
	r->nlink = r->type == NS_DIR ? 0 : r->nlink - 1;
	txn_touch(t, r);
}

/* The file's objects go to a removal intent and its map goes: the worker
 * removes them later. */
int inode_release_map(struct txn *t, struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN];
	size_t klen = key_id(k, K_MAP, r->ino), len;
	uint64_t id;
	char *map;
	int rc = db_get(t->s, k, klen, &map, &len);

	if (rc)
		return rc;
	if (map)
		rc = txn_intent(t, r->ino, map, len, &id);
	rocksdb_free(map);
	rocksdb_writebatch_delete(t->b, (const char *)k, klen);
	/* Damage records name components of the map that just went. */
	damage_drop_all(t, r->ino);
	r->flags &= ~IF_OBJECTS;
	return rc;
}

/* Deletes the inode and what hangs off it.  old_inline: the inline length
 * the transaction found, in case the op shortened it first. */
int inode_drop(struct txn *t, struct ns_inode *r, uint32_t old_inline)
{
	uint8_t k[ID_KEY_LEN];

	rocksdb_writebatch_delete(t->b, (const char *)k, key_id(k, K_INODE, r->ino));
	policy_drop(t, r->ino);
	junction_drop(t, r);
	if (r->type == NS_LNK)
		rocksdb_writebatch_delete(t->b, (const char *)k, key_id(k, K_SYMLINK, r->ino));
	if (old_inline || r->inline_len)
		rocksdb_writebatch_delete(t->b, (const char *)k, key_id(k, K_DATA, r->ino));
	if (r->flags & IF_OBJECTS)
		return inode_release_map(t, r);
	return 0;
}
