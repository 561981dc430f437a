/* Batched object creation and removal: CREATE_OBJECTS, REMOVE_OBJECTS
 * (ctl_proc_create.c and ctl_proc_remove.c on the server). */
#include <errno.h>
#include <stdlib.h>

#include "ctl_client.h"

struct create_out {
	struct osd_ctl_create_item *items;
	int *results;
	size_t n;
};

static int take_create(const void *res, int rc, void *arg)
{
	const osd_create_res_ok *ok = &((const osd_create_res *)res)->osd_create_res_u.ok;
	struct create_out *out = arg;

	if (!rc && ok->results.results_len != out->n)
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < out->n; i++) {
		out->results[i] = ctl_status_errno(ok->results.results_val[i].status);
		if (!out->results[i])
			out->items[i].object = ok->results.results_val[i].object;
	}
	return rc;
}

/* The arguments' item array (n + 1 items, freed by the caller). */
static osd_create_item *create_items(const struct osd_ctl_create_item *items, size_t n)
{
	osd_create_item *v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = (osd_create_item){
			.object = items[i].object,
			.owner_file = items[i].owner_file,
			.component = items[i].component,
			.cap_version = items[i].cap_version,
		};
	return v;
}

int osd_ctl_objects_create(struct osd_ctl_client *c, uint64_t partition,
			   struct osd_ctl_create_item *items, size_t n, int *results)
{
	struct create_out out = { items, results, n };
	osd_create_args args = { .partition = partition };
	osd_create_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_create_res, take_create, &out);
	int rc;

	if (n > OSD_CTL_MAX_BATCH)
		return -EINVAL;
	args.items.items_val = create_items(items, n);
	if (!args.items.items_val)
		return -ENOMEM;
	args.items.items_len = (u_int)n;
	rc = ctl_call_result(c, OSDCTL_CREATE_OBJECTS, CTL_XDRPROC(xdr_osd_create_args), &args,
			     &res);
	free(args.items.items_val);
	return rc;
}

struct remove_out {
	int *results;
	size_t n;
};

static int take_remove(const void *res, int rc, void *arg)
{
	const osd_remove_res_ok *ok = &((const osd_remove_res *)res)->osd_remove_res_u.ok;
	struct remove_out *out = arg;

	if (!rc && ok->results.results_len != out->n)
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < out->n; i++)
		out->results[i] = ctl_status_errno(ok->results.results_val[i]);
	return rc;
}

int osd_ctl_objects_remove(struct osd_ctl_client *c, uint64_t partition, const uint64_t *objects,
			   size_t n, int *results)
{
	struct remove_out out = { results, n };
	osd_remove_args args = { .partition = partition };
	osd_remove_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_remove_res, take_remove, &out);

	if (n > OSD_CTL_MAX_BATCH)
		return -EINVAL;
	args.objects.objects_len = (u_int)n;
	/* Encoding only reads the ids. */
	args.objects.objects_val = (osd_u64 *)objects;
	return ctl_call_result(c, OSDCTL_REMOVE_OBJECTS, CTL_XDRPROC(xdr_osd_remove_args), &args,
			       &res);
}
