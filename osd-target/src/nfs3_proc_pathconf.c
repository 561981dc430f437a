/* PATHCONF: objects have no names or links, but clients ask anyway. */
#include "nfs3.h"

#define PATHCONF_NAME_MAX 255u

static void encode_pathconf_ok(struct xdr_w *out)
{
	xw_u32(out, 1);                 /* linkmax */
	xw_u32(out, PATHCONF_NAME_MAX); /* name_max */
	xw_bool(out, true);             /* no_trunc */
	xw_bool(out, true);             /* chown_restricted */
	xw_bool(out, false);            /* case_insensitive */
	xw_bool(out, true);             /* case_preserving */
}

enum rpc_outcome nfs3_proc_pathconf(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				    struct xdr_r *args, struct rpc_reply *reply)
{
	return nfs3_reply_static_info(ctx, who, args, reply, encode_pathconf_ok);
}
