/* The OSD's ONC RPC call header (osd-target/src/rpc_msg.c): a record as
 * it arrives, decoded; a call that decodes is written back from its
 * fields and must decode to the same call, the arguments untouched; every
 * reply header it could get must fit RPC_REPLY_HEADER_MAX. */
#include <string.h>

#include "fuzz.h"
#include "rpc_msg.h"

/* Six words, then two opaque_auth of at most RPC_MAX_AUTH_BYTES. */
#define CALL_HEADER_MAX (6 * 4 + 2 * (8 + RPC_MAX_AUTH_BYTES))

static size_t encode_call(const struct rpc_call *c, uint8_t *buf, size_t cap)
{
	struct xdr_w w;

	xw_init(&w, buf, cap);
	xw_u32(&w, c->xid);
	xw_u32(&w, 0); /* CALL */
	xw_u32(&w, 2); /* rpcvers */
	xw_u32(&w, c->prog);
	xw_u32(&w, c->vers);
	xw_u32(&w, c->proc);
	xw_u32(&w, c->cred.flavor);
	xw_opaque(&w, c->cred.body, c->cred.len);
	xw_u32(&w, c->verf.flavor);
	xw_opaque(&w, c->verf.body, c->verf.len);
	return w.len;
}

static bool same_auth(const struct rpc_opaque_auth *a, const struct rpc_opaque_auth *b)
{
	return a->flavor == b->flavor && a->len == b->len && !memcmp(a->body, b->body, a->len);
}

/* Every outcome's reply header, with the call's verifier echoed at its
 * largest legal size. */
static void check_replies(const struct rpc_call *c)
{
	uint8_t hdr[RPC_REPLY_HEADER_MAX];
	struct rpc_reply reply = { .verf_flavor = c->verf.flavor, .verf_len = c->verf.len };

	memcpy(reply.verf, c->verf.body, c->verf.len);
	for (int out = RPC_OUT_SUCCESS; out < RPC_OUT_DROP; out++)
		fuzz_check(rpc_msg_encode_reply_header(hdr, c->xid, out, &reply) <= sizeof(hdr),
			   "reply header over RPC_REPLY_HEADER_MAX");
	fuzz_check(rpc_msg_encode_rpc_mismatch(hdr, c->xid) <= sizeof(hdr),
		   "RPC_MISMATCH over RPC_REPLY_HEADER_MAX");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[CALL_HEADER_MAX];
	struct rpc_call call, again;
	size_t len;

	if (rpc_msg_decode_call(data, size, &call) != RPC_CALL_OK)
		return 0;
	fuzz_check(call.header == data && call.args == data + call.header_len &&
			   call.header_len + call.args_len == size,
		   "arguments outside the record");
	len = encode_call(&call, buf, sizeof(buf));
	fuzz_check(len == call.header_len, "header length differs from its encoding");
	fuzz_check(rpc_msg_decode_call(buf, len, &again) == RPC_CALL_OK, "re-encoded call refused");
	fuzz_check(again.xid == call.xid && again.prog == call.prog && again.vers == call.vers &&
			   again.proc == call.proc && same_auth(&again.cred, &call.cred) &&
			   same_auth(&again.verf, &call.verf) && again.args_len == 0,
		   "re-encoded call decodes to another");
	check_replies(&call);
	return 0;
}
