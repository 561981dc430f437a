/* Whole control-protocol calls into the OSD (ctl_dispatch): the input is
 * a procedure number (4 bytes) and its argument bytes; the target wraps
 * them in a call signed with the fuzz key at the current time, so every
 * call passes AUTH_PANDO and reaches the argument decoders (rpcgen's and
 * WRITE's in-place one, and xdr_free after a decode that failed half way)
 * and the handlers, against a real object store. */
#include <string.h>
#include <time.h>

#include "byteorder.h"
#include "ctl_auth.h"
#include "ctl_server.h"
#include "fuzz.h"
#include "osd_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_ctx *ctx = fuzz_osd_ctx();
	struct ctl_auth_cred cred = { .key_id = FUZZ_KEY_ID, .time_s = (uint64_t)time(NULL) };
	uint8_t cred_bytes[CTL_AUTH_CRED_LEN], verf_bytes[CTL_AUTH_VERF_LEN];
	uint8_t *res = malloc(RPC_REPLY_RES_CAP);
	struct rpc_reply reply = { 0 };
	struct rpc_call call = { .xid = 1, .prog = PANDO_OSD_CTL, .vers = PANDO_OSD_CTL_V1 };
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
	ctl_auth_sign(ctx->key, call.xid, call.prog, call.vers, call.proc, &cred, cred_bytes,
		      verf_bytes);
	call.cred = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_CRED_LEN, cred_bytes };
	call.verf = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_VERF_LEN, verf_bytes };
	xw_init(&reply.res, res, RPC_REPLY_RES_CAP);
	out = ctl_dispatch(ctx, &call, &reply);
	fuzz_check(out != RPC_OUT_AUTH_BADCRED && out != RPC_OUT_AUTH_BADVERF,
		   "a call signed with the key refused");
	fuzz_check(out != RPC_OUT_SUCCESS || !xw_overflowed(&reply.res),
		   "control reply over RPC_REPLY_RES_CAP");
	if (reply.payload && reply.payload_free)
		reply.payload_free(reply.payload);
	free(args);
	free(res);
	return 0;
}
