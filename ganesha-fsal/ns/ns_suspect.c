/* Damage records ('P' keys): components reported failing, per file and
 * OSD, kept until repair clears them (ns_store.h).
 *
 * Key 'P' ino(8) osd(4); value version u8 (1), status i32, opnum u32,
 * count u32, first and last report as u64 nanoseconds, flags u8 (1:
 * stale): 30 bytes. */
#include "ns_internal.h"

#include <string.h>

#include "byteorder.h"

static size_t suspect_key(uint8_t *k, uint64_t ino, uint32_t osd)
{
	k[0] = K_SUSPECT;
	put_be64(k + 1, ino);
	put_be32(k + 9, osd);
	return SUSPECT_KEY_LEN;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static struct timespec ns_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
				  .tv_nsec = (long)(ns % 1000000000ull) };
}

static void suspect_encode(const struct ns_suspect *sp, uint8_t *v)
{
	v[0] = SUSPECT_REC_VERSION;
	put_be32(v + 1, (uint32_t)sp->status);
	put_be32(v + 5, sp->opnum);
	put_be32(v + 9, sp->count);
	put_be64(v + 13, ts_ns(&sp->first));
	put_be64(v + 21, ts_ns(&sp->last));
	v[29] = sp->stale ? 1 : 0;
}

int suspect_decode(const uint8_t *k, size_t klen, const uint8_t *v, size_t vlen,
		   struct ns_suspect *out)
{
	if (klen != SUSPECT_KEY_LEN || k[0] != K_SUSPECT || vlen != SUSPECT_REC_LEN ||
	    v[0] != SUSPECT_REC_VERSION || v[29] > 1)
		return -EIO;
	out->ino = get_be64(k + 1);
	out->osd_id = get_be32(k + 9);
	out->status = (int32_t)get_be32(v + 1);
	out->opnum = get_be32(v + 5);
	out->count = get_be32(v + 9);
	out->first = ns_ts(get_be64(v + 13));
	out->last = ns_ts(get_be64(v + 21));
	out->stale = v[29] == 1;
	return 0;
}

void suspect_drop_all(struct txn *t, uint64_t ino)
{
	uint8_t from[SUSPECT_KEY_LEN], to[SUSPECT_KEY_LEN];

	suspect_key(from, ino, 0);
	suspect_key(to, ino + 1, 0);
	rocksdb_writebatch_delete_range(t->b, (const char *)from, sizeof(from), (const char *)to,
					sizeof(to));
}

int ns_suspect_add(struct ns_store *s, uint64_t ino, uint32_t osd_id, int32_t status,
		   uint32_t opnum, bool stale)
{
	uint8_t k[SUSPECT_KEY_LEN], v[SUSPECT_REC_LEN];
	struct ns_suspect sp = { .ino = ino, .osd_id = osd_id };
	struct ns_inode *r;
	struct txn t;
	char *old = NULL;
	size_t olen = 0;
	int rc;

	txn_begin(&t, s);
	txn_lock(&t, &ino, 1);
	rc = txn_inode(&t, ino, &r);
	if (!rc && !(r->type == NS_REG && (r->flags & IF_OBJECTS)))
		rc = -ENODATA;
	if (!rc)
		rc = db_get(s, k, suspect_key(k, ino, osd_id), &old, &olen);
	if (!rc && old && suspect_decode(k, sizeof(k), (uint8_t *)old, olen, &sp) != 0)
		sp = (struct ns_suspect){ .ino = ino, .osd_id = osd_id };
	rocksdb_free(old);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	if (sp.count++ == 0)
		sp.first = t.now;
	sp.last = t.now;
	sp.status = status;
	sp.opnum = opnum;
	sp.stale |= stale;
	suspect_encode(&sp, v);
	rocksdb_writebatch_put(t.b, (const char *)k, sizeof(k), (const char *)v, sizeof(v));
	return txn_commit(&t, true);
}

int ns_suspect_list(struct ns_store *s, uint64_t ino, ns_suspect_fn fn, void *arg)
{
	uint8_t prefix[9] = { K_SUSPECT };
	struct db_iter i;
	int rc = 0;

	put_be64(prefix + 1, ino);
	iter_open_prefix(s, &i, prefix, ino ? sizeof(prefix) : 1);
	for (; !rc && iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);
		struct ns_suspect sp;

		if (suspect_decode(k, klen, v, vlen, &sp)) {
			db_say(s, "bad damage record");
			rc = -EIO;
		} else if (fn(arg, &sp)) {
			break;
		}
	}
	return iter_close(s, &i) ? -EIO : rc;
}

int ns_suspect_clear(struct ns_store *s, uint64_t ino, uint32_t osd_id)
{
	uint8_t k[SUSPECT_KEY_LEN];
	struct txn t;

	txn_begin(&t, s);
	txn_lock(&t, &ino, 1);
	rocksdb_writebatch_delete(t.b, (const char *)k, suspect_key(k, ino, osd_id));
	return txn_commit(&t, true);
}
