/* ACCESS: what the handle's rights allow of what was asked.  There is
 * no user to check: the capability is the authority. */
#include <errno.h>

#include "nfs3.h"

int nfs3_decode_access_args(struct xdr_r *in, struct nfs3_access_args *a)
{
	if (nfs3_decode_fh_args(in, &a->fh))
		return -EINVAL;
	a->access = xr_u32(in);
	return in->err ? -EINVAL : 0;
}

enum rpc_outcome nfs3_proc_access(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply)
{
	struct nfs3_access_args a;
	struct nfs3_obj obj;
	enum nfsstat3 st;
	uint32_t granted = ACCESS3_READ;

	if (nfs3_decode_access_args(args, &a))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, who, &a.fh, NFS3_NEED_READ, &obj);
	xw_u32(&reply->res, st);
	if (st != NFS3_OK) {
		nfs3_encode_post_op_attr(&reply->res, ctx, NULL);
		return RPC_OUT_SUCCESS;
	}
	if (obj.cap.rights == CAP_RIGHTS_RW)
		granted |= ACCESS3_MODIFY | ACCESS3_EXTEND;
	nfs3_encode_post_op_attr(&reply->res, ctx, &obj);
	xw_u32(&reply->res, a.access & granted);
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
