/* Damage records ('P' keys): components reported failing, per file and
 * OSD, kept until repair clears them (ns_store.h).
 *
 * Key 'P' ino(8) osd(4); value version u8 (1), status i32, opnum u32,
 * count u32, first and last report as u64 nanoseconds, flags u8 (1:
 * stale): 30 bytes. */
#include "ns_internal.h"

#include <string.h>

#include "byteorder.h"

static size_t damage_key(uint8_t *k, uint64_t ino, uint32_t osd)
{
	k[0] = K_DAMAGE;
	put_be64(k + 1, ino);
	put_be32(k + 9, osd);
	return DAMAGE_KEY_LEN;
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

static void damage_encode(const struct ns_damage *dr, uint8_t *v)
{
	v[0] = DAMAGE_REC_VERSION;
	put_be32(v + 1, (uint32_t)dr->status);
	put_be32(v + 5, dr->opnum);
	put_be32(v + 9, dr->count);
	put_be64(v + 13, ts_ns(&dr->first));
	put_be64(v + 21, ts_ns(&dr->last));
	v[29] = dr->stale ? 1 : 0;
}

int damage_decode(const uint8_t *k, size_t klen, const uint8_t *v, size_t vlen,
		  struct ns_damage *out)
{
	if (klen != DAMAGE_KEY_LEN || k[0] != K_DAMAGE || vlen != DAMAGE_REC_LEN ||
	    v[0] != DAMAGE_REC_VERSION || v[29] > 1)
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

void damage_drop_all(struct txn *t, uint64_t ino)
{
	uint8_t from[DAMAGE_KEY_LEN], to[DAMAGE_KEY_LEN];

	damage_key(from, ino, 0);
	damage_key(to, ino + 1, 0);
	rocksdb_writebatch_delete_range(t->b, (const char *)from, sizeof(from), (const char *)to,
					sizeof(to));
}

int ns_damage_add(struct ns_store *s, uint64_t ino, uint32_t osd_id, int32_t status, uint32_t opnum,
		  bool stale)
{
	uint8_t k[DAMAGE_KEY_LEN], v[DAMAGE_REC_LEN];
	struct ns_damage dr = { .ino = ino, .osd_id = osd_id };
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
		rc = db_get(s, k, damage_key(k, ino, osd_id), &old, &olen);
	if (!rc && old && damage_decode(k, sizeof(k), (uint8_t *)old, olen, &dr) != 0)
		dr = (struct ns_damage){ .ino = ino, .osd_id = osd_id };
	rocksdb_free(old);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	if (dr.count++ == 0)
		dr.first = t.now;
	dr.last = t.now;
	dr.status = status;
	dr.opnum = opnum;
	dr.stale |= stale;
	damage_encode(&dr, v);
	rocksdb_writebatch_put(t.b, (const char *)k, sizeof(k), (const char *)v, sizeof(v));
	return txn_commit(&t, true);
}

int ns_damage_list(struct ns_store *s, uint64_t ino, ns_damage_fn fn, void *arg)
{
	uint8_t prefix[9] = { K_DAMAGE };
	struct db_iter i;
	int rc = 0;

	put_be64(prefix + 1, ino);
	iter_open_prefix(s, &i, prefix, ino ? sizeof(prefix) : 1);
	for (; !rc && iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);
		struct ns_damage dr;

		if (damage_decode(k, klen, v, vlen, &dr)) {
			db_say(s, "bad damage record");
			rc = -EIO;
		} else if (fn(arg, &dr)) {
			break;
		}
	}
	return iter_close(s, &i) ? -EIO : rc;
}

int ns_damage_clear(struct ns_store *s, uint64_t ino, uint32_t osd_id)
{
	uint8_t k[DAMAGE_KEY_LEN];
	struct txn t;

	txn_begin(&t, s);
	txn_lock(&t, &ino, 1);
	rocksdb_writebatch_delete(t.b, (const char *)k, damage_key(k, ino, osd_id));
	return txn_commit(&t, true);
}
