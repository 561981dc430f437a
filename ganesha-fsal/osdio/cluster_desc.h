/* The static cluster description a metadata manager reads at start: the
 * cluster key, the OSD partition its files live in, and each OSD's id,
 * control address, NFSv3 data-server address and the address pNFS clients
 * are told to use.  Format (one item per line, '#' starts a comment):
 *
 *   key_file = cluster.key        # relative to the description's folder
 *   partition = 1                 # optional, default 1
 *   osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491 [advertise=10.0.2.2:20491]
 *         [capacity=BYTES]
 *
 * No Ganesha types here: pando-fsck reads the same file. */
#ifndef PANDO_CLUSTER_DESC_H
#define PANDO_CLUSTER_DESC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "pando/cluster_key.h"

#define CLUSTER_DESC_MAX_OSDS 1024
#define CLUSTER_DESC_ADDR_MAX 64

struct cluster_osd {
	uint32_t id;
	char ctl[CLUSTER_DESC_ADDR_MAX];       /* host:port of the control RPC */
	char nfs[CLUSTER_DESC_ADDR_MAX];       /* host:port of the NFSv3 data server */
	char advertise[CLUSTER_DESC_ADDR_MAX]; /* what clients are told; nfs if unset */
	uint64_t capacity;                     /* placement weight; 0: take statfs */
};

struct cluster_desc {
	struct cluster_key key;
	char key_path[PATH_MAX]; /* where key came from, for a reload */
	uint64_t partition;
	size_t nosds;
	struct cluster_osd *osds; /* sorted by id */
};

/* 0, or -errno with a message in why[cap] naming the file and line:
 * -ENOENT/-EACCES/-EISDIR/-EIO (cannot read), -EINVAL (malformed). */
int cluster_desc_load(const char *path, struct cluster_desc *out, char *why, size_t cap);
void cluster_desc_free(struct cluster_desc *d);
/* The OSD with this id, or NULL. */
const struct cluster_osd *cluster_desc_osd(const struct cluster_desc *d, uint32_t id);

#endif
