/* FSSTAT: the target's capacity.  The store has no inode table, so the
 * file counts are bounded by space: every object takes a block or more. */
#include "nfs3.h"
#include "nfs3_fh_args.h"

#define FSSTAT_BYTES_PER_FILE 4096u

static void encode_fsstat_ok(struct xdr_w *out, const struct objstore_stat *st)
{
	uint64_t free_files = st->free_bytes / FSSTAT_BYTES_PER_FILE;

	xw_u64(out, st->total_bytes);          /* tbytes */
	xw_u64(out, st->free_bytes);           /* fbytes */
	xw_u64(out, st->free_bytes);           /* abytes: nothing is reserved */
	xw_u64(out, st->objects + free_files); /* tfiles */
	xw_u64(out, free_files);               /* ffiles */
	xw_u64(out, free_files);               /* afiles */
	xw_u32(out, 0);                        /* invarsec: changes any time */
}

enum rpc_outcome nfs3_proc_fsstat(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply)
{
	struct objstore_stat st;
	struct nfs3_obj obj;
	enum rpc_outcome out;
	int err;

	if (!nfs3_open_fh_args(ctx, who, args, reply, true, &obj, &out))
		return out;
	err = objstore_statfs(ctx->store, &st);
	xw_u32(&reply->res, nfs3_stat_from_errno("FSSTAT", &obj, err));
	nfs3_encode_post_op_attr(&reply->res, ctx, &obj);
	if (!err)
		encode_fsstat_ok(&reply->res, &st);
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
