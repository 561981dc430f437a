/* Per-file marks the manager acts on at start, one key kind each
 * (ns_store.h says why each exists):
 *   'W' ino(8): the file has (or had) write layouts out;
 *   'U' ino(8): an RS row update of the file is (or was) under way.
 * Value: version u8 (1). */
#include "ns_internal.h"

#include "byteorder.h"

#define MARK_REC_VERSION 1

static int mark_add(struct ns_store *s, uint8_t kind, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN], v = MARK_REC_VERSION;
	struct txn t;

	if (ino == 0)
		return -EINVAL;
	txn_begin(&t, s);
	rocksdb_writebatch_put(t.b, (const char *)k, key_id(k, kind, ino), (const char *)&v, 1);
	return txn_commit(&t, true);
}

static int mark_del(struct ns_store *s, uint8_t kind, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];

	return db_delete(s, k, key_id(k, kind, ino));
}

static int mark_list(struct ns_store *s, uint8_t kind, ns_ino_fn fn, void *arg)
{
	uint8_t prefix[1] = { kind };
	struct db_iter i;
	int rc = 0;

	iter_open_prefix(s, &i, prefix, sizeof(prefix));
	for (; iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		if (klen != ID_KEY_LEN || vlen != 1 || v[0] != MARK_REC_VERSION) {
			db_say(s, "bad file mark record: skipped");
			rc = -EIO;
			continue;
		}
		if (fn(arg, get_be64(k + 1)))
			break;
	}
	if (iter_close(s, &i))
		rc = -EIO;
	return rc;
}

int ns_wlayout_add(struct ns_store *s, uint64_t ino)
{
	return mark_add(s, K_WLAYOUT, ino);
}

int ns_wlayout_del(struct ns_store *s, uint64_t ino)
{
	return mark_del(s, K_WLAYOUT, ino);
}

int ns_wlayout_list(struct ns_store *s, ns_ino_fn fn, void *arg)
{
	return mark_list(s, K_WLAYOUT, fn, arg);
}

int ns_write_hole_add(struct ns_store *s, uint64_t ino)
{
	return mark_add(s, K_ROWS, ino);
}

int ns_write_hole_del(struct ns_store *s, uint64_t ino)
{
	return mark_del(s, K_ROWS, ino);
}

int ns_write_hole_list(struct ns_store *s, ns_ino_fn fn, void *arg)
{
	return mark_list(s, K_ROWS, fn, arg);
}
