/* NULL: void in, void out; clients use it to ping the server. */
#include "nfs3.h"

enum rpc_outcome nfs3_proc_null(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				struct xdr_r *args, struct rpc_reply *reply)
{
	return RPC_OUT_SUCCESS;
}
