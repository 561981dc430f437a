/* fattr3, post_op_attr and wcc_data (RFC 1813, 2.6) for an object. */
#include "nfs3.h"

#define NS_PER_S 1000000000ull

/* splitmix64's finalizer: cheap, and every input bit reaches every
 * output bit, so neighbouring ids do not give neighbouring fileids. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t nfs3_fileid(uint64_t partition, uint64_t object)
{
	uint64_t id = mix64(mix64(partition) ^ object);

	return id ? id : 1; /* some clients treat fileid 0 as "none" */
}

static void encode_nfstime(struct xdr_w *out, uint64_t ns)
{
	xw_u32(out, (uint32_t)(ns / NS_PER_S));
	xw_u32(out, (uint32_t)(ns % NS_PER_S));
}

void nfs3_encode_fattr(struct xdr_w *out, const struct osd_ctx *ctx, const struct nfs3_obj *obj,
		       const struct obj_info *info)
{
	bool writable = obj->cap.rights == CAP_RIGHTS_RW;
	/* Writing the data changes the object, so ctime is never older
	 * than mtime even though the store keeps them apart. */
	uint64_t ctime_ns = info->ctime_ns > info->mtime_ns ? info->ctime_ns : info->mtime_ns;

	xw_u32(out, NF3REG);
	xw_u32(out, writable ? 0644 : 0444);
	xw_u32(out, 1); /* nlink */
	xw_u32(out, 0); /* uid */
	xw_u32(out, 0); /* gid */
	xw_u64(out, info->length);
	xw_u64(out, info->used_bytes);
	xw_u32(out, 0); /* rdev.specdata1 */
	xw_u32(out, 0); /* rdev.specdata2 */
	xw_u64(out, ctx->fsid);
	xw_u64(out, nfs3_fileid(obj->cap.partition, obj->cap.object));
	encode_nfstime(out, info->mtime_ns); /* atime is not kept */
	encode_nfstime(out, info->mtime_ns);
	encode_nfstime(out, ctime_ns);
}

void nfs3_encode_post_op_attr(struct xdr_w *out, const struct osd_ctx *ctx,
			      const struct nfs3_obj *obj)
{
	struct obj_info info;

	if (!obj || !obj->ref || obj_ref_info(obj->ref, &info) != 0) {
		xw_bool(out, false);
		return;
	}
	xw_bool(out, true);
	nfs3_encode_fattr(out, ctx, obj, &info);
}

void nfs3_encode_wcc_data(struct xdr_w *out, const struct osd_ctx *ctx, const struct nfs3_obj *obj)
{
	xw_bool(out, false); /* pre_op_attr */
	nfs3_encode_post_op_attr(out, ctx, obj);
}

enum rpc_outcome nfs3_reply_static_info(const struct osd_ctx *ctx, const struct nfs3_caller *who,
					struct xdr_r *args, struct rpc_reply *reply,
					void (*encode_ok)(struct xdr_w *out))
{
	struct nfs3_obj obj;
	struct nfs3_fh fh;
	enum nfsstat3 st;

	if (nfs3_decode_fh_args(args, &fh))
		return RPC_OUT_GARBAGE_ARGS;

	st = nfs3_obj_open(ctx, who, &fh, NFS3_NEED_READ, &obj);
	xw_u32(&reply->res, st);
	if (st != NFS3_OK) {
		nfs3_encode_post_op_attr(&reply->res, ctx, NULL);
		return RPC_OUT_SUCCESS;
	}
	nfs3_encode_post_op_attr(&reply->res, ctx, &obj);
	encode_ok(&reply->res);
	nfs3_obj_close(ctx, &obj);
	return RPC_OUT_SUCCESS;
}
