/* READ: the data is pread() into a buffer that the transport sends as the
 * reply's payload, after status, eof and length encoded here. */
#include <stdlib.h>

#include "ctl_server.h"

static int read_object(struct osd_ctx *ctx, const struct obj_id *id, uint64_t off, void *buf,
		       size_t len, size_t *n, bool *eof)
{
	struct objstore *store = ctx->store;
	struct obj_ref *ref;
	int err = objstore_get(store, id, &ref);

	if (err)
		return err;
	if (ctx->throttle_read)
		osd_throttle_io(ctx, false, obj_ref_readable(ref, off, len));
	err = obj_ref_read(ref, off, len, buf, n, eof);
	objstore_put(store, ref);
	return err;
}

enum rpc_outcome ctl_proc_read(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_read_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	/* Longer reads are cut, as NFS does: the caller sees a short read
	 * without eof and goes on from there. */
	size_t count = args->count < OSD_CTL_MAX_DATA ? args->count : OSD_CTL_MAX_DATA;
	/* Released by the transport after the reply, whatever it says. */
	void *buf = rpc_reply_alloc_payload(reply, count);
	size_t n = 0;
	bool eof = false;
	int err;

	if (!buf)
		return RPC_OUT_SYSTEM_ERR;
	err = read_object(ctx, &id, args->offset, buf, count, &n, &eof);
	if (err)
		return ctl_reply_status(reply, ctl_status(err));
	xw_u32(&reply->res, OSD_OK);
	xw_bool(&reply->res, eof);
	xw_u32(&reply->res, (uint32_t)n);
	reply->payload_len = n;
	osd_stats_add(ctx->stats, OSD_STAT_CTL_READ_OPS, 1);
	osd_stats_add(ctx->stats, OSD_STAT_CTL_READ_BYTES, n);
	return RPC_OUT_SUCCESS;
}
