/* The record assembler (osd-target/src/rpc_record.c) on its own: the
 * input's first byte chooses the read size and the admission (admit with
 * a limit, or deny), the rest is the byte stream.  Whatever the bytes, a
 * record not yet admitted holds at most RPC_RECORD_PREAUTH bytes, an
 * admitted one at most its limit, a denied one keeps only what came before
 * the denial, and an admitted record is exactly its fragments' bodies
 * joined. */
#include <string.h>

#include "bufpool.h"
#include "byteorder.h"
#include "fuzz.h"
#include "rpc_record.h"

#define MAX_RECORD (64u << 10)

static struct bufpool pool;

/* The bodies of the fragments a record was made of, joined, as the
 * stream had them (checked against an admitted record). */
struct expect {
	uint8_t body[MAX_RECORD];
	size_t len;
};

static void check_bounds(const struct rpc_record *r)
{
	fuzz_check(rpc_record_preauth_bytes(r) <= RPC_RECORD_PREAUTH, "pre-admission buffer");
	fuzz_check(r->buf.len <= r->cap, "length within capacity");
	if (r->admission == RPC_REC_ADMITTED)
		fuzz_check(r->buf.len <= r->limit, "admitted record within its limit");
}

static int on_step(struct rpc_record *r, int step, uint8_t how, struct expect *e)
{
	struct rpc_buf b;

	if (step == RPC_REC_ADMIT)
		step = how & 1 ? rpc_record_admit(r, (size_t)(how >> 1) << 9) : rpc_record_deny(r);
	if (step != RPC_REC_DONE)
		return step;
	fuzz_check(r->admission != RPC_REC_PENDING, "done before admission");
	if (r->admission == RPC_REC_ADMITTED)
		fuzz_check(r->buf.len == e->len &&
				   (!e->len || !memcmp(r->buf.data, e->body, e->len)),
			   "admitted record differs from its fragments");
	rpc_record_take(r, &b);
	rpc_buf_release(&pool, &b);
	e->len = 0;
	return RPC_REC_MORE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct expect e;
	static uint8_t scratch[1024];
	struct rpc_record r;
	size_t off = 1, chunk;
	int step = RPC_REC_MORE;

	if (!pool.free && bufpool_init(&pool, MAX_RECORD, 2))
		abort();
	if (size < 1)
		return 0;
	chunk = (size_t)(data[0] & 0x3f) * 97 + 1;
	e.len = 0;
	rpc_record_init(&r, &pool, MAX_RECORD);
	while (off < size && step >= 0) {
		uint8_t *dst;
		size_t room, n;
		bool body = r.mark_len == 4 && r.admission != RPC_REC_DENIED;

		fuzz_check(rpc_record_space(&r, scratch, sizeof(scratch), &dst, &room) == 0,
			   "space");
		fuzz_check(room > 0, "no room to read into");
		n = room < chunk ? room : chunk;
		n = n < size - off ? n : size - off;
		memcpy(dst, data + off, n);
		if (body && e.len + n <= sizeof(e.body)) {
			memcpy(e.body + e.len, data + off, n);
			e.len += n;
		}
		off += n;
		step = on_step(&r, rpc_record_got(&r, n), data[0], &e);
		if (step >= 0) /* after an error the connection closes */
			check_bounds(&r);
	}
	rpc_record_reset(&r);
	return 0;
}
