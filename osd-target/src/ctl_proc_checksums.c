/* CHECKSUMS: an object's extent CRCs for scrub, and with verify whether
 * the bytes on disk still match them (objstore_csum.c).  A verify reads
 * the extents, so the disk model charges it as a read. */
#include <errno.h>
#include <stdlib.h>

#include "ctl_server.h"

/* status, length, count, then crc, stored, verify per extent */
#define CSUM_RES_HEAD 16
#define CSUM_RES_EXTENT 12

_Static_assert(OSD_CTL_CSUM_EXTENT == OBJ_CSUM_EXTENT, "osd_ctl.x and objstore.h disagree");
_Static_assert((int)OSD_CSUM_UNREADABLE == (int)OBJ_CSUM_UNREADABLE, "osd_ctl.x changed");

static size_t answer_count(const osd_checksums_args *args)
{
	size_t max = args->verify ? OSD_CTL_MAX_CSUMS_VERIFY : OSD_CTL_MAX_CSUMS;

	return args->count < max ? args->count : max;
}

static int checksums(struct osd_ctx *ctx, const osd_checksums_args *args, struct obj_csum *out,
		     size_t n, uint64_t *length)
{
	const struct obj_id id = { args->id.partition, args->id.object };
	struct obj_ref *ref;
	int err;

	err = objstore_get(ctx->store, &id, &ref);
	if (err)
		return err;
	if (args->verify && ctx->throttle_read)
		osd_throttle_io(ctx, false,
				obj_ref_readable(ref, args->first_extent << OBJ_CSUM_SHIFT,
						 (uint64_t)n << OBJ_CSUM_SHIFT));
	err = obj_ref_checksums(ref, args->first_extent, n, args->verify, out, length);
	objstore_put(ctx->store, ref);
	return err;
}

static enum rpc_outcome checksums_reply(struct rpc_reply *reply, int err, uint64_t length,
					const struct obj_csum *cs, size_t n)
{
	osd_checksums_res res = { .status = ctl_status(err) };
	osd_checksums_res_ok *ok = &res.osd_checksums_res_u.ok;
	osd_extent_csum *ex = NULL;
	enum rpc_outcome out;

	if (!err && n && !(ex = calloc(n, sizeof(*ex))))
		res.status = ctl_status(-ENOMEM);
	if (res.status == OSD_OK) {
		for (size_t i = 0; i < n; i++)
			ex[i] = (osd_extent_csum){ cs[i].crc, cs[i].stored,
						   (osd_csum_verify)cs[i].verify };
		ok->length = length;
		ok->extents.extents_len = (u_int)n;
		ok->extents.extents_val = ex;
	}
	out = ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_checksums_res), &res,
			       CSUM_RES_HEAD + CSUM_RES_EXTENT * n);
	free(ex);
	return out;
}

enum rpc_outcome ctl_proc_checksums(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_checksums_args *args = argp;
	size_t n = answer_count(args);
	struct obj_csum *cs = calloc(n ? n : 1, sizeof(*cs));
	uint64_t length = 0;
	enum rpc_outcome out;
	int err = cs ? 0 : -ENOMEM;

	if (!err && args->first_extent > OBJ_CSUM_MAX_EXTENT)
		err = -EFBIG;
	/* Extents up to the last there can be; no further. */
	if (!err && n > OBJ_CSUM_MAX_EXTENT - args->first_extent + 1)
		n = (size_t)(OBJ_CSUM_MAX_EXTENT - args->first_extent + 1);
	if (!err)
		err = checksums(ctx, args, cs, n, &length);
	out = checksums_reply(reply, err, length, cs, n);
	free(cs);
	return out;
}
