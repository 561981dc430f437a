/* REMOVE_OBJECTS: a batch of objects, each with its own status. */
#include <errno.h>
#include <stdlib.h>

#include "ctl_server.h"

enum rpc_outcome ctl_proc_remove(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_remove_args *args = argp;
	size_t n = args->objects.objects_len;
	/* One spare element, so an empty batch still gets real pointers. */
	int *errs = calloc(n + 1, sizeof(*errs));
	osd_status *results = calloc(n + 1, sizeof(*results));
	osd_remove_res res = { 0 };
	enum rpc_outcome out;
	int err = errs && results ? 0 : -ENOMEM;

	if (!err)
		err = objstore_object_remove(ctx->store, args->partition, args->objects.objects_val,
					     n, errs);
	for (size_t i = 0; !err && i < n; i++)
		results[i] = ctl_status(errs[i]);
	/* The results go out only with OSD_OK: a failed batch is one status. */
	res.status = ctl_status(err);
	res.osd_remove_res_u.ok.results.results_len = (u_int)n;
	res.osd_remove_res_u.ok.results.results_val = results;
	out = ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_remove_res), &res, 8 + 4 * n);
	free(errs);
	free(results);
	return out;
}
