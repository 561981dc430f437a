/* Storage maps: where an object-backed file's data lives.  The map is an
 * opaque blob the layout library makes and reads; the store only keeps it
 * with the inode and hands orphaned objects to removal intents. */
#include "ns_internal.h"

#include "byteorder.h"

/* Why a file has no map. */
static int no_map(struct ns_store *s, uint64_t ino)
{
	struct ns_inode r;
	int rc = inode_load(s, ino, &r);

	if (rc)
		return rc;
	return r.type == NS_REG ? -ENODATA : -EINVAL;
}

int ns_map_get(struct ns_store *s, uint64_t ino, void **map, size_t *len)
{
	int rc = db_get_blob(s, K_MAP, ino, map, len);

	return rc == -ENOENT ? no_map(s, ino) : rc;
}

static int map_target_ok(const struct ns_inode *r, uint64_t expect_change)
{
	if (r->type == NS_DIR)
		return -EISDIR;
	if (r->type != NS_REG)
		return -EINVAL;
	if (expect_change && r->change != expect_change)
		return -EAGAIN;
	return 0;
}

/* An inline file becomes object-backed: the caller copied its data out. */
static void leave_inline(struct txn *t, struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN];

	if (r->inline_len)
		rocksdb_writebatch_delete(t->b, (const char *)k, key_id(k, K_DATA, r->ino));
	r->inline_len = 0;
	r->flags |= IF_OBJECTS;
}

static int map_set(struct ns_store *s, uint64_t ino, uint64_t expect_change, const void *map,
		   size_t len, const void *orphans, size_t olen, uint64_t claim, bool durable)
{
	uint8_t k[ID_KEY_LEN];
	struct ns_inode *r;
	struct txn t;
	uint64_t id;
	int rc;

	if (!map || !len)
		return -EINVAL;
	txn_begin(&t, s);
	txn_lock(&t, &ino, 1);
	rc = txn_inode(&t, ino, &r);
	if (!rc)
		rc = map_target_ok(r, expect_change);
	if (!rc && orphans && olen)
		rc = txn_intent(&t, ino, orphans, olen, &id);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	if (!(r->flags & IF_OBJECTS))
		leave_inline(&t, r);
	rocksdb_writebatch_put(t.b, (const char *)k, key_id(k, K_MAP, ino), map, len);
	if (claim)
		rocksdb_writebatch_delete(t.b, (const char *)k, key_id(k, K_INTENT, claim));
	txn_touch(&t, r);
	return txn_commit(&t, durable);
}

int ns_map_set(struct ns_store *s, uint64_t ino, uint64_t expect_change, const void *map,
	       size_t len, const void *orphans, size_t olen, uint64_t claim)
{
	return map_set(s, ino, expect_change, map, len, orphans, olen, claim, true);
}

int ns_map_claim_empty(struct ns_store *s, uint64_t ino, uint64_t expect_change, const void *map,
		       size_t len, uint64_t claim)
{
	return map_set(s, ino, expect_change, map, len, NULL, 0, claim, false);
}

int ns_map_list_from(struct ns_store *s, uint64_t after, ns_map_fn fn, void *arg)
{
	uint8_t start[ID_KEY_LEN], end[1] = { K_MAP };
	struct db_iter i;
	uint64_t n = 0;
	int rc = 0;

	if (after == UINT64_MAX)
		return 0;
	key_id(start, K_MAP, after + 1);
	prefix_end(end, 1);
	iter_open(s, &i, start, sizeof(start), end, 1);
	for (; !rc && iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		walk_progress(s, K_MAP, ++n);
		/* ns_check reports a malformed key. */
		if (klen == ID_KEY_LEN)
			rc = fn(arg, get_be64(k + 1), v, vlen);
	}
	return iter_close(s, &i) ? -EIO : rc;
}

int ns_map_list(struct ns_store *s, ns_map_fn fn, void *arg)
{
	return ns_map_list_from(s, 0, fn, arg);
}
