/* Whole NFSv3 calls into the OSD's data server: the record is decoded as
 * the transport does (rpc_msg_decode_call) and dispatched (nfs3_dispatch:
 * AUTH_SYS parsing, the procedure table, every procedure's decoder and
 * handler) against a real object store.  The seeds carry handles minted
 * with the fuzz key, so mutations reach READ, WRITE and COMMIT on a real
 * object, not only the handle check. */
#include <string.h>

#include "fuzz.h"
#include "osd_fixture.h"
#include "rpc_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct osd_ctx *ctx = fuzz_osd_ctx();
	uint8_t *res = malloc(RPC_REPLY_RES_CAP);
	struct rpc_reply reply = { 0 };
	struct rpc_call call = { 0 };
	enum rpc_outcome out;

	xw_init(&reply.res, res, RPC_REPLY_RES_CAP);
	if (rpc_msg_decode_call(data, size, &call) == RPC_CALL_OK) {
		out = nfs3_dispatch(ctx, &call, &reply);
		fuzz_check(out != RPC_OUT_SUCCESS || !xw_overflowed(&reply.res),
			   "NFSv3 reply over RPC_REPLY_RES_CAP");
	}
	if (reply.payload && reply.payload_free)
		reply.payload_free(reply.payload);
	free(res);
	return 0;
}
