/* CREATE_PARTITION and REMOVE_PARTITION (which must be empty). */
#include "ctl_server.h"

enum rpc_outcome ctl_proc_create_partition(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_partition_args *args = argp;

	return ctl_reply_status(reply,
				ctl_status(objstore_partition_create(ctx->store, args->partition)));
}

enum rpc_outcome ctl_proc_remove_partition(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_partition_args *args = argp;

	return ctl_reply_status(reply,
				ctl_status(objstore_partition_remove(ctx->store, args->partition)));
}
