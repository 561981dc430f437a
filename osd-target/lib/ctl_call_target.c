/* Control procedures about the target as a whole: NULL, STATFS, STATS,
 * FORMAT, FLUSH (ctl_proc_statfs.c, _stats.c, _format.c, _flush.c on the
 * server). */
#include <errno.h>
#include <string.h>

#include "ctl_client.h"

static int decode_void(const uint8_t *res, size_t len, void *out)
{
	return len == 0 ? 0 : -EPROTO;
}

int osd_ctl_null(struct osd_ctl_client *c)
{
	struct ctl_call call = { .proc = OSDCTL_NULL,
				 .xdr_args = CTL_XDRPROC(xdr_void),
				 .decode = decode_void };

	return ctl_call(c, &call);
}

static int take_statfs(const void *res, int rc, void *arg)
{
	const osd_statfs_res_ok *ok = &((const osd_statfs_res *)res)->osd_statfs_res_u.ok;
	struct osd_ctl_statfs *out = arg;

	if (rc)
		return rc;
	memcpy(out->uuid, ok->target_uuid, sizeof(out->uuid));
	out->osd_id = ok->osd_id;
	out->key_id = ok->key_id;
	out->total_bytes = ok->total_bytes;
	out->free_bytes = ok->free_bytes;
	out->partitions = ok->partitions;
	out->objects = ok->objects;
	out->created_ns = ok->created_ns;
	return 0;
}

int osd_ctl_statfs(struct osd_ctl_client *c, struct osd_ctl_statfs *out)
{
	osd_statfs_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_statfs_res, take_statfs, out);

	return ctl_call_result(c, OSDCTL_STATFS, CTL_XDRPROC(xdr_void), NULL, &res);
}

static int take_stats(const void *res, int rc, void *arg)
{
	const osd_stats_res_ok *ok = &((const osd_stats_res *)res)->osd_stats_res_u.ok;
	struct osd_ctl_stats *out = arg;

	if (rc)
		return rc;
	*out = (struct osd_ctl_stats){
		.started_ns = ok->started_ns,
		.nfs_read_ops = ok->nfs_read_ops,
		.nfs_read_bytes = ok->nfs_read_bytes,
		.nfs_write_ops = ok->nfs_write_ops,
		.nfs_write_bytes = ok->nfs_write_bytes,
		.nfs_write_unstable = ok->nfs_write_unstable,
		.nfs_write_data_sync = ok->nfs_write_data_sync,
		.nfs_write_file_sync = ok->nfs_write_file_sync,
		.nfs_commit_ops = ok->nfs_commit_ops,
		.nfs_err_rejected = ok->nfs_err_rejected,
		.nfs_err_io = ok->nfs_err_io,
		.nfs_err_other = ok->nfs_err_other,
		.ctl_read_ops = ok->ctl_read_ops,
		.ctl_read_bytes = ok->ctl_read_bytes,
		.ctl_write_ops = ok->ctl_write_ops,
		.ctl_write_bytes = ok->ctl_write_bytes,
	};
	return 0;
}

int osd_ctl_stats(struct osd_ctl_client *c, struct osd_ctl_stats *out)
{
	osd_stats_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_stats_res, take_stats, out);

	return ctl_call_result(c, OSDCTL_STATS, CTL_XDRPROC(xdr_void), NULL, &res);
}

int osd_ctl_format(struct osd_ctl_client *c, const uint8_t uuid[OSD_CTL_UUID_LEN])
{
	osd_format_args args;

	memcpy(args.target_uuid, uuid, sizeof(args.target_uuid));
	return ctl_call_status(c, OSDCTL_FORMAT, CTL_XDRPROC(xdr_osd_format_args), &args);
}

int osd_ctl_flush(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id)
{
	osd_flush_args args = { .id = { id ? id->partition : 0, id ? id->object : 0 } };

	return ctl_call_status(c, OSDCTL_FLUSH, CTL_XDRPROC(xdr_osd_flush_args), &args);
}
