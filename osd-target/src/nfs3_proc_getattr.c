/* GETATTR: the object's attributes as fattr3. */
#include "nfs3.h"

enum rpc_outcome nfs3_proc_getattr(const struct osd_ctx *ctx, struct xdr_r *args,
				   struct rpc_reply *reply)
{
	struct nfs3_obj obj;
	struct obj_info info;
	struct nfs3_fh fh;
	enum nfsstat3 st;
	int err;

	if (nfs3_decode_fh_args(args, &fh))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, &fh, NFS3_NEED_READ, &obj);
	if (st != NFS3_OK) {
		xw_u32(&reply->res, st);
		return RPC_OUT_SUCCESS;
	}
	err = obj_ref_info(obj.ref, &info);
	if (err) {
		xw_u32(&reply->res, nfs3_stat_from_errno("GETATTR", &obj, err));
	} else {
		xw_u32(&reply->res, NFS3_OK);
		nfs3_encode_fattr(&reply->res, ctx, &obj, &info);
	}
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
