#include "rpc_record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bufpool.h"
#include "byteorder.h"

#define LAST_FRAGMENT 0x80000000u

void rpc_record_init(struct rpc_record *r, struct bufpool *pool, size_t max_record)
{
	memset(r, 0, sizeof(*r));
	r->pool = pool;
	r->max_record = max_record;
}

void rpc_buf_release(struct bufpool *pool, struct rpc_buf *b)
{
	if (b->pooled)
		bufpool_put(pool, b->data);
	else
		free(b->data);
	memset(b, 0, sizeof(*b));
}

void rpc_record_reset(struct rpc_record *r)
{
	rpc_buf_release(r->pool, &r->buf);
	rpc_record_init(r, r->pool, r->max_record);
}

bool rpc_record_started(const struct rpc_record *r)
{
	return r->mark_len || r->frags;
}

size_t rpc_record_preauth_bytes(const struct rpc_record *r)
{
	return r->admission == RPC_REC_PENDING ? r->cap : 0;
}

/* The most the record may hold in all (dropped bytes count too). */
static size_t record_limit(const struct rpc_record *r)
{
	return r->admission == RPC_REC_ADMITTED ? r->limit : r->max_record;
}

/* Makes room for `need` bytes in all.  Small records get plain
 * allocations of what they need (exact for the last fragment, doubling
 * otherwise); large ones a pool buffer, which is never outgrown. */
static int reserve(struct rpc_record *r, size_t need)
{
	size_t ceiling = r->admission == RPC_REC_PENDING ? RPC_RECORD_PREAUTH : RPC_RECORD_SMALL;
	size_t size = need;
	uint8_t *p;

	if (need <= r->cap)
		return 0;
	if (need > RPC_RECORD_SMALL && !r->buf.pooled) {
		p = bufpool_get(r->pool);
		if (!p)
			return -ENOMEM;
		if (r->buf.len)
			memcpy(p, r->buf.data, r->buf.len);
		free(r->buf.data);
		r->buf.data = p;
		r->buf.pooled = true;
		r->cap = r->pool->size;
		return 0;
	}
	if (!r->last && size < 2 * r->cap)
		size = 2 * r->cap;
	if (size > ceiling)
		size = ceiling > need ? ceiling : need;
	p = realloc(r->buf.data, size);
	if (!p)
		return -ENOMEM;
	r->buf.data = p;
	r->cap = size;
	return 0;
}

int rpc_record_space(struct rpc_record *r, uint8_t *scratch, size_t scratch_len, uint8_t **dst,
		     size_t *len)
{
	size_t want = r->frag_left;
	int rc;

	if (r->mark_len < 4) {
		*dst = r->mark + r->mark_len;
		*len = 4 - r->mark_len;
		return 0;
	}
	if (r->admission == RPC_REC_DENIED) {
		*dst = scratch;
		*len = want < scratch_len ? want : scratch_len;
		return 0;
	}
	if (r->admission == RPC_REC_PENDING && want > RPC_RECORD_PREAUTH - r->buf.len)
		want = RPC_RECORD_PREAUTH - r->buf.len;
	rc = reserve(r, r->buf.len + want);
	if (rc)
		return rc;
	*dst = r->buf.data + r->buf.len;
	*len = want;
	return 0;
}

/* What follows the bytes just counted. */
static int next_step(struct rpc_record *r)
{
	bool complete = r->frag_left == 0 && r->last;

	if (r->admission == RPC_REC_PENDING && (complete || r->buf.len == RPC_RECORD_PREAUTH))
		return RPC_REC_ADMIT;
	if (complete)
		return RPC_REC_DONE;
	if (r->frag_left == 0)
		r->mark_len = 0; /* the next fragment's mark */
	return RPC_REC_MORE;
}

static int got_mark(struct rpc_record *r)
{
	uint32_t mark = get_be32(r->mark);
	size_t flen = mark & ~LAST_FRAGMENT;

	if (++r->frags > RPC_RECORD_MAX_FRAGMENTS)
		return -EPROTO;
	if (flen > record_limit(r) - r->buf.len - r->dropped)
		return -EMSGSIZE;
	r->frag_left = flen;
	r->last = (mark & LAST_FRAGMENT) != 0;
	return next_step(r);
}

int rpc_record_got(struct rpc_record *r, size_t n)
{
	if (r->mark_len < 4) {
		r->mark_len += (unsigned)n;
		return r->mark_len < 4 ? RPC_REC_MORE : got_mark(r);
	}
	r->frag_left -= n;
	if (r->admission == RPC_REC_DENIED)
		r->dropped += n;
	else
		r->buf.len += n;
	return next_step(r);
}

int rpc_record_admit(struct rpc_record *r, size_t limit)
{
	r->admission = RPC_REC_ADMITTED;
	r->limit = limit < r->max_record ? limit : r->max_record;
	if (r->buf.len > r->limit || r->frag_left > r->limit - r->buf.len)
		return -EMSGSIZE;
	return next_step(r);
}

int rpc_record_deny(struct rpc_record *r)
{
	r->admission = RPC_REC_DENIED;
	return next_step(r);
}

void rpc_record_take(struct rpc_record *r, struct rpc_buf *out)
{
	*out = r->buf;
	memset(&r->buf, 0, sizeof(r->buf));
	rpc_record_init(r, r->pool, r->max_record);
}
