/* LIST: partitions (partition 0) or a partition's objects, ids ascending
 * after `after`.  A max of 0, or above OSD_CTL_MAX_BATCH, asks for a full
 * page of OSD_CTL_MAX_BATCH. */
#include <errno.h>
#include <stdlib.h>

#include "ctl_server.h"

static size_t page_size(u_int max)
{
	return max == 0 || max > OSD_CTL_MAX_BATCH ? OSD_CTL_MAX_BATCH : max;
}

static enum rpc_outcome list_reply(struct rpc_reply *reply, int err, uint64_t *ids, size_t n,
				   bool eof)
{
	osd_list_res res = { .status = ctl_status(err) };

	if (!err) {
		res.osd_list_res_u.ok.ids.ids_len = (u_int)n;
		res.osd_list_res_u.ok.ids.ids_val = ids;
		res.osd_list_res_u.ok.eof = eof;
	}
	/* status, count, ids, eof */
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_list_res), &res, 12 + 8 * n);
}

enum rpc_outcome ctl_proc_list(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_list_args *args = argp;
	size_t max = page_size(args->max), n = 0;
	uint64_t *ids = calloc(max, sizeof(*ids));
	bool eof = false;
	enum rpc_outcome out;
	int err;

	if (!ids)
		err = -ENOMEM;
	else if (args->partition == 0)
		err = objstore_partition_list(ctx->store, args->after, ids, max, &n, &eof);
	else
		err = objstore_object_list(ctx->store, args->partition, args->after, ids, max, &n,
					   &eof);
	out = list_reply(reply, err, ids, n, eof);
	free(ids);
	return out;
}
