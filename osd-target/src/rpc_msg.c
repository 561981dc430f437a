#include "rpc_msg.h"

#include <string.h>

#include "xdr.h"

#define MSG_CALL 0
#define MSG_REPLY 1
#define MSG_ACCEPTED 0
#define MSG_DENIED 1
#define REJECT_RPC_MISMATCH 0
#define REJECT_AUTH_ERROR 1
#define RPC_VERSION 2

static void decode_auth(struct xdr_r *x, struct rpc_opaque_auth *auth)
{
	auth->flavor = xr_u32(x);
	auth->body = xr_opaque_ref(x, RPC_MAX_AUTH_BYTES, &auth->len);
}

enum rpc_call_verdict rpc_msg_decode_call(const uint8_t *rec, size_t len, struct rpc_call *call)
{
	struct xdr_r x;

	xr_init(&x, rec, len);
	call->xid = xr_u32(&x);
	if (xr_u32(&x) != MSG_CALL || x.err)
		return RPC_CALL_IGNORE;
	if (xr_u32(&x) != RPC_VERSION)
		return x.err ? RPC_CALL_BADCRED : RPC_CALL_RPC_MISMATCH;
	call->prog = xr_u32(&x);
	call->vers = xr_u32(&x);
	call->proc = xr_u32(&x);
	decode_auth(&x, &call->cred);
	decode_auth(&x, &call->verf);
	if (x.err)
		return RPC_CALL_BADCRED;
	call->header = rec;
	call->header_len = (size_t)(x.p - rec);
	call->args = x.p;
	call->args_len = xr_left(&x);
	return RPC_CALL_OK;
}

uint32_t rpc_msg_accept_stat(enum rpc_outcome outcome)
{
	switch (outcome) {
	case RPC_OUT_SUCCESS:
		return 0;
	case RPC_OUT_PROG_UNAVAIL:
		return 1;
	case RPC_OUT_PROG_MISMATCH:
		return 2;
	case RPC_OUT_PROC_UNAVAIL:
		return 3;
	case RPC_OUT_GARBAGE_ARGS:
		return 4;
	default:
		return 5; /* SYSTEM_ERR */
	}
}

static int auth_stat(enum rpc_outcome outcome)
{
	switch (outcome) {
	case RPC_OUT_AUTH_BADCRED:
		return 1;
	case RPC_OUT_AUTH_REJECTEDCRED:
		return 2;
	case RPC_OUT_AUTH_BADVERF:
		return 3;
	case RPC_OUT_AUTH_REJECTEDVERF:
		return 4;
	case RPC_OUT_AUTH_TOOWEAK:
		return 5;
	default:
		return -1;
	}
}

size_t rpc_msg_encode_reply_header(uint8_t *buf, uint32_t xid, enum rpc_outcome outcome,
				   const struct rpc_reply *reply)
{
	struct xdr_w x;
	int astat = auth_stat(outcome);

	xw_init(&x, buf, RPC_REPLY_HEADER_MAX);
	xw_u32(&x, xid);
	xw_u32(&x, MSG_REPLY);
	if (astat >= 0) {
		xw_u32(&x, MSG_DENIED);
		xw_u32(&x, REJECT_AUTH_ERROR);
		xw_u32(&x, (uint32_t)astat);
		return x.len;
	}
	xw_u32(&x, MSG_ACCEPTED);
	xw_u32(&x, reply->verf_flavor);
	xw_opaque(&x, reply->verf, reply->verf_len);
	xw_u32(&x, rpc_msg_accept_stat(outcome));
	if (outcome == RPC_OUT_PROG_MISMATCH) {
		xw_u32(&x, reply->mismatch_low);
		xw_u32(&x, reply->mismatch_high);
	}
	return x.len;
}

size_t rpc_msg_encode_rpc_mismatch(uint8_t *buf, uint32_t xid)
{
	struct xdr_w x;

	xw_init(&x, buf, RPC_REPLY_HEADER_MAX);
	xw_u32(&x, xid);
	xw_u32(&x, MSG_REPLY);
	xw_u32(&x, MSG_DENIED);
	xw_u32(&x, REJECT_RPC_MISMATCH);
	xw_u32(&x, RPC_VERSION);
	xw_u32(&x, RPC_VERSION);
	return x.len;
}
