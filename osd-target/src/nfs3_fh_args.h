/* The start that GETATTR and FSSTAT share: their one argument is a handle,
 * and they read through it. */
#ifndef PANDO_NFS3_FH_ARGS_H
#define PANDO_NFS3_FH_ARGS_H

#include <stdbool.h>

#include "nfs3.h"

/* Decodes the handle and opens its object for reading: true with obj open
 * for nfs3_obj_close.  Else false with *out what the procedure returns:
 * GARBAGE_ARGS for bytes that are no handle, or SUCCESS with the handle's
 * status in the reply, then an empty post_op_attr when the procedure's
 * failure arm has one (FSSTAT's does, GETATTR's does not). */
static inline bool nfs3_open_fh_args(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				     struct xdr_r *args, struct rpc_reply *reply, bool post_op_attr,
				     struct nfs3_obj *obj, enum rpc_outcome *out)
{
	struct nfs3_fh fh;
	enum nfsstat3 st;

	*out = RPC_OUT_GARBAGE_ARGS;
	if (nfs3_decode_fh_args(args, &fh))
		return false;
	*out = RPC_OUT_SUCCESS;
	st = nfs3_obj_open(ctx, who, &fh, NFS3_NEED_READ, obj);
	if (st == NFS3_OK)
		return true;
	xw_u32(&reply->res, st);
	if (post_op_attr)
		nfs3_encode_post_op_attr(&reply->res, ctx, NULL);
	return false;
}

#endif
