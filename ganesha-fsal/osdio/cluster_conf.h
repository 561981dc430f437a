/* cluster.conf, what a metadata manager reads at start: the cluster key,
 * and the seed of the cluster map (epoch 0) until etcd has one: the OSD
 * partition its files live in, and each OSD's id, control address,
 * NFSv3 data-server address and the address pNFS clients are told to
 * use.  Format (one item per line, '#' starts a comment):
 *
 *   key_file = cluster.key        # relative to the file's folder
 *   partition = 1                 # optional, default 1
 *   osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491 [advertise=10.0.2.2:20491]
 *         [capacity=BYTES] [pool=NAME]
 *
 * Every OSD of the seed is up and in; its weight is its capacity, or
 * CLUSTER_CONF_DEFAULT_WEIGHT (all alike) when none is given.
 *
 * No Ganesha types here: pando-fsck reads the same file. */
#ifndef PANDO_CLUSTER_CONF_H
#define PANDO_CLUSTER_CONF_H

#include <limits.h>
#include <stddef.h>

#include "cluster_map.h"
#include "pando/cluster_key.h"

#define CLUSTER_CONF_DEFAULT_WEIGHT (1ull << 40)

struct cluster_conf {
	struct cluster_key key;
	char key_path[PATH_MAX]; /* where key came from, for a reload */
	struct cluster_map map;  /* the seed: epoch 0 */
};

/* 0, or -errno with a message in why[cap] naming the file and line:
 * -ENOENT/-EACCES/-EISDIR/-EIO (cannot read), -EINVAL (malformed). */
int cluster_conf_load(const char *path, struct cluster_conf *out, char *why, size_t cap);
void cluster_conf_free(struct cluster_conf *c);

#endif
