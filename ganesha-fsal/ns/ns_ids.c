/* The id allocator, seen from outside the store: inode, intent and object
 * ids all come from one counter ('N', a max merge), so none is ever handed
 * out twice.  Transactions take ids with txn_reserve_ids (ns_txn.c). */
#include "ns_internal.h"

uint64_t ns_next_id(struct ns_store *s)
{
	return atomic_load(&s->next_id);
}

int ns_ids_raise(struct ns_store *s, uint64_t next)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t cur = atomic_load(&s->next_id), seq;
	int rc;

	while (cur < next && !atomic_compare_exchange_weak(&s->next_id, &cur, next))
		;
	/* A max merge: ids handed out meanwhile keep it where they put it. */
	merge_next_id(b, cur > next ? cur : next);
	rc = db_write(s, b, &seq);
	rocksdb_writebatch_destroy(b);
	return rc ? rc : sync_upto(s, seq);
}

int ns_ids_reserve(struct ns_store *s, uint32_t n, uint64_t *first)
{
	struct txn t;

	if (n == 0 || n > (1u << 20))
		return -EINVAL;
	txn_begin(&t, s);
	*first = txn_reserve_ids(&t, n);
	return txn_commit(&t, false);
}
