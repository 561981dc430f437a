/* Partitions: a record each in the index, and no files of their own. */
#include "objstore_internal.h"

#include "byteorder.h"

int objstore_partition_create(struct objstore *s, uint64_t partition)
{
	uint8_t k[KEY_MAX], v[PART_REC_LEN];
	size_t klen = key_part(k, K_PART, partition);
	int rc;

	if (!partition)
		return -EINVAL;
	v[0] = PART_REC_VERSION;
	put_be64(v + 1, now_ns());
	pthread_mutex_lock(&s->meta_lock);
	rc = db_exists(s, k, klen);
	if (rc == 0)
		rc = db_put(s, k, klen, v, sizeof(v));
	else if (rc > 0)
		rc = -EEXIST;
	if (!rc)
		atomic_fetch_add(&s->npartitions, 1);
	pthread_mutex_unlock(&s->meta_lock);
	return rc;
}

static int part_empty(struct objstore *s, uint64_t partition)
{
	uint8_t start[KEY_MAX], end[KEY_MAX];
	struct db_iter i;
	bool empty;
	int rc;

	key_part(start, K_OBJ, partition);
	key_part(end, K_OBJ, partition);
	prefix_end(end, 9);
	iter_open(s, &i, start, 9, end, 9);
	empty = !iter_valid(&i);
	rc = iter_close(&i);
	return rc ? rc : empty ? 0 : -ENOTEMPTY;
}

/* The partition's 'N' key stays: ids handed out before are never handed
 * out again, even to a partition of the same id. */
int objstore_partition_remove(struct objstore *s, uint64_t partition)
{
	uint8_t k[KEY_MAX];
	int rc;

	if (!partition)
		return -EINVAL;
	pthread_mutex_lock(&s->meta_lock);
	rc = part_exists(s, partition);
	if (!rc)
		rc = part_empty(s, partition);
	if (!rc)
		rc = db_delete(s, k, key_part(k, K_PART, partition));
	if (!rc)
		atomic_fetch_sub(&s->npartitions, 1);
	pthread_mutex_unlock(&s->meta_lock);
	return rc;
}

int objstore_partition_list(struct objstore *s, uint64_t after, uint64_t *ids, size_t max,
			    size_t *n, bool *eof)
{
	uint8_t prefix = K_PART;

	return db_list_ids(s, &prefix, 1, after, ids, max, n, eof);
}
