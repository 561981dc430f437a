/* Removal intents: the objects the namespace no longer points to but that
 * may still exist on the OSDs.  An intent is written in the same batch as
 * the change that orphans the objects, or before objects are created, so a
 * crash never leaks them; the FSAL's worker lists the intents at start and
 * as it goes, removes the objects (a missing object counts as removed), and
 * then marks the intent done. */
#include "ns_internal.h"

#include "byteorder.h"

int ns_intent_add(struct ns_store *s, uint64_t ino, const void *blob, size_t len, uint64_t *id)
{
	struct txn t;
	int rc;

	txn_begin(&t, s);
	rc = txn_intent(&t, ino, blob, len, id);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	return txn_commit(&t, true);
}

int ns_intent_list(struct ns_store *s, uint64_t after, ns_intent_fn fn, void *arg)
{
	uint8_t start[ID_KEY_LEN], end[1] = { K_INTENT + 1 };
	struct ns_intent in;
	struct db_iter i;
	int rc = 0;

	if (after == UINT64_MAX)
		return 0;
	key_id(start, K_INTENT, after + 1);
	for (iter_open(s, &i, start, sizeof(start), end, sizeof(end)); iter_valid(&i);
	     iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		rc = klen == ID_KEY_LEN ? intent_decode(get_be64(k + 1), v, vlen, &in) : -EIO;
		if (rc || fn(arg, &in))
			break;
	}
	if (rc)
		db_say(s, "bad intent record");
	if (iter_close(s, &i))
		rc = -EIO;
	return rc;
}

int ns_intent_done(struct ns_store *s, uint64_t id)
{
	uint8_t k[ID_KEY_LEN];

	return db_delete(s, k, key_id(k, K_INTENT, id));
}

int ns_intent_exists(struct ns_store *s, uint64_t id)
{
	uint8_t k[ID_KEY_LEN];
	size_t vlen = 0;
	char *v = NULL;
	int rc = db_get(s, k, key_id(k, K_INTENT, id), &v, &vlen);

	rocksdb_free(v);
	return rc ? rc : v != NULL;
}
