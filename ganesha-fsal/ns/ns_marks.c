/* Files with write layouts out ('W' keys, ns_store.h says why).
 *
 * Key 'W' ino(8); value version u8 (1). */
#include "ns_internal.h"

#include "byteorder.h"

#define WLAYOUT_REC_VERSION 1

int ns_wlayout_add(struct ns_store *s, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN], v = WLAYOUT_REC_VERSION;
	struct txn t;

	if (ino == 0)
		return -EINVAL;
	txn_begin(&t, s);
	rocksdb_writebatch_put(t.b, (const char *)k, key_id(k, K_WLAYOUT, ino),
			       (const char *)&v, 1);
	return txn_commit(&t, true);
}

int ns_wlayout_del(struct ns_store *s, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];
	char *err = NULL;

	rocksdb_delete(s->db, s->wopts, (const char *)k, key_id(k, K_WLAYOUT, ino), &err);
	return err ? db_err(s, "delete write-layout record", err) : 0;
}

int ns_wlayout_list(struct ns_store *s, ns_ino_fn fn, void *arg)
{
	uint8_t prefix[1] = { K_WLAYOUT };
	struct db_iter i;
	int rc = 0;

	iter_open_prefix(s, &i, prefix, sizeof(prefix));
	for (; iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		if (klen != ID_KEY_LEN || vlen != 1 || v[0] != WLAYOUT_REC_VERSION) {
			db_say(s, "bad write-layout record: skipped");
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
