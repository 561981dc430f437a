/* COMMIT: makes the object's data durable before answering.  The whole
 * object is synced whatever the range: there is no ranged fdatasync that
 * also makes the size durable.  Its verifier is taken after the sync, so
 * that a sync that failed meanwhile (here or in another call: Linux tells
 * only one) sends the client's unstable writes again. */
#include <errno.h>

#include "nfs3.h"

int nfs3_decode_commit_args(struct xdr_r *in, struct nfs3_commit_args *a)
{
	if (nfs3_decode_fh_args(in, &a->fh))
		return -EINVAL;
	a->offset = xr_u64(in);
	a->count = xr_u32(in);
	return in->err ? -EINVAL : 0;
}

enum rpc_outcome nfs3_proc_commit(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply)
{
	uint8_t verf[NFS3_WRITEVERFSIZE];
	struct nfs3_commit_args a;
	struct nfs3_obj obj;
	enum nfsstat3 st;
	int err;

	if (nfs3_decode_commit_args(args, &a))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, who, &a.fh, NFS3_NEED_WRITE, &obj);
	if (st != NFS3_OK) {
		xw_u32(&reply->res, st);
		nfs3_encode_wcc_data(&reply->res, ctx, NULL);
		return RPC_OUT_SUCCESS;
	}
	err = obj_ref_sync(obj.ref);
	osd_write_verf(ctx, verf);
	xw_u32(&reply->res, nfs3_stat_from_errno("COMMIT", &obj, err));
	nfs3_encode_wcc_data(&reply->res, ctx, &obj);
	if (!err) {
		xw_fixed(&reply->res, verf, NFS3_WRITEVERFSIZE);
		osd_stats_add(ctx->stats, OSD_STAT_NFS_COMMIT_OPS, 1);
	}
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
