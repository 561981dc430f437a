/* The merge operator behind the counters and the id allocator.  Operations
 * that run in parallel each put a delta into their own batch; RocksDB
 * folds them in whatever order the batches land, so no lock spans the
 * write and a crash keeps exactly the deltas of the batches it kept.
 *
 *   'C' keys   add: the value and every operand are i64 deltas
 *   'N' key    max: the next id never goes back, whichever batch of two
 *              concurrent creates reaches the log first
 *
 * Values and operands are 8 bytes, big-endian. */
#include "ns_internal.h"

#include <stdlib.h>

#include "byteorder.h"

static uint64_t fold(bool max, uint64_t acc, uint64_t v)
{
	if (max)
		return v > acc ? v : acc;
	return acc + v; /* two's complement: adds signed deltas */
}

static char *merge(const char *key, size_t klen, const char *base, size_t blen,
		   const char *const *ops, const size_t *oplens, int n, unsigned char *ok,
		   size_t *outlen)
{
	bool max = klen > 0 && key[0] == K_NEXT;
	uint64_t acc = 0;
	uint8_t *out;

	*ok = 0;
	if (base && blen != 8)
		return NULL;
	if (base)
		acc = get_be64((const uint8_t *)base);
	for (int i = 0; i < n; i++) {
		if (oplens[i] != 8)
			return NULL;
		acc = fold(max, acc, get_be64((const uint8_t *)ops[i]));
	}
	out = malloc(8);
	if (!out)
		return NULL;
	put_be64(out, acc);
	*ok = 1;
	*outlen = 8;
	return (char *)out;
}

static char *full_merge(void *state, const char *key, size_t klen, const char *base, size_t blen,
			const char *const *ops, const size_t *oplens, int n, unsigned char *ok,
			size_t *outlen)
{
	return merge(key, klen, base, blen, ops, oplens, n, ok, outlen);
}

/* Both folds are associative, so operands combine like a base-less merge. */
static char *partial_merge(void *state, const char *key, size_t klen, const char *const *ops,
			   const size_t *oplens, int n, unsigned char *ok, size_t *outlen)
{
	return merge(key, klen, NULL, 0, ops, oplens, n, ok, outlen);
}

static void delete_value(void *state, const char *v, size_t len)
{
	free((void *)v);
}

static const char *merge_name(void *state)
{
	return "pando.ns.counter";
}

static void no_state(void *state)
{
}

rocksdb_mergeoperator_t *merge_operator(void)
{
	return rocksdb_mergeoperator_create(NULL, no_state, full_merge, partial_merge, delete_value,
					    merge_name);
}

void merge_add_key(rocksdb_writebatch_t *b, const uint8_t *k, size_t klen, int64_t delta)
{
	uint8_t v[8];

	put_be64(v, (uint64_t)delta);
	rocksdb_writebatch_merge(b, (const char *)k, klen, (const char *)v, 8);
}

void merge_add(rocksdb_writebatch_t *b, uint8_t which, int64_t delta)
{
	uint8_t k[2];

	merge_add_key(b, k, key_counter(k, which), delta);
}

void merge_next_id(rocksdb_writebatch_t *b, uint64_t next)
{
	uint8_t k = K_NEXT, v[8];

	put_be64(v, next);
	rocksdb_writebatch_merge(b, (const char *)&k, 1, (const char *)v, 8);
}
