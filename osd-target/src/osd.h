/* What the NFSv3 and control programs of one pando-osd share. */
#ifndef PANDO_OSD_H
#define PANDO_OSD_H

#include <stdint.h>

#include "objstore.h"
#include "osd_stats.h"
#include "pando/cluster_key.h"
#include "rpc_server.h"

#define OSD_NFS_MAX_IO (1u << 20)                 /* rtmax/wtmax */
#define OSD_MAX_RECORD (OSD_NFS_MAX_IO + (64u << 10))

struct osd_ctx {
	struct objstore *store;
	const struct cluster_key *key;
	uint32_t osd_id;
	uint8_t write_verf[8];    /* drawn at start: changes on every restart */
	uint64_t fsid;            /* from the target uuid */
	/* Through a pointer: the NFS procedures get the context const, yet
	 * count what they serve. */
	struct osd_stats *stats;
};

enum rpc_outcome nfs3_dispatch(void *ctx, const struct rpc_call *call, struct rpc_reply *reply);
enum rpc_outcome ctl_dispatch(void *ctx, const struct rpc_call *call, struct rpc_reply *reply);

#define NFS3_PROGRAM 100003u
#define NFS3_VERSION 3u

#endif
