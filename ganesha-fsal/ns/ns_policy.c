/* Storage policies: one opaque blob per inode ('Y' ino(8)), which the
 * layout library makes and reads (layout/include/pando/policy.h).  A new
 * inode takes its directory's blob in the batch that makes it, so what a
 * file is laid out as is fixed when it is made; the blob goes in the batch
 * that frees its inode. */
#include "ns_internal.h"

int ns_policy_set(struct ns_store *s, uint64_t ino, const void *blob, size_t len)
{
	uint8_t k[ID_KEY_LEN];
	size_t klen = key_id(k, K_POLICY, ino);
	struct ns_inode *r;
	struct txn t;
	int rc;

	if (len > NS_POLICY_MAX || (len && !blob))
		return -EINVAL;
	/* Clearing frees room: allowed below the reserve. */
	rc = len ? space_for_growth(s) : 0;
	if (rc)
		return rc;
	/* Under the inode's lock, so a create in this directory sees the
	 * blob before or after, never half. */
	txn_begin(&t, s);
	txn_lock(&t, &ino, 1);
	rc = txn_inode(&t, ino, &r);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	if (len)
		rocksdb_writebatch_put(t.b, (const char *)k, klen, blob, len);
	else
		rocksdb_writebatch_delete(t.b, (const char *)k, klen);
	return txn_commit(&t, true);
}

int ns_policy_get(struct ns_store *s, uint64_t ino, void **blob, size_t *len)
{
	return db_get_blob(s, K_POLICY, ino, blob, len);
}

/* The caller holds dir's lock, so the blob cannot change under it. */
int policy_inherit(struct txn *t, uint64_t dir, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];
	size_t len;
	char *v;
	int rc = db_get(t->s, k, key_id(k, K_POLICY, dir), &v, &len);

	if (rc || !v)
		return rc;
	rocksdb_writebatch_put(t->b, (const char *)k, key_id(k, K_POLICY, ino), v, len);
	rocksdb_free(v);
	return 0;
}

void policy_drop(struct txn *t, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];

	rocksdb_writebatch_delete(t->b, (const char *)k, key_id(k, K_POLICY, ino));
}
