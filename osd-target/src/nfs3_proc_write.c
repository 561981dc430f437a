/* WRITE: the data is decoded in place and goes from the record buffer to
 * the object in one write.  DATA_SYNC and FILE_SYNC both sync data and
 * size before the reply, so both are answered FILE_SYNC. */
#include <errno.h>

#include "nfs3.h"

int nfs3_decode_write_args(struct xdr_r *in, struct nfs3_write_args *a)
{
	if (nfs3_decode_fh_args(in, &a->fh))
		return -EINVAL;
	a->offset = xr_u64(in);
	a->count = xr_u32(in);
	a->stable = xr_u32(in);
	/* Data longer than a record cannot be there; within that, its length
	 * is checked against count and wtmax after the handle (NFS3ERR_INVAL). */
	a->data = xr_opaque_ref(in, OSD_MAX_RECORD, &a->data_len);
	if (in->err || a->stable > NFS3_FILE_SYNC)
		return -EINVAL;
	return 0;
}

static void reply_write_fail(const struct osd_ctx *ctx, const struct nfs3_obj *obj,
			     enum nfsstat3 st, struct rpc_reply *reply)
{
	xw_u32(&reply->res, st);
	nfs3_encode_wcc_data(&reply->res, ctx, obj);
}

static enum nfsstat3 write_object(const struct osd_ctx *ctx, const struct nfs3_obj *obj,
				  const struct nfs3_write_args *a)
{
	enum obj_stable how = a->stable == NFS3_UNSTABLE ? OBJ_UNSTABLE : OBJ_FILE_SYNC;
	int err;

	if (a->count != a->data_len || a->count > OSD_NFS_MAX_IO)
		return NFS3ERR_INVAL;
	if (a->offset > OBJSTORE_MAX_OFFSET)
		return NFS3ERR_FBIG;
	osd_throttle_io(ctx, true, a->data_len);
	err = obj_ref_write(obj->ref, a->offset, a->data, a->data_len, how);
	return nfs3_stat_from_errno("WRITE", obj, err);
}

enum rpc_outcome nfs3_proc_write(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				 struct xdr_r *args, struct rpc_reply *reply)
{
	uint8_t verf[NFS3_WRITEVERFSIZE];
	struct nfs3_write_args a;
	struct nfs3_obj obj;
	enum nfsstat3 st;

	if (nfs3_decode_write_args(args, &a))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, who, &a.fh, NFS3_NEED_WRITE, &obj);
	if (st != NFS3_OK) {
		reply_write_fail(ctx, NULL, st, reply);
		return RPC_OUT_SUCCESS;
	}
	osd_write_verf(ctx, verf);
	st = write_object(ctx, &obj, &a);
	if (st != NFS3_OK) {
		reply_write_fail(ctx, &obj, st, reply);
	} else {
		xw_u32(&reply->res, NFS3_OK);
		nfs3_encode_wcc_data(&reply->res, ctx, &obj);
		xw_u32(&reply->res, a.count);
		xw_u32(&reply->res, a.stable == NFS3_UNSTABLE ? NFS3_UNSTABLE : NFS3_FILE_SYNC);
		xw_fixed(&reply->res, verf, NFS3_WRITEVERFSIZE);
		osd_stats_nfs_write(ctx->stats, a.count, a.stable);
	}
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
