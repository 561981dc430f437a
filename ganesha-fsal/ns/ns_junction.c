/* Junctions: a directory in the root that stands for a volume another
 * manager group serves.  It is made a junction (ns_mkjunction, in
 * ns_create.c) and stays one until removed, so no handle a server has
 * cached ever sees a directory turn into one.  It holds one opaque blob
 * ('J' ino(8)), which the manager makes and reads (../mds/junction.h),
 * and IF_JUNCTION in its inode flags, so that creates, links and renames
 * into it are refused from the record they already load: a client that
 * crosses it is sent on (a referral), and one that cannot follow must not
 * leave files here that no client of the volume would see.  It is never
 * renamed, nor replaced by a rename (EXDEV: it is another volume): the
 * blob names the path clients are referred from.  The blob goes in the batch
 * that frees the inode. */
#include "ns_internal.h"

int ns_junction_get(struct ns_store *s, uint64_t ino, void **blob, size_t *len)
{
	return db_get_blob(s, K_JUNCTION, ino, blob, len);
}

int ns_junction_list(struct ns_store *s, ns_ino_fn fn, void *arg)
{
	return db_list_ids(s, K_JUNCTION, NULL, fn, arg);
}

void junction_put(struct txn *t, struct ns_inode *r, const void *blob, size_t len)
{
	uint8_t k[ID_KEY_LEN];

	rocksdb_writebatch_put(t->b, (const char *)k, key_id(k, K_JUNCTION, r->ino), blob, len);
	r->flags |= IF_JUNCTION;
}

int txn_dir_open(struct txn *t, uint64_t ino, struct ns_inode **out)
{
	int rc = txn_dir(t, ino, out);

	return !rc && ((*out)->flags & IF_JUNCTION) ? -EROFS : rc;
}

void junction_drop(struct txn *t, const struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN];

	if (r->flags & IF_JUNCTION)
		rocksdb_writebatch_delete(t->b, (const char *)k, key_id(k, K_JUNCTION, r->ino));
}
