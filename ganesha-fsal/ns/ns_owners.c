/* What each user and each group uses, and their quotas.
 *
 * Every batch that changes an inode's size, owner or existence adds its
 * deltas to the counters of the owners before and after (merge operands,
 * as the store's counters): 'C' 'o' kind id(4) 'i' | 'b'.  'C' 'o' alone
 * says the counters are kept: a store formatted before them has none, and
 * the first open counts them from the inodes (owners_ready).
 *
 * An owner's quota is 'Q' kind id(4), the store's record (ns_quota.c).
 * The batch that grows an owner past it fails as one that grows the store
 * past its own; the check runs under quota_lock with the store's, and
 * whether any owner has a quota is cached with the store's quota, so a
 * store without one reads nothing more per batch. */
#include "ns_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"

/* ---- a batch's deltas ------------------------------------------------ */

static void add(struct usage_delta *d, enum ns_owner_kind kind, uint32_t id, int64_t inodes,
		int64_t bytes)
{
	for (int i = 0; i < d->nowners; i++) {
		struct owner_delta *x = &d->owner[i];

		if (x->o.kind == kind && x->o.id == id) {
			x->inodes += inodes;
			x->bytes += bytes;
			return;
		}
	}
	d->owner[d->nowners++] = (struct owner_delta){ { kind, id }, inodes, bytes };
}

void owners_count(struct usage_delta *d, const struct txn_slot *sl, bool gone)
{
	const struct ns_inode *r = &sl->rec;
	bool reg = r->type == NS_REG;

	if (!sl->fresh) {
		add(d, NS_OWNER_USER, sl->old_uid, -1, reg ? -(int64_t)sl->old_size : 0);
		add(d, NS_OWNER_GROUP, sl->old_gid, -1, reg ? -(int64_t)sl->old_size : 0);
	}
	if (!gone) {
		add(d, NS_OWNER_USER, r->uid, 1, reg ? (int64_t)r->size : 0);
		add(d, NS_OWNER_GROUP, r->gid, 1, reg ? (int64_t)r->size : 0);
	}
}

void owners_stage(rocksdb_writebatch_t *b, const struct usage_delta *d)
{
	uint8_t k[OWNER_COUNTER_KEY_LEN];

	for (int i = 0; i < d->nowners; i++) {
		const struct owner_delta *x = &d->owner[i];

		if (x->inodes)
			merge_add_key(b, k, key_owner_counter(k, &x->o, C_INODES), x->inodes);
		if (x->bytes)
			merge_add_key(b, k, key_owner_counter(k, &x->o, C_BYTES), x->bytes);
	}
}

/* ---- quotas ---------------------------------------------------------- */

static int used_of(struct ns_store *s, const struct ns_owner *o, struct ns_quota *used)
{
	uint8_t k[OWNER_COUNTER_KEY_LEN];
	int rc = db_get_u64(s, k, key_owner_counter(k, o, C_INODES), &used->files);

	return rc ? rc : db_get_u64(s, k, key_owner_counter(k, o, C_BYTES), &used->bytes);
}

static int owner_within(struct ns_store *s, const struct owner_delta *x)
{
	uint8_t k[OWNER_QUOTA_KEY_LEN];
	struct ns_quota q, used;
	int rc = quota_record_read(s, k, key_owner_quota(k, &x->o), &q);

	if (rc || (!q.files && !q.bytes))
		return rc;
	rc = used_of(s, &x->o, &used);
	if (rc)
		return rc;
	if (q.files && x->inodes > 0 && used.files + (uint64_t)x->inodes > q.files)
		return -EDQUOT;
	if (q.bytes && x->bytes > 0 && used.bytes + (uint64_t)x->bytes > q.bytes)
		return -EDQUOT;
	return 0;
}

int owners_within(struct ns_store *s, const struct usage_delta *d)
{
	int rc = 0;

	for (int i = 0; !rc && i < d->nowners; i++)
		if (d->owner[i].inodes > 0 || d->owner[i].bytes > 0)
			rc = owner_within(s, &d->owner[i]);
	return rc;
}

int owners_any_quota(struct ns_store *s, bool *any)
{
	uint8_t q = K_QUOTA;
	struct db_iter i;

	iter_open_prefix(s, &i, &q, 1);
	*any = false;
	for (; !*any && iter_valid(&i); iter_next(&i)) {
		size_t klen;

		iter_key(&i, &klen);
		*any = klen > 1;
	}
	return iter_close(s, &i);
}

static int shrink_room(struct ns_store *s, const struct ns_owner *o, uint64_t *room)
{
	uint8_t k[OWNER_QUOTA_KEY_LEN];
	struct ns_quota q, u;
	int rc = quota_record_read(s, k, key_owner_quota(k, o), &q);

	if (rc || !q.bytes)
		return rc;
	rc = used_of(s, o, &u);
	if (!rc && (u.bytes >= q.bytes || q.bytes - u.bytes < *room))
		*room = u.bytes >= q.bytes ? 0 : q.bytes - u.bytes;
	return rc;
}

int ns_quota_room(struct ns_store *s, uint32_t uid, uint32_t gid, uint64_t *room)
{
	struct ns_quota q;
	uint64_t used;
	uint8_t k[2];
	int rc;

	*room = UINT64_MAX;
	pthread_mutex_lock(&s->quota_lock);
	rc = quota_cached(s, &q);
	if (!rc && q.bytes) {
		rc = db_get_u64(s, k, key_counter(k, C_BYTES), &used);
		*room = used < q.bytes ? q.bytes - used : 0;
	}
	if (!rc && s->owner_quotas)
		rc = shrink_room(s, &(struct ns_owner){ NS_OWNER_USER, uid }, room);
	if (!rc && s->owner_quotas)
		rc = shrink_room(s, &(struct ns_owner){ NS_OWNER_GROUP, gid }, room);
	pthread_mutex_unlock(&s->quota_lock);
	return rc;
}

static bool kind_ok(const struct ns_owner *o)
{
	return o->kind == NS_OWNER_USER || o->kind == NS_OWNER_GROUP;
}

int ns_owner_quota_set(struct ns_store *s, const struct ns_owner *o, const struct ns_quota *q)
{
	uint8_t k[OWNER_QUOTA_KEY_LEN], v[QUOTA_REC_LEN];
	size_t klen;
	rocksdb_writebatch_t *b;
	uint64_t seq = 0;
	int rc;

	if (!kind_ok(o))
		return -EINVAL;
	klen = key_owner_quota(k, o);
	quota_record_encode(q, v);
	b = rocksdb_writebatch_create();
	if (q->bytes || q->files)
		rocksdb_writebatch_put(b, (const char *)k, klen, (const char *)v, sizeof(v));
	else
		rocksdb_writebatch_delete(b, (const char *)k, klen);
	pthread_mutex_lock(&s->quota_lock);
	rc = db_write(s, b, &seq);
	atomic_store(&s->quota_known, false);
	pthread_mutex_unlock(&s->quota_lock);
	rocksdb_writebatch_destroy(b);
	return rc ? rc : sync_upto(s, seq);
}

int ns_owner_quota_get(struct ns_store *s, const struct ns_owner *o, struct ns_quota *q,
		       struct ns_quota *used)
{
	uint8_t k[OWNER_QUOTA_KEY_LEN];
	int rc;

	if (!kind_ok(o))
		return -EINVAL;
	rc = quota_record_read(s, k, key_owner_quota(k, o), q);
	return rc ? rc : used_of(s, o, used);
}

int ns_owner_quota_list(struct ns_store *s, ns_owner_quota_fn fn, void *arg)
{
	uint8_t p = K_QUOTA;
	struct db_iter i;
	int rc = 0, crc;

	iter_open_prefix(s, &i, &p, 1);
	for (; !rc && iter_valid(&i); iter_next(&i)) {
		struct ns_quota q, used;
		struct ns_owner o;
		size_t klen;
		const uint8_t *k = iter_key(&i, &klen);

		if (klen == 1)
			continue;
		if (!owner_of_key(k, klen, &o))
			rc = -EBADMSG;
		if (!rc)
			rc = ns_owner_quota_get(s, &o, &q, &used);
		if (!rc)
			rc = fn(arg, &o, &q, &used);
	}
	crc = iter_close(s, &i);
	return rc ? rc : crc;
}

/* ---- sums from the inodes -------------------------------------------- */

static size_t slot_of(const struct owner_sums *t, const struct ns_owner *o)
{
	uint64_t h = ((uint64_t)o->kind << 32 | o->id) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 32) & (t->cap - 1);

	while (t->v[i].used && (t->v[i].o.kind != o->kind || t->v[i].o.id != o->id))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct owner_sums *t)
{
	struct owner_sums bigger = { calloc(t->cap ? t->cap * 2 : 64, sizeof(struct owner_sum)),
				     t->n, t->cap ? t->cap * 2 : 64 };

	if (!bigger.v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].used)
			bigger.v[slot_of(&bigger, &t->v[i].o)] = t->v[i];
	free(t->v);
	*t = bigger;
	return 0;
}

static int add_sum(struct owner_sums *t, enum ns_owner_kind kind, uint32_t id, uint64_t bytes)
{
	struct ns_owner o = { kind, id };
	struct owner_sum *x;

	if ((t->n + 1) * 2 > t->cap && grow(t))
		return -ENOMEM;
	x = &t->v[slot_of(t, &o)];
	if (!x->used) {
		*x = (struct owner_sum){ .o = o, .used = true };
		t->n++;
	}
	x->inodes++;
	x->bytes += bytes;
	return 0;
}

int owner_sums_add(struct owner_sums *t, const struct ns_inode *r)
{
	uint64_t bytes = r->type == NS_REG ? r->size : 0;
	int rc = add_sum(t, NS_OWNER_USER, r->uid, bytes);

	return rc ? rc : add_sum(t, NS_OWNER_GROUP, r->gid, bytes);
}

const struct owner_sum *owner_sums_find(const struct owner_sums *t, const struct ns_owner *o)
{
	const struct owner_sum *x;

	if (!t->cap)
		return NULL;
	x = &t->v[slot_of(t, o)];
	return x->used ? x : NULL;
}

void owner_sums_free(struct owner_sums *t)
{
	free(t->v);
	*t = (struct owner_sums){ 0 };
}

void owner_sums_stage(rocksdb_writebatch_t *b, const struct owner_sums *t)
{
	uint8_t from[3] = { K_COUNTER, C_OWNERS, 0 }, to[2] = { K_COUNTER, C_OWNERS }, v[8];
	uint8_t k[OWNER_COUNTER_KEY_LEN];

	prefix_end(to, sizeof(to));
	rocksdb_writebatch_delete_range(b, (const char *)from, sizeof(from), (const char *)to,
					sizeof(to));
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->v[i].used)
			continue;
		put_be64(v, t->v[i].inodes);
		rocksdb_writebatch_put(b, (const char *)k,
				       key_owner_counter(k, &t->v[i].o, C_INODES), (const char *)v,
				       sizeof(v));
		put_be64(v, t->v[i].bytes);
		rocksdb_writebatch_put(b, (const char *)k,
				       key_owner_counter(k, &t->v[i].o, C_BYTES), (const char *)v,
				       sizeof(v));
	}
	put_be64(v, 1);
	rocksdb_writebatch_put(b, (const char *)k, key_counter(k, C_OWNERS), (const char *)v,
			       sizeof(v));
}

/* ---- a store from before owner counters ------------------------------ */

static int sum_inodes(struct ns_store *s, struct owner_sums *t, uint64_t *n)
{
	uint8_t p = K_INODE;
	struct db_iter i;
	int rc = 0, crc;

	iter_open_prefix(s, &i, &p, 1);
	for (*n = 0; !rc && iter_valid(&i); iter_next(&i), (*n)++) {
		struct ns_inode r;
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		/* An undecodable inode is ns_check's to report; it counts for
		 * nobody here as it counts for nothing in the statfs sums. */
		if (klen == ID_KEY_LEN && inode_decode(get_be64(k + 1), v, vlen, &r) == 0)
			rc = owner_sums_add(t, &r);
	}
	crc = iter_close(s, &i);
	return rc ? rc : crc;
}

int owners_ready(struct ns_store *s)
{
	struct owner_sums t = { 0 };
	uint64_t marker, n;
	uint8_t k[2];
	int rc = db_get_u64(s, k, key_counter(k, C_OWNERS), &marker);

	if (rc || marker)
		return rc;
	rc = sum_inodes(s, &t, &n);
	if (!rc) {
		db_say(s,
		       "counting each owner's usage, which this store never kept: %llu inodes, "
		       "%zu users and groups",
		       (unsigned long long)n, t.n);
		rc = owner_sums_write(s, &t);
	}
	owner_sums_free(&t);
	return rc;
}

/* ---- ns_check and ns_repair ------------------------------------------ */

static const char *kind_name(enum ns_owner_kind kind)
{
	return kind == NS_OWNER_USER ? "user" : "group";
}

static int compare_sum(struct ns_store *s, const struct owner_sum *x, owner_bad_fn bad, void *arg,
		       uint64_t *nbad)
{
	struct ns_quota have;
	char msg[160];
	int rc = used_of(s, &x->o, &have);

	if (rc || (have.files == x->inodes && have.bytes == x->bytes))
		return rc;
	snprintf(msg, sizeof(msg), "%s %u: counters %llu inodes, %llu bytes; counted %llu, %llu",
		 kind_name(x->o.kind), x->o.id, (unsigned long long)have.files,
		 (unsigned long long)have.bytes, (unsigned long long)x->inodes,
		 (unsigned long long)x->bytes);
	bad(arg, msg);
	(*nbad)++;
	return 0;
}

/* Counters of owners no inode names: wrong unless 0. */
static int compare_unnamed(struct ns_store *s, const struct owner_sums *t, owner_bad_fn bad,
			   void *arg, uint64_t *nbad)
{
	uint8_t p[2] = { K_COUNTER, C_OWNERS };
	struct db_iter i;
	char msg[160];

	iter_open_prefix(s, &i, p, sizeof(p));
	for (; iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);
		struct ns_owner o;

		if (klen == sizeof(p) || (owner_of_key(k, klen, &o) && owner_sums_find(t, &o)))
			continue;
		if (owner_of_key(k, klen, &o) && vlen == 8 && get_be64(v) == 0)
			continue;
		if (owner_of_key(k, klen, &o))
			snprintf(msg, sizeof(msg), "%s %u: counter %s for an owner of no inode",
				 kind_name(o.kind), o.id, k[7] == C_INODES ? "inodes" : "bytes");
		else
			snprintf(msg, sizeof(msg), "malformed owner counter key");
		bad(arg, msg);
		(*nbad)++;
	}
	return iter_close(s, &i);
}

int owner_sums_compare(struct ns_store *s, const struct owner_sums *t, owner_bad_fn bad, void *arg,
		       uint64_t *nbad)
{
	uint8_t k[2];
	uint64_t marker;
	int rc = db_get_u64(s, k, key_counter(k, C_OWNERS), &marker);

	*nbad = 0;
	if (!rc && !marker) {
		bad(arg, "the owners' counters are not kept");
		(*nbad)++;
	}
	for (size_t i = 0; !rc && i < t->cap; i++)
		if (t->v[i].used)
			rc = compare_sum(s, &t->v[i], bad, arg, nbad);
	return rc ? rc : compare_unnamed(s, t, bad, arg, nbad);
}

int owner_sums_write(struct ns_store *s, const struct owner_sums *t)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t seq = 0;
	int rc;

	owner_sums_stage(b, t);
	rc = db_write(s, b, &seq);
	rocksdb_writebatch_destroy(b);
	return rc ? rc : sync_upto(s, seq);
}
