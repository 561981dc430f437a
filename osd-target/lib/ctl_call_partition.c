/* Control procedures on partitions: CREATE/REMOVE_PARTITION and LIST
 * (ctl_proc_partition.c and ctl_proc_list.c on the server). */
#include <errno.h>
#include <string.h>

#include "ctl_client.h"

int osd_ctl_partition_create(struct osd_ctl_client *c, uint64_t partition)
{
	osd_partition_args args = { .partition = partition };

	return ctl_call_status(c, OSDCTL_CREATE_PARTITION, CTL_XDRPROC(xdr_osd_partition_args),
			       &args);
}

int osd_ctl_partition_remove(struct osd_ctl_client *c, uint64_t partition)
{
	osd_partition_args args = { .partition = partition };

	return ctl_call_status(c, OSDCTL_REMOVE_PARTITION, CTL_XDRPROC(xdr_osd_partition_args),
			       &args);
}

struct list_out {
	uint64_t *ids;
	size_t max;
	size_t *n;
	bool *eof;
};

static int take_list(const void *res, int rc, void *arg)
{
	const osd_list_res_ok *ok = &((const osd_list_res *)res)->osd_list_res_u.ok;
	struct list_out *out = arg;

	if (!rc && ok->ids.ids_len > out->max)
		rc = -EPROTO;
	if (rc)
		return rc;
	if (ok->ids.ids_len) /* XDR leaves an empty array's ids_val NULL */
		memcpy(out->ids, ok->ids.ids_val, ok->ids.ids_len * sizeof(uint64_t));
	*out->n = ok->ids.ids_len;
	*out->eof = ok->eof;
	return 0;
}

int osd_ctl_list(struct osd_ctl_client *c, uint64_t partition, uint64_t after, uint64_t *ids,
		 size_t max, size_t *n, bool *eof)
{
	struct list_out out = { ids, max, n, eof };
	osd_list_args args = { .partition = partition, .after = after, .max = (u_int)max };
	osd_list_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_list_res, take_list, &out);

	/* max 0 would ask the target for a full page we have no room for. */
	if (max == 0 || max > OSD_CTL_MAX_BATCH)
		return -EINVAL;
	return ctl_call_result(c, OSDCTL_LIST, CTL_XDRPROC(xdr_osd_list_args), &args, &res);
}
