/* REMOVE_OBJECTS: a batch of objects, each with its own status. */
#include <errno.h>
#include <stdlib.h>

#include "ctl_server.h"

static enum rpc_outcome remove_reply(struct rpc_reply *reply, int err,
				     osd_status *results, size_t n)
{
	osd_remove_res res = { .status = ctl_status(err) };

	if (!err) {
		res.osd_remove_res_u.ok.results.results_len = (u_int)n;
		res.osd_remove_res_u.ok.results.results_val = results;
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_remove_res), &res, 8 + 4 * n);
}

enum rpc_outcome ctl_proc_remove(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_remove_args *args = argp;
	size_t n = args->objects.objects_len;
	/* One spare element, so an empty batch still gets real pointers. */
	int *errs = calloc(n + 1, sizeof(*errs));
	osd_status *results = calloc(n + 1, sizeof(*results));
	enum rpc_outcome out;
	int err = errs && results ? 0 : -ENOMEM;

	if (!err)
		err = objstore_object_remove(ctx->store, args->partition,
					     args->objects.objects_val, n, errs);
	for (size_t i = 0; !err && i < n; i++)
		results[i] = ctl_status(errs[i]);
	out = remove_reply(reply, err, results, n);
	free(errs);
	free(results);
	return out;
}
