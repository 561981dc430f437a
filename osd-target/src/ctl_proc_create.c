/* CREATE_OBJECTS: a batch of objects in one durable store batch, each with
 * its own status; ids of 0 are picked by the target. */
#include <errno.h>
#include <stdlib.h>

#include "ctl_server.h"

/* Per request: what the store is asked, what it answers. */
struct create_scratch {
	struct obj_create_req *reqs;
	int *errs;
	osd_create_result *results;
};

static int scratch_alloc(struct create_scratch *s, size_t n)
{
	/* One spare element, so an empty batch still gets real pointers. */
	s->reqs = calloc(n + 1, sizeof(*s->reqs));
	s->errs = calloc(n + 1, sizeof(*s->errs));
	s->results = calloc(n + 1, sizeof(*s->results));
	return s->reqs && s->errs && s->results ? 0 : -ENOMEM;
}

static void scratch_free(struct create_scratch *s)
{
	free(s->reqs);
	free(s->errs);
	free(s->results);
}

static enum rpc_outcome create_reply(struct rpc_reply *reply, int err, osd_create_result *results,
				     size_t n)
{
	osd_create_res res = { .status = ctl_status(err) };

	if (!err) {
		res.osd_create_res_u.ok.results.results_len = (u_int)n;
		res.osd_create_res_u.ok.results.results_val = results;
	}
	/* status, count, then (status, id) per item */
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_create_res), &res, 8 + 12 * n);
}

enum rpc_outcome ctl_proc_create(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_create_args *args = argp;
	size_t n = args->items.items_len;
	struct create_scratch s;
	enum rpc_outcome out;
	int err = scratch_alloc(&s, n);

	for (size_t i = 0; !err && i < n; i++) {
		const osd_create_item *item = &args->items.items_val[i];

		s.reqs[i] = (struct obj_create_req){
			.object = item->object,
			.owner_file = item->owner_file,
			.component = item->component,
			.cap_version = item->cap_version,
		};
	}
	if (!err)
		err = objstore_object_create(ctx->store, args->partition, s.reqs, n, s.errs);
	for (size_t i = 0; !err && i < n; i++) {
		s.results[i].status = ctl_status(s.errs[i]);
		s.results[i].object = s.reqs[i].object;
	}
	out = create_reply(reply, err, s.results, n);
	scratch_free(&s);
	return out;
}
