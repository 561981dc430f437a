/* STATFS: the target's identity, capacity and counts. */
#include <string.h>

#include "ctl_server.h"

enum rpc_outcome ctl_proc_statfs(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const struct objstore_superblock *sb = objstore_superblock(ctx->store);
	struct objstore_stat st;
	osd_statfs_res res = { 0 };
	osd_statfs_res_ok *ok = &res.osd_statfs_res_u.ok;
	int err = objstore_statfs(ctx->store, &st);

	res.status = ctl_status(err);
	if (!err) {
		memcpy(ok->target_uuid, sb->uuid, sizeof(ok->target_uuid));
		ok->osd_id = sb->osd_id;
		ok->key_id = sb->key_id;
		ok->total_bytes = st.total_bytes;
		ok->free_bytes = st.free_bytes;
		ok->partitions = st.partitions;
		ok->objects = st.objects;
		ok->created_ns = sb->created_ns;
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_statfs_res), &res, CTL_SMALL_RES);
}
