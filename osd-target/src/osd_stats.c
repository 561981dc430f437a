/* The I/O counters: start, snapshot and the log line. */
#include "osd_stats.h"

#include <stdio.h>
#include <time.h>

#include "log.h"

const char *const osd_stat_names[OSD_STAT_COUNT] = {
	[OSD_STAT_NFS_READ_OPS] = "nfs_read_ops",
	[OSD_STAT_NFS_READ_BYTES] = "nfs_read_bytes",
	[OSD_STAT_NFS_WRITE_OPS] = "nfs_write_ops",
	[OSD_STAT_NFS_WRITE_BYTES] = "nfs_write_bytes",
	[OSD_STAT_NFS_WRITE_UNSTABLE] = "nfs_write_unstable",
	[OSD_STAT_NFS_WRITE_DATA_SYNC] = "nfs_write_data_sync",
	[OSD_STAT_NFS_WRITE_FILE_SYNC] = "nfs_write_file_sync",
	[OSD_STAT_NFS_COMMIT_OPS] = "nfs_commit_ops",
	[OSD_STAT_NFS_ERR_REJECTED] = "nfs_err_rejected",
	[OSD_STAT_NFS_ERR_IO] = "nfs_err_io",
	[OSD_STAT_NFS_ERR_OTHER] = "nfs_err_other",
	[OSD_STAT_CTL_READ_OPS] = "ctl_read_ops",
	[OSD_STAT_CTL_READ_BYTES] = "ctl_read_bytes",
	[OSD_STAT_CTL_WRITE_OPS] = "ctl_write_ops",
	[OSD_STAT_CTL_WRITE_BYTES] = "ctl_write_bytes",
	[OSD_STAT_THROTTLE_WAIT_NS_READ] = "throttle_wait_ns_read",
	[OSD_STAT_THROTTLE_WAIT_NS_WRITE] = "throttle_wait_ns_write",
	[OSD_STAT_CTL_AUTH_DENIED] = "ctl_auth_denied",
	[OSD_STAT_CTL_REPLAYS_REFUSED] = "ctl_replays_refused",
};

void osd_stats_init(struct osd_stats *s)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	s->started_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	for (int i = 0; i < OSD_STAT_COUNT; i++)
		atomic_init(&s->v[i], 0);
}

void osd_stats_snapshot(const struct osd_stats *s, uint64_t out[OSD_STAT_COUNT])
{
	for (int i = 0; i < OSD_STAT_COUNT; i++)
		out[i] = atomic_load_explicit(&s->v[i], memory_order_relaxed);
}

void osd_stats_log(const uint64_t v[OSD_STAT_COUNT], const char *when)
{
	/* 17 names of at most 22 characters and 20-digit values fit. */
	char line[1024];
	size_t n = 0;

	for (int i = 0; i < OSD_STAT_COUNT && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %s=%llu", osd_stat_names[i],
				      (unsigned long long)v[i]);
	log_info("counters %s:%s", when, line);
}
