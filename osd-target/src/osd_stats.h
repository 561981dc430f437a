/* The target's I/O counters since its start: what the NFSv3 data server
 * and the control program have served, for tests and operators to tell
 * data that went straight from clients to the target (NFS) from data the
 * gateway moved (control protocol).
 *
 * Workers add with relaxed atomics and nothing else: no lock, no fence,
 * one add per counter touched.  Each counter is exact; a snapshot taken
 * while I/O runs may see an op counted before its bytes.  Read them with
 * STATS (ctl_proc_stats.c), `pando-osd-tool stat`, or the daemon's log. */
#ifndef PANDO_OSD_STATS_H
#define PANDO_OSD_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Ops count calls answered OK; a failed NFS call counts in one error class
 * instead (by its nfsstat3, see nfs3_server.c). */
enum osd_stat {
	OSD_STAT_NFS_READ_OPS,
	OSD_STAT_NFS_READ_BYTES,
	OSD_STAT_NFS_WRITE_OPS,
	OSD_STAT_NFS_WRITE_BYTES,
	OSD_STAT_NFS_WRITE_UNSTABLE, /* WRITE ops by stable_how, in its order */
	OSD_STAT_NFS_WRITE_DATA_SYNC,
	OSD_STAT_NFS_WRITE_FILE_SYNC,
	OSD_STAT_NFS_COMMIT_OPS,
	OSD_STAT_NFS_ERR_REJECTED, /* BADHANDLE, STALE, ACCES */
	OSD_STAT_NFS_ERR_IO,       /* IO, NOSPC, SERVERFAULT */
	OSD_STAT_NFS_ERR_OTHER,    /* INVAL, FBIG, NOTSUPP, ... */
	OSD_STAT_CTL_READ_OPS,
	OSD_STAT_CTL_READ_BYTES,
	OSD_STAT_CTL_WRITE_OPS,
	OSD_STAT_CTL_WRITE_BYTES,
	/* The counters above are STATS's, in osd_ctl.x's order; those below
	 * are in the log and the etcd presence only (STATS cannot grow). */
	OSD_STAT_WIRE_COUNT,
	/* ns requests slept in the disk model's buckets (osd_throttle.h) */
	OSD_STAT_THROTTLE_WAIT_NS_READ = OSD_STAT_WIRE_COUNT,
	OSD_STAT_THROTTLE_WAIT_NS_WRITE,
	/* control calls refused by AUTH_PANDO (credential, time, MAC, replay) */
	OSD_STAT_CTL_AUTH_DENIED,
	/* of those, replays: a credential admitted before (or older than what
	 * a full replay cache still holds) */
	OSD_STAT_CTL_REPLAYS_REFUSED,
	OSD_STAT_COUNT
};

struct osd_stats {
	uint64_t started_ns; /* Unix ns when counting began */
	_Atomic uint64_t v[OSD_STAT_COUNT];
};

/* The names `pando-osd-tool stat` prints and the log uses, by counter. */
extern const char *const osd_stat_names[OSD_STAT_COUNT];

/* All counters zero, started_ns now. */
void osd_stats_init(struct osd_stats *s);
void osd_stats_snapshot(const struct osd_stats *s, uint64_t out[OSD_STAT_COUNT]);
/* Logs a snapshot at info level: "counters WHEN: name=value ...". */
void osd_stats_log(const uint64_t v[OSD_STAT_COUNT], const char *when);

static inline void osd_stats_add(struct osd_stats *s, enum osd_stat k, uint64_t n)
{
	atomic_fetch_add_explicit(&s->v[k], n, memory_order_relaxed);
}

/* stable is a checked stable_how (0..2): UNSTABLE, DATA_SYNC, FILE_SYNC. */
static inline void osd_stats_nfs_write(struct osd_stats *s, uint64_t bytes, uint32_t stable)
{
	osd_stats_add(s, OSD_STAT_NFS_WRITE_OPS, 1);
	osd_stats_add(s, OSD_STAT_NFS_WRITE_BYTES, bytes);
	osd_stats_add(s, (enum osd_stat)(OSD_STAT_NFS_WRITE_UNSTABLE + stable), 1);
}

#endif
