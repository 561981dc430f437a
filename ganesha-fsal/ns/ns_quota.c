/* The store's quota ('Q'): at most so many bytes (the regular files'
 * sizes, as ns_statfs sums them) and so many inodes.  A batch that would
 * take the store past either fails with -EDQUOT when it commits, with
 * nothing of it written; batches that shrink usage always pass, so a
 * store over a lowered quota can be cleaned up.
 *
 * Value, 17 bytes: u8 version (1), u64 bytes, u64 files, big-endian; 0: no
 * limit.  The check and the write it allows happen under quota_lock, so
 * two growing batches never both take the last room.  The key is cached
 * (s->quota), so a batch that grows usage on a store without a quota
 * reads nothing more than one that does not. */
#include "ns_internal.h"

#include <string.h>

#include "byteorder.h"

#define QUOTA_REC_VERSION 1

void quota_record_encode(const struct ns_quota *q, uint8_t *v)
{
	v[0] = QUOTA_REC_VERSION;
	put_be64(v + 1, q->bytes);
	put_be64(v + 9, q->files);
}

int quota_record_read(struct ns_store *s, const uint8_t *k, size_t klen, struct ns_quota *q)
{
	char *v = NULL;
	size_t len = 0;
	int rc = db_get(s, k, klen, &v, &len);

	memset(q, 0, sizeof(*q));
	if (rc || !v)
		return rc;
	if (len != QUOTA_REC_LEN || v[0] != QUOTA_REC_VERSION)
		rc = -EBADMSG;
	else
		*q = (struct ns_quota){ get_be64((const uint8_t *)v + 1),
					get_be64((const uint8_t *)v + 9) };
	rocksdb_free(v);
	return rc;
}

static int quota_read(struct ns_store *s, struct ns_quota *q)
{
	uint8_t k = K_QUOTA;

	return quota_record_read(s, &k, 1, q);
}

/* Under quota_lock.  quota_known is set before the read, so a batch
 * applied meanwhile (which clears it after its write) makes the next
 * call read again. */
int quota_cached(struct ns_store *s, struct ns_quota *q)
{
	int rc;

	if (atomic_exchange(&s->quota_known, true)) {
		*q = s->quota;
		return 0;
	}
	rc = quota_read(s, &s->quota);
	if (!rc)
		rc = owners_any_quota(s, &s->owner_quotas);
	if (rc)
		atomic_store(&s->quota_known, false);
	*q = s->quota;
	return rc;
}

int ns_quota_get(struct ns_store *s, struct ns_quota *q)
{
	int rc;

	pthread_mutex_lock(&s->quota_lock);
	rc = quota_cached(s, q);
	pthread_mutex_unlock(&s->quota_lock);
	return rc;
}

int ns_quota_set(struct ns_store *s, const struct ns_quota *q)
{
	uint8_t k = K_QUOTA, v[QUOTA_REC_LEN];
	rocksdb_writebatch_t *b;
	uint64_t seq = 0;
	int rc;

	quota_record_encode(q, v);
	b = rocksdb_writebatch_create();
	if (q->bytes || q->files)
		rocksdb_writebatch_put(b, (const char *)&k, 1, (const char *)v, sizeof(v));
	else
		rocksdb_writebatch_delete(b, (const char *)&k, 1);
	pthread_mutex_lock(&s->quota_lock);
	rc = db_write(s, b, &seq);
	if (!rc)
		s->quota = *q;
	pthread_mutex_unlock(&s->quota_lock);
	rocksdb_writebatch_destroy(b);
	return rc ? rc : sync_upto(s, seq);
}

/* -EDQUOT if counter `which` plus delta passes limit (0: none); reads
 * the counter only when a limit applies. */
static int past_limit(struct ns_store *s, uint8_t which, uint64_t limit, int64_t delta)
{
	uint8_t k[2];
	uint64_t used;
	int rc;

	if (!limit || delta <= 0)
		return 0;
	rc = db_get_u64(s, k, key_counter(k, which), &used);
	if (rc)
		return rc;
	return used + (uint64_t)delta > limit ? -EDQUOT : 0;
}

/* Whether usage plus what a batch adds stays within q. */
static int within(struct ns_store *s, const struct ns_quota *q, int64_t inodes, int64_t bytes)
{
	int rc = past_limit(s, C_INODES, q->files, inodes);

	return rc ? rc : past_limit(s, C_BYTES, q->bytes, bytes);
}

static bool grows(const struct usage_delta *d)
{
	if (d->inodes > 0 || d->bytes > 0)
		return true;
	for (int i = 0; i < d->nowners; i++)
		if (d->owner[i].inodes > 0 || d->owner[i].bytes > 0)
			return true;
	return false;
}

int quota_write(struct ns_store *s, rocksdb_writebatch_t *b, const struct usage_delta *d,
		uint64_t *seq)
{
	struct ns_quota q;
	int rc;

	if (!grows(d))
		return db_write(s, b, seq);
	pthread_mutex_lock(&s->quota_lock);
	rc = quota_cached(s, &q);
	if (!rc)
		rc = within(s, &q, d->inodes, d->bytes);
	if (!rc && s->owner_quotas)
		rc = owners_within(s, d);
	if (!rc)
		rc = db_write(s, b, seq);
	pthread_mutex_unlock(&s->quota_lock);
	return rc;
}
