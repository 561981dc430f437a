/* GETATTR: the object's attributes as fattr3. */
#include "nfs3.h"
#include "nfs3_fh_args.h"

enum rpc_outcome nfs3_proc_getattr(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				   struct xdr_r *args, struct rpc_reply *reply)
{
	struct nfs3_obj obj;
	struct obj_info info;
	enum rpc_outcome out;
	int err;

	if (!nfs3_open_fh_args(ctx, who, args, reply, false, &obj, &out))
		return out;
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
