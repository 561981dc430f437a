/* What the NFSv3 and control programs of one pando-osd share. */
#ifndef PANDO_OSD_H
#define PANDO_OSD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctl_auth.h"
#include "ctl_replay.h"
#include "objstore.h"
#include "osd_keys.h"
#include "osd_stats.h"
#include "osd_throttle.h"
#include "pando/cluster_key.h"
#include "rpc_server.h"

#define OSD_NFS_MAX_IO (1u << 20) /* rtmax/wtmax */
#define OSD_MAX_RECORD (OSD_NFS_MAX_IO + (64u << 10))

struct osd_ctx {
	struct objstore *store;
	/* Capabilities' and control calls' keys: through a pointer, as the
	 * programs get the context const yet take the keys' lock. */
	struct osd_keys *keys;
	uint32_t osd_id;
	uint8_t verf_base[8]; /* drawn at start; see osd_write_verf */
	uint64_t fsid;        /* from the target uuid */
	/* Through a pointer: the NFS procedures get the context const, yet
	 * count what they serve. */
	struct osd_stats *stats;
	/* The disk model's buckets; NULL: that direction is unlimited. */
	struct osd_throttle *throttle_read;
	struct osd_throttle *throttle_write;
	/* The control program's: the credentials it has admitted. */
	struct ctl_replay *replay;
};

/* Waits for the disk model to grant bytes in one direction, counting the
 * wait (osd_stats); a no-op when the direction is unlimited.  Call it with
 * no lock held, before the I/O. */
static inline void osd_throttle_io(const struct osd_ctx *ctx, bool write, uint64_t bytes)
{
	struct osd_throttle *t = write ? ctx->throttle_write : ctx->throttle_read;
	uint64_t waited;

	if (!t)
		return;
	waited = osd_throttle_take(t, bytes);
	if (waited)
		osd_stats_add(ctx->stats,
			      write ? OSD_STAT_THROTTLE_WAIT_NS_WRITE
				    : OSD_STAT_THROTTLE_WAIT_NS_READ,
			      waited);
}

/* The write verifier: drawn at every start, and moved on by every sync
 * of the store that failed, since either may have lost UNSTABLE bytes
 * that clients must then send again (knfsd: nfsd_reset_write_verifier).
 * A WRITE takes it before its bytes land (a sync failing after that may
 * drop them); a COMMIT after its own sync. */
static inline void osd_write_verf(const struct osd_ctx *ctx, uint8_t verf[8])
{
	uint64_t v;

	memcpy(&v, ctx->verf_base, sizeof(v));
	v += objstore_sync_failures(ctx->store);
	memcpy(verf, &v, sizeof(v));
}

enum rpc_outcome nfs3_dispatch(void *ctx, const struct rpc_call *call, struct rpc_reply *reply);
enum rpc_outcome ctl_dispatch(void *ctx, const struct rpc_call *call, struct rpc_reply *reply);
/* The programs' admission (rpc_admit_fn): the control program
 * authenticates the credential before the arguments are read; NFSv3
 * checks the credential's form and bounds the arguments by the procedure
 * (a WRITE by its count, anything else OSD_NFS_SMALL_ARGS). */
enum rpc_outcome nfs3_admit(void *ctx, const struct rpc_call *call, struct rpc_reply *reply,
			    size_t *max_args);
enum rpc_outcome ctl_admit(void *ctx, const struct rpc_call *call, struct rpc_reply *reply,
			   size_t *max_args);
#define OSD_NFS_SMALL_ARGS 4096u

#define NFS3_PROGRAM 100003u
#define NFS3_VERSION 3u

#endif
