/* STATS: the I/O counters since the target started (osd_stats.h). */
#include "ctl_server.h"

enum rpc_outcome ctl_proc_stats(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	uint64_t v[OSD_STAT_COUNT];
	osd_stats_res res = { .status = OSD_OK };
	osd_stats_res_ok *ok = &res.osd_stats_res_u.ok;

	osd_stats_snapshot(ctx->stats, v);
	ok->started_ns = ctx->stats->started_ns;
	ok->nfs_read_ops = v[OSD_STAT_NFS_READ_OPS];
	ok->nfs_read_bytes = v[OSD_STAT_NFS_READ_BYTES];
	ok->nfs_write_ops = v[OSD_STAT_NFS_WRITE_OPS];
	ok->nfs_write_bytes = v[OSD_STAT_NFS_WRITE_BYTES];
	ok->nfs_write_unstable = v[OSD_STAT_NFS_WRITE_UNSTABLE];
	ok->nfs_write_data_sync = v[OSD_STAT_NFS_WRITE_DATA_SYNC];
	ok->nfs_write_file_sync = v[OSD_STAT_NFS_WRITE_FILE_SYNC];
	ok->nfs_commit_ops = v[OSD_STAT_NFS_COMMIT_OPS];
	ok->nfs_err_rejected = v[OSD_STAT_NFS_ERR_REJECTED];
	ok->nfs_err_io = v[OSD_STAT_NFS_ERR_IO];
	ok->nfs_err_other = v[OSD_STAT_NFS_ERR_OTHER];
	ok->ctl_read_ops = v[OSD_STAT_CTL_READ_OPS];
	ok->ctl_read_bytes = v[OSD_STAT_CTL_READ_BYTES];
	ok->ctl_write_ops = v[OSD_STAT_CTL_WRITE_OPS];
	ok->ctl_write_bytes = v[OSD_STAT_CTL_WRITE_BYTES];
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_stats_res), &res, CTL_SMALL_RES);
}
