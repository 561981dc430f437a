/* REVOKE_WRITERS: raises an object's capability version and leaves its
 * read floor, so the write handles minted before answer NFS3ERR_STALE
 * from now on while the read handles stay good.  A version not above the
 * current one changes nothing.  Answers, as SET_CAP_VERSION does, once
 * the requests holding the old version are done. */
#include "ctl_server.h"
#include "log.h"

enum rpc_outcome ctl_proc_revoke(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_setcap_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	osd_setcap_res res = { 0 };
	uint32_t old = 0;
	int err = objstore_revoke_writers(ctx->store, &id, args->cap_version, &old);

	res.status = ctl_status(err);
	if (!err) {
		res.old_version = old;
		log_debug("ctl: object %llx.%llx writers revoked: version %u -> %u",
			  (unsigned long long)id.partition, (unsigned long long)id.object, old,
			  old < args->cap_version ? args->cap_version : old);
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_setcap_res), &res, CTL_SMALL_RES);
}
