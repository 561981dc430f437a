/* SET_CAP_VERSION: fences every handle minted with another version, read
 * or write (they answer NFS3ERR_STALE from now on): the version and the
 * read floor both become the one given.  Returns the version replaced. */
#include "ctl_server.h"
#include "log.h"

enum rpc_outcome ctl_proc_setcap(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_setcap_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	osd_setcap_res res = { 0 };
	uint32_t old = 0;
	int err = objstore_set_cap_version(ctx->store, &id, args->cap_version, &old);

	res.status = ctl_status(err);
	if (!err) {
		res.old_version = old;
		log_debug("ctl: object %llx.%llx capability version %u -> %u",
			  (unsigned long long)id.partition, (unsigned long long)id.object, old,
			  args->cap_version);
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_setcap_res), &res, CTL_SMALL_RES);
}
