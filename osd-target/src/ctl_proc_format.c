/* FORMAT: wipe every partition and object, keeping the target's identity.
 * The caller must name this target's uuid, so a command aimed at one
 * target can never wipe another. */
#include <string.h>

#include "ctl_server.h"
#include "log.h"

enum rpc_outcome ctl_proc_format(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_format_args *args = argp;
	const struct objstore_superblock *sb = objstore_superblock(ctx->store);
	int err;

	if (memcmp(args->target_uuid, sb->uuid, sizeof(sb->uuid)) != 0) {
		log_warn("ctl: FORMAT refused: the uuid given is not this target's");
		return ctl_reply_status(reply, OSD_ERR_ACCES);
	}
	err = objstore_wipe(ctx->store);
	if (err)
		log_error("ctl: FORMAT failed: %s", strerror(-err));
	else
		log_info("ctl: FORMAT: every partition and object removed");
	return ctl_reply_status(reply, ctl_status(err));
}
