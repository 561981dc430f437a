/* PATHCONF: objects have no names or links, but clients ask anyway. */
#include "nfs3.h"

#define PATHCONF_NAME_MAX 255u

static void encode_pathconf_ok(struct xdr_out *out)
{
	xout_u32(out, 1);			/* linkmax */
	xout_u32(out, PATHCONF_NAME_MAX);	/* name_max */
	xout_bool(out, true);			/* no_trunc */
	xout_bool(out, true);			/* chown_restricted */
	xout_bool(out, false);			/* case_insensitive */
	xout_bool(out, true);			/* case_preserving */
}

enum rpc_outcome nfs3_proc_pathconf(const struct osd_ctx *ctx, struct xdr_in *args,
				    struct rpc_reply *reply)
{
	struct nfs3_obj obj;
	struct nfs3_fh fh;
	enum nfsstat3 st;

	if (nfs3_decode_fh_args(args, &fh))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, &fh, NFS3_NEED_READ, &obj);
	xout_u32(&reply->res, st);
	if (st != NFS3_OK) {
		nfs3_encode_post_op_attr(&reply->res, ctx, NULL);
		return RPC_OUT_SUCCESS;
	}
	nfs3_encode_post_op_attr(&reply->res, ctx, &obj);
	encode_pathconf_ok(&reply->res);
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
