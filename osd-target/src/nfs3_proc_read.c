/* READ: pread into a buffer that the transport sends as the reply's
 * payload, so the data is never copied into the result encoding. */
#include <errno.h>
#include <stdlib.h>

#include "nfs3.h"

int nfs3_decode_read_args(struct xdr_r *in, struct nfs3_read_args *a)
{
	if (nfs3_decode_fh_args(in, &a->fh))
		return -EINVAL;
	a->offset = xr_u64(in);
	a->count = xr_u32(in);
	return in->err ? -EINVAL : 0;
}

static void reply_read_fail(const struct osd_ctx *ctx, const struct nfs3_obj *obj, enum nfsstat3 st,
			    struct rpc_reply *reply)
{
	xw_u32(&reply->res, st);
	nfs3_encode_post_op_attr(&reply->res, ctx, obj);
}

/* The count is cut to rtmax, as FSINFO advertises (RFC 1813, 3.3.6). */
static enum nfsstat3 read_object(const struct osd_ctx *ctx, const struct nfs3_obj *obj,
				 const struct nfs3_read_args *a, struct rpc_reply *reply,
				 size_t *got, bool *eof)
{
	size_t want = a->count < OSD_NFS_MAX_IO ? a->count : OSD_NFS_MAX_IO;
	void *buf;
	int err;

	if (a->offset > OBJSTORE_MAX_OFFSET)
		return NFS3ERR_FBIG;
	/* The transport releases the buffer after the reply, sent or not. */
	buf = rpc_reply_alloc_payload(reply, want);
	if (!buf)
		return NFS3ERR_SERVERFAULT;
	if (ctx->throttle_read)
		osd_throttle_io(ctx, false, obj_ref_readable(obj->ref, a->offset, want));
	err = obj_ref_read(obj->ref, a->offset, want, buf, got, eof);
	if (err)
		return nfs3_stat_from_errno("READ", obj, err);
	reply->payload_len = *got;
	return NFS3_OK;
}

enum rpc_outcome nfs3_proc_read(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				struct xdr_r *args, struct rpc_reply *reply)
{
	struct nfs3_read_args a;
	struct nfs3_obj obj;
	enum nfsstat3 st;
	size_t got = 0;
	bool eof = false;

	if (nfs3_decode_read_args(args, &a))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, who, &a.fh, NFS3_NEED_READ, &obj);
	if (st != NFS3_OK) {
		reply_read_fail(ctx, NULL, st, reply);
		return RPC_OUT_SUCCESS;
	}
	st = read_object(ctx, &obj, &a, reply, &got, &eof);
	if (st != NFS3_OK) {
		reply_read_fail(ctx, &obj, st, reply);
	} else {
		xw_u32(&reply->res, NFS3_OK);
		nfs3_encode_post_op_attr(&reply->res, ctx, &obj);
		xw_u32(&reply->res, (uint32_t)got); /* count */
		xw_bool(&reply->res, eof);
		xw_u32(&reply->res, (uint32_t)got); /* data<> length; payload follows */
		osd_stats_add(ctx->stats, OSD_STAT_NFS_READ_OPS, 1);
		osd_stats_add(ctx->stats, OSD_STAT_NFS_READ_BYTES, got);
	}
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
