/* SETATTR: applied in order, stopping at the first failure, whose index is
 * reported so the caller knows which attributes took effect. */
#include "ctl_server.h"

enum rpc_outcome ctl_proc_setattr(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_setattr_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	osd_setattr_res res = { .status = OSD_OK, .failed_index = 0 };

	for (u_int i = 0; i < args->attrs.attrs_len; i++) {
		const osd_attr *a = &args->attrs.attrs_val[i];
		int err = objstore_attr_set(ctx->store, &id, a->page, a->number, a->value.value_val,
					    a->value.value_len);

		if (err) {
			res.status = ctl_status(err);
			res.failed_index = i;
			break;
		}
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_setattr_res), &res, CTL_SMALL_RES);
}
