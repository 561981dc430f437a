/* Whole control-protocol calls into the OSD, as the transport runs them
 * (ctl_admit, then ctl_dispatch): the input is a procedure number (4
 * bytes) and its argument bytes; the target wraps them in a call signed
 * with the fuzz key for the fuzz target at the current time, a nonce of
 * its own each, so every call passes AUTH_PANDO and reaches the argument
 * decoders (rpcgen's and WRITE's in-place one, and xdr_free after a
 * decode that failed half way) and the handlers, against a real object
 * store.  Every reply the target accepts must carry the MAC over its
 * results that the client checks. */
#include <string.h>
#include <time.h>

#include "byteorder.h"
#include "ctl_auth.h"
#include "ctl_server.h"
#include "fuzz.h"
#include "osd_fixture.h"
#include "rpc_msg.h"

/* What the client would compute over the reply's results. */
static bool reply_mac_ok(const struct osd_ctx *ctx, const struct rpc_call *call, uint64_t nonce,
			 enum rpc_outcome out, const struct rpc_reply *reply)
{
	static const uint8_t zeros[4];
	struct hmac_piece res[3] = {
		{ reply->res.buf, reply->res.len },
		{ reply->payload, reply->payload_len },
		{ zeros, XDR_PAD(reply->payload_len) - reply->payload_len },
	};
	uint8_t want[CTL_AUTH_REPLY_VERF_LEN];

	if (ctl_auth_reply_mac(&ctx->keys->ctl.keys[0], call->xid, nonce, rpc_msg_accept_stat(out),
			       res, out == RPC_OUT_SUCCESS ? 3 : 0, want))
		return false;
	return reply->verf_flavor == CTL_AUTH_FLAVOR &&
	       reply->verf_len == CTL_AUTH_REPLY_VERF_LEN &&
	       !memcmp(reply->verf, want, sizeof(want));
}

static enum rpc_outcome run(struct osd_ctx *ctx, struct rpc_call *call, struct rpc_reply *reply)
{
	size_t max_args = OSD_MAX_RECORD;
	enum rpc_outcome out = ctl_admit(ctx, call, reply, &max_args);

	if (out != RPC_OUT_SUCCESS)
		return out;
	call->admitted = true;
	return ctl_dispatch(ctx, call, reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t nonce;
	struct osd_ctx *ctx = fuzz_osd_ctx();
	struct ctl_auth_cred cred = { .key_id = FUZZ_KEY_ID,
				      .osd_id = FUZZ_OSD_ID,
				      .time_s = (uint64_t)time(NULL),
				      .nonce = ++nonce };
	uint8_t cred_bytes[CTL_AUTH_CRED_LEN], verf_bytes[CTL_AUTH_VERF_LEN];
	uint8_t *res = malloc(RPC_REPLY_RES_CAP);
	struct rpc_reply reply = { 0 };
	struct rpc_call call = { .xid = 1, .prog = PANDO_OSD_CTL, .vers = PANDO_OSD_CTL_V1 };
	struct ctl_auth_hdr hdr;
	struct hmac_piece piece;
	uint8_t *args;
	enum rpc_outcome out;

	if (size < 4) {
		free(res);
		return 0;
	}
	call.proc = get_be32(data);
	/* A copy of exactly the argument bytes, so reading past them is seen. */
	args = malloc(size - 4 ? size - 4 : 1);
	memcpy(args, data + 4, size - 4);
	call.args = args;
	call.args_len = size - 4;
	hdr = (struct ctl_auth_hdr){ call.xid, call.prog, call.vers, call.proc };
	piece = (struct hmac_piece){ args, size - 4 };
	fuzz_check(!ctl_auth_sign(&ctx->keys->ctl.keys[0], &hdr, &cred, &piece, 1, cred_bytes,
				  verf_bytes),
		   "signing failed");
	call.cred = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_CRED_LEN, cred_bytes };
	call.verf = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_VERF_LEN, verf_bytes };
	xw_init(&reply.res, res, RPC_REPLY_RES_CAP);
	out = run(ctx, &call, &reply);
	fuzz_check(out != RPC_OUT_AUTH_BADCRED && out != RPC_OUT_AUTH_BADVERF,
		   "a call signed with the key refused");
	fuzz_check(out != RPC_OUT_SUCCESS || !xw_overflowed(&reply.res),
		   "control reply over RPC_REPLY_RES_CAP");
	fuzz_check(out >= RPC_OUT_AUTH_BADCRED || reply_mac_ok(ctx, &call, cred.nonce, out, &reply),
		   "an accepted reply without the MAC over its results");
	if (reply.payload && reply.payload_free)
		reply.payload_free(reply.payload);
	free(args);
	free(res);
	return 0;
}
