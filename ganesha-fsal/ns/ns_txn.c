/* Transactions: every mutating operation is one of these.
 *
 *   txn_begin   a fresh write batch
 *   txn_lock    the inode locks, all at once, in stripe order (no deadlock)
 *   txn_inode   loads an inode once, however often the op names it (a
 *               rename's source and target directory may be the same)
 *   ...         the op changes the loaded records and adds keys to the batch
 *   txn_commit  writes the records that changed, deletes the ones left
 *               without a link, adds the statfs counter deltas and the next
 *               id, writes the batch, unlocks, then waits for the disk
 *
 * Counters are derived here from each record's before and after, so no
 * operation has to remember to keep them. */
#include "ns_internal.h"

#include <stdlib.h>
#include <string.h>

void txn_begin(struct txn *t, struct ns_store *s)
{
	t->s = s;
	t->b = rocksdb_writebatch_create();
	t->nstripes = 0;
	t->nslots = 0;
	t->top_id = 0;
	t->past_quota = false;
	clock_gettime(CLOCK_REALTIME, &t->now);
}

static unsigned stripe_of(uint64_t ino)
{
	return (unsigned)((ino * 0x9e3779b97f4a7c15ull) >> 54); /* 10 bits */
}

static void stripe_add(struct txn *t, unsigned st)
{
	int i = t->nstripes;

	for (int j = 0; j < t->nstripes; j++)
		if (t->stripes[j] == st)
			return;
	for (; i > 0 && t->stripes[i - 1] > st; i--)
		t->stripes[i] = t->stripes[i - 1];
	t->stripes[i] = st;
	t->nstripes++;
}

/* Called once per transaction, before anything is loaded. */
void txn_lock(struct txn *t, const uint64_t *inos, int n)
{
	for (int i = 0; i < n; i++)
		stripe_add(t, stripe_of(inos[i]));
	for (int i = 0; i < t->nstripes; i++)
		pthread_mutex_lock(&t->s->stripes[t->stripes[i]]);
	/* Under the lock, so times on one inode never run backwards. */
	clock_gettime(CLOCK_REALTIME, &t->now);
}

static void txn_end(struct txn *t)
{
	for (int i = t->nstripes - 1; i >= 0; i--)
		pthread_mutex_unlock(&t->s->stripes[t->stripes[i]]);
	t->nstripes = 0;
	rocksdb_writebatch_destroy(t->b);
	t->b = NULL;
}

void txn_abort(struct txn *t)
{
	txn_end(t);
}

/* ---- inodes ---------------------------------------------------------- */

int txn_inode(struct txn *t, uint64_t ino, struct ns_inode **out)
{
	struct txn_slot *sl;
	int rc;

	for (int i = 0; i < t->nslots; i++) {
		if (t->slot[i].rec.ino == ino) {
			*out = &t->slot[i].rec;
			return 0;
		}
	}
	if (t->nslots == TXN_INODES)
		return -EIO;
	sl = &t->slot[t->nslots];
	rc = inode_load(t->s, ino, &sl->rec);
	if (rc)
		return rc;
	inode_encode(&sl->rec, sl->raw);
	sl->old_size = sl->rec.size;
	sl->old_inline = sl->rec.inline_len;
	sl->old_uid = sl->rec.uid;
	sl->old_gid = sl->rec.gid;
	sl->fresh = false;
	t->nslots++;
	*out = &sl->rec;
	return 0;
}

int txn_dir(struct txn *t, uint64_t ino, struct ns_inode **out)
{
	int rc = txn_inode(t, ino, out);

	return !rc && (*out)->type != NS_DIR ? -ENOTDIR : rc;
}

static uint64_t txn_new_id(struct txn *t)
{
	uint64_t id = atomic_fetch_add(&t->s->next_id, 1);

	if (id > t->top_id)
		t->top_id = id;
	return id;
}

uint64_t txn_reserve_ids(struct txn *t, uint32_t n)
{
	uint64_t first = atomic_fetch_add(&t->s->next_id, n);

	if (first + n - 1 > t->top_id)
		t->top_id = first + n - 1;
	return first;
}

/* A zeroed record with a new id, written at commit.  Only creates make
 * one, beside the one directory they load: always a free slot. */
struct ns_inode *txn_fresh_inode(struct txn *t)
{
	struct txn_slot *sl = &t->slot[t->nslots++];

	memset(sl, 0, sizeof(*sl));
	sl->fresh = true;
	sl->rec.ino = txn_new_id(t);
	return &sl->rec;
}

/* Attributes changed. */
void txn_touch(struct txn *t, struct ns_inode *r)
{
	r->ctime = t->now;
	r->change++;
}

/* Contents changed: data, or a directory's entries. */
void txn_touch_data(struct txn *t, struct ns_inode *r)
{
	r->mtime = t->now;
	txn_touch(t, r);
}

/* ---- intents --------------------------------------------------------- */

int txn_intent(struct txn *t, uint64_t ino, const void *blob, size_t len, uint64_t *id)
{
	uint8_t k[ID_KEY_LEN], *v = malloc(INTENT_REC_HDR + len);

	if (!v)
		return -ENOMEM;
	*id = txn_new_id(t);
	intent_encode_hdr(ino, NS_INTENT_REMOVE, v);
	memcpy(v + INTENT_REC_HDR, blob, len);
	rocksdb_writebatch_put(t->b, (const char *)k, key_id(k, K_INTENT, *id), (const char *)v,
			       INTENT_REC_HDR + len);
	free(v);
	return 0;
}

/* ---- commit ---------------------------------------------------------- */

static void count(struct usage_delta *d, const struct txn_slot *sl, bool gone)
{
	const struct ns_inode *r = &sl->rec;

	owners_count(d, sl, gone);
	if (sl->fresh)
		d->inodes++;
	else if (gone)
		d->inodes--;
	if (r->type != NS_REG)
		return;
	d->bytes += (int64_t)(gone ? 0 : r->size) - (int64_t)sl->old_size;
	d->inline_bytes += (int64_t)(gone ? 0 : r->inline_len) - (int64_t)sl->old_inline;
}

static int stage_slot(struct txn *t, struct txn_slot *sl, struct usage_delta *d)
{
	uint8_t k[ID_KEY_LEN], v[INODE_REC_LEN];
	bool gone = sl->rec.nlink == 0;

	count(d, sl, gone);
	if (gone)
		return inode_drop(t, &sl->rec, sl->old_inline);
	inode_encode(&sl->rec, v);
	if (!sl->fresh && memcmp(v, sl->raw, sizeof(v)) == 0)
		return 0;
	rocksdb_writebatch_put(t->b, (const char *)k, key_id(k, K_INODE, sl->rec.ino),
			       (const char *)v, sizeof(v));
	return 0;
}

static int stage(struct txn *t, struct usage_delta *d)
{
	int rc = 0;

	for (int i = 0; !rc && i < t->nslots; i++)
		rc = stage_slot(t, &t->slot[i], d);
	if (rc)
		return rc;
	if (d->inodes)
		merge_add(t->b, C_INODES, d->inodes);
	if (d->bytes)
		merge_add(t->b, C_BYTES, d->bytes);
	if (d->inline_bytes)
		merge_add(t->b, C_INLINE, d->inline_bytes);
	owners_stage(t->b, d);
	if (t->top_id)
		merge_next_id(t->b, t->top_id + 1);
	return 0;
}

/* Ends the transaction whatever happens.  durable: the op is one NFS
 * requires stable before the reply. */
int txn_commit(struct txn *t, bool durable)
{
	struct usage_delta d = { 0 };
	uint64_t seq = 0;
	int rc = stage(t, &d);

	if (!rc)
		rc = t->past_quota ? db_write(t->s, t->b, &seq) : quota_write(t->s, t->b, &d, &seq);
	txn_end(t);
	if (!rc && durable && !t->s->nosync)
		rc = sync_upto(t->s, seq);
	return rc;
}
