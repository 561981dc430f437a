/* FLUSH: makes an object's data durable, or with id (0, 0) every object's. */
#include "ctl_server.h"

enum rpc_outcome ctl_proc_flush(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_flush_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	bool whole_target = id.partition == 0 && id.object == 0;

	return ctl_reply_status(reply,
				ctl_status(objstore_flush(ctx->store, whole_target ? NULL : &id)));
}
