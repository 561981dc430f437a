/* WRITE: the data goes from the record buffer to pwrite() uncopied.
 * UNSTABLE lands in the page cache (FLUSH makes it durable); DATA_SYNC
 * and FILE_SYNC are durable before the reply.  The verifier changes on
 * every start and failed sync (osd_write_verf), so a caller that sees it
 * change re-sends unflushed data.  A stable write of no bytes is the
 * gateway's COMMIT (objio_flush): its verifier is taken after its sync,
 * as an NFS COMMIT's. */
#include <string.h>

#include "ctl_server.h"

bool_t ctl_xdr_write_args_inplace(XDR *xdrs, osd_write_args *args)
{
	u_int len;
	int32_t *data;

	if (xdrs->x_op == XDR_FREE)
		return TRUE; /* the data belongs to the record */
	if (xdrs->x_op != XDR_DECODE)
		return FALSE;
	if (!xdr_osd_obj_id(xdrs, &args->id) || !xdr_osd_u64(xdrs, &args->offset) ||
	    !xdr_osd_stable(xdrs, &args->stable) || !xdr_u_int(xdrs, &len))
		return FALSE;
	/* An enum outside its declared values does not decode. */
	if ((unsigned)args->stable > OSD_FILE_SYNC || len > OSD_CTL_MAX_DATA)
		return FALSE;
	data = xdr_inline_decode(xdrs, RNDUP(len));
	if (!data)
		return FALSE;
	args->data.data_len = len;
	args->data.data_val = (char *)data;
	return TRUE;
}

static enum obj_stable store_stable(osd_stable stable)
{
	switch (stable) {
	case OSD_DATA_SYNC:
		return OBJ_DATA_SYNC;
	case OSD_FILE_SYNC:
		return OBJ_FILE_SYNC;
	default:
		return OBJ_UNSTABLE;
	}
}

static int write_object(struct osd_ctx *ctx, const struct obj_id *id, uint64_t off,
			const void *data, size_t len, enum obj_stable stable)
{
	struct objstore *store = ctx->store;
	struct obj_ref *ref;
	int err = objstore_get(store, id, &ref);

	if (err)
		return err;
	osd_throttle_io(ctx, true, len);
	err = obj_ref_write(ref, off, data, len, stable);
	objstore_put(store, ref);
	return err;
}

enum rpc_outcome ctl_proc_write(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_write_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	osd_write_res res = { 0 };
	uint8_t *verf = (uint8_t *)res.osd_write_res_u.ok.verifier;
	int err;

	osd_write_verf(ctx, verf);
	err = write_object(ctx, &id, args->offset, args->data.data_val, args->data.data_len,
			   store_stable(args->stable));
	if (!args->data.data_len)
		osd_write_verf(ctx, verf);
	res.status = ctl_status(err);
	if (!err) {
		res.osd_write_res_u.ok.count = args->data.data_len;
		osd_stats_add(ctx->stats, OSD_STAT_CTL_WRITE_OPS, 1);
		osd_stats_add(ctx->stats, OSD_STAT_CTL_WRITE_BYTES, args->data.data_len);
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_write_res), &res, CTL_SMALL_RES);
}
