/* Per-file marks the manager acts on at start, one key kind each
 * (ns_store.h says why each exists):
 *   'W' ino(8): the file has (or had) write layouts out;
 *   'U' ino(8): an RS row update of the file is (or was) under way.
 * Value: version u8 (1). */
#include "ns_internal.h"

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

static bool mark_value_ok(const uint8_t *v, size_t len)
{
	return len == 1 && v[0] == MARK_REC_VERSION;
}

static int mark_list(struct ns_store *s, uint8_t kind, ns_ino_fn fn, void *arg)
{
	return db_list_ids(s, kind, mark_value_ok, fn, arg);
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
