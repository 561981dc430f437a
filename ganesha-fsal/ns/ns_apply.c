/* A standby applying the active's journal (ns_store.h, ns_apply).
 *
 * The bytes are checked before RocksDB sees them.  RocksDB does not
 * check a batch before writing it: given a malformed one, rocksdb_write
 * puts it in the WAL, inserts the records before the bad one, moves the
 * sequence number by whatever count the header claims, fails with
 * Corruption, refuses every later write, and then refuses to open the
 * database at all (measured with 7.8: truncated, wrong count, bad tag,
 * lengths past the end, random bytes).  So a batch is accepted only if it
 * parses as RocksDB would parse it (db/write_batch.cc): the header, then
 * exactly count records, each of a kind the store writes with its
 * length-prefixed strings inside the bytes, and nothing after.  Merges
 * must be the store's own (a counter or the next id, 8-byte operand), and
 * a put there 8 bytes too: anything else would fail every later read and
 * compaction of the key.
 *
 * The applied seq is the 'A' key, a u64 the active's journal_commit puts
 * last in every batch it journals (its own seq), followed by a u64, the
 * term of the leadership that wrote it, where the journal has terms, so
 * applying a batch records both in the same RocksDB write: a crash keeps
 * both or neither.
 * The standby then assigns each batch the sequence numbers the active
 * did, and a standby that takes over goes on where the active was. */
#include "ns_internal.h"

#include <string.h>

#include "byteorder.h"

/* RocksDB's record tags (db/dbformat.h) of the kinds the store writes. */
enum { TAG_DELETE = 0x0, TAG_PUT = 0x1, TAG_MERGE = 0x2, TAG_DELETE_RANGE = 0xf };

#define BATCH_HDR 12
#define SEQ_MAX ((1ull << 56) - 1) /* RocksDB's kMaxSequenceNumber */

/* RocksDB's fixed-width integers are little-endian. */
static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

struct span {
	const uint8_t *p;
	size_t len;
};

/* A varint32-prefixed string, decoded as RocksDB's GetVarint32 does. */
static int get_string(const uint8_t **p, const uint8_t *end, struct span *out)
{
	uint32_t v = 0;

	for (int shift = 0;; shift += 7) {
		uint8_t c;

		if (*p == end || shift > 28)
			return -EINVAL;
		c = *(*p)++;
		v |= (uint32_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	if (v > (size_t)(end - *p))
		return -EINVAL;
	out->p = *p;
	out->len = v;
	*p += v;
	return 0;
}

static int span_cmp(const struct span *a, const struct span *b)
{
	int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The keys whose values are u64s the merge operator folds (ns_merge.c):
 * a merge goes nowhere else, and a put there is 8 bytes, or every later
 * read and compaction of the key would fail. */
static bool merged_key(const struct span *k)
{
	struct ns_owner o;

	return (k->len == 1 && k->p[0] == K_NEXT) || (k->len == 2 && k->p[0] == K_COUNTER) ||
	       (k->p[0] == K_COUNTER && owner_of_key(k->p, k->len, &o));
}

struct record {
	uint8_t tag;
	struct span k, v;
};

static int check_record(const uint8_t **p, const uint8_t *end, struct record *r)
{
	bool ok;

	r->tag = *(*p)++;
	if (get_string(p, end, &r->k) || r->k.len == 0)
		return -EINVAL;
	if (r->tag == TAG_DELETE)
		return 0;
	if (get_string(p, end, &r->v))
		return -EINVAL;
	switch (r->tag) {
	case TAG_PUT:
		ok = !merged_key(&r->k) || r->v.len == 8;
		break;
	case TAG_MERGE:
		ok = merged_key(&r->k) && r->v.len == 8;
		break;
	case TAG_DELETE_RANGE: /* [k, v): an empty or inverted range is not ours */
		ok = span_cmp(&r->k, &r->v) < 0;
		break;
	default:
		ok = false;
	}
	return ok ? 0 : -EINVAL;
}

/* The journal's batches end by setting the applied seq to their own
 * (and the term, when there is one). */
static bool sets_applied(const struct record *r, uint64_t last)
{
	return r->tag == TAG_PUT && r->k.len == 1 && r->k.p[0] == K_APPLIED &&
	       (r->v.len == 8 || r->v.len == 16) && get_be64(r->v.p) == last;
}

static uint64_t term_of(const struct record *r)
{
	return r->v.len == 16 ? get_be64(r->v.p + 8) : 0;
}

int batch_check(const void *batch, size_t len, uint64_t *first, uint64_t *last, uint64_t *term)
{
	const uint8_t *p = batch, *end = p + len;
	struct record r = { 0 };
	uint32_t count, n = 0;

	if (!batch || len < BATCH_HDR)
		return -EINVAL;
	*first = get_le(p, 8);
	count = (uint32_t)get_le(p + 8, 4);
	if (*first == 0 || *first > SEQ_MAX || count == 0 || count - 1 > SEQ_MAX - *first)
		return -EINVAL;
	*last = *first + count - 1;
	for (p += BATCH_HDR; p < end; n++) {
		if (n == count || check_record(&p, end, &r))
			return -EINVAL;
	}
	if (n != count || !sets_applied(&r, *last))
		return -EINVAL;
	*term = term_of(&r);
	return 0;
}

/* ---- the applied seq ----------------------------------------------------- */

int applied_load(struct ns_store *s)
{
	uint8_t k = K_APPLIED;
	size_t vlen;
	char *v;
	int rc;

	if (s->applied_known)
		return 0;
	rc = db_get(s, &k, 1, &v, &vlen);
	if (rc)
		return rc;
	if (!v)
		return -ENOENT;
	if (vlen == 8 || vlen == 16) {
		s->applied_seq = get_be64((const uint8_t *)v);
		s->applied_term = vlen == 16 ? get_be64((const uint8_t *)v + 8) : 0;
		s->applied_known = true;
	} else {
		db_say(s, "malformed applied seq");
		rc = -EIO;
	}
	rocksdb_free(v);
	return rc;
}

void applied_put(rocksdb_writebatch_t *b, uint64_t seq, uint64_t term)
{
	uint8_t k = K_APPLIED, v[16];

	put_be64(v, seq);
	put_be64(v + 8, term);
	rocksdb_writebatch_put(b, (const char *)&k, 1, (const char *)v, term ? 16 : 8);
}

int ns_applied_seq(struct ns_store *s, uint64_t *seq)
{
	uint64_t term;

	return ns_applied(s, seq, &term);
}

int ns_applied(struct ns_store *s, uint64_t *seq, uint64_t *term)
{
	int rc;

	pthread_mutex_lock(&s->commit_lock);
	rc = applied_load(s);
	if (!rc) {
		*seq = s->applied_seq;
		*term = s->applied_term;
	}
	pthread_mutex_unlock(&s->commit_lock);
	return rc;
}

/* ---- apply ------------------------------------------------------------- */

static int apply_locked(struct ns_store *s, const void *batch, size_t len, uint64_t first,
			uint64_t last, uint64_t term, uint64_t *seq)
{
	rocksdb_writebatch_t *b;
	int rc = applied_load(s);

	if (rc)
		return rc;
	if (last <= s->applied_seq)
		return -EALREADY;
	if (first != s->applied_seq + 1)
		return -ERANGE;
	atomic_store(&s->applying, true);
	b = rocksdb_writebatch_create_from(batch, len);
	rc = db_write_local(s, b, seq);
	rocksdb_writebatch_destroy(b);
	atomic_store(&s->quota_known, false);
	if (!rc) {
		s->applied_seq = last;
		s->applied_term = term;
	}
	return rc;
}

int ns_apply(struct ns_store *s, const void *batch, size_t len)
{
	uint64_t first, last, term, seq;
	int rc = batch_check(batch, len, &first, &last, &term);

	if (rc)
		return rc;
	if (s->journal.append)
		return -EPERM;
	pthread_mutex_lock(&s->commit_lock);
	rc = apply_locked(s, batch, len, first, last, term, &seq);
	pthread_mutex_unlock(&s->commit_lock);
	if (!rc && !s->nosync)
		rc = sync_upto(s, seq);
	return rc;
}
