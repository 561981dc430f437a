/* The set of OSDs: the cluster map, as the mgr keeps it in etcd
 * (`<prefix>map`, mgr/README.md) and as every C component holds it.
 *
 * There is one type for it.  The metadata manager seeds one from
 * cluster.conf (epoch 0), replaces it with each newer map from etcd, and
 * derives from it the placement view (layout/include/pando/placement.h)
 * and the OSD connections (ganesha-fsal/osdio/osd_conns.h); pando-fsck
 * reads the same.  Parsing lives with the readers of each format:
 * ganesha-fsal/osdio/cluster_map_json.h and cluster_conf.h. */
#ifndef PANDO_CLUSTER_MAP_H
#define PANDO_CLUSTER_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_MAP_MAX_OSDS 1024
#define CLUSTER_MAP_ADDR_MAX 64
#define CLUSTER_MAP_DOMAIN_MAX 64
/* A pool name: 1 to 31 of [a-z0-9_-], starting with a letter or digit. */
#define CLUSTER_MAP_POOL_MAX 32

struct cluster_map_osd {
	uint32_t id;
	char ctl[CLUSTER_MAP_ADDR_MAX];       /* host:port of the control RPC */
	char nfs[CLUSTER_MAP_ADDR_MAX];       /* host:port of the NFSv3 data server */
	char advertise[CLUSTER_MAP_ADDR_MAX]; /* what clients are told; nfs if unset */
	uint64_t weight;                      /* bytes; 0: takes no new components */
	char domain[CLUSTER_MAP_DOMAIN_MAX];  /* failure domain; "": the OSD alone */
	char pool[CLUSTER_MAP_POOL_MAX];      /* the named pool it serves; "": none */
	bool up;
	bool in;
	/* A later map dropped it: still known, because components name it,
	 * but down, out and without weight (cluster_map_merge). */
	bool removed;
};

struct cluster_map {
	uint64_t epoch;     /* 0: cluster.conf's seed; from etcd, >= 1 */
	uint64_t partition; /* >= 1 */
	size_t nosds;
	struct cluster_map_osd *osds; /* sorted by id, ids distinct */
};

/* The OSD with this id, or NULL. */
const struct cluster_map_osd *cluster_map_osd(const struct cluster_map *m, uint32_t id);
/* Whether the OSD takes new components: up, in and a non-zero weight. */
bool cluster_map_osd_takes(const struct cluster_map_osd *o);
/* Whether s is a pool name: 1 to CLUSTER_MAP_POOL_MAX - 1 of a-z, 0-9,
 * '-' and '_', not starting with '-' or '_', and not "default". */
bool cluster_map_pool_name_ok(const char *s);
/* Whether the OSD serves placements in pool: every OSD for NULL or "",
 * otherwise the OSDs the map puts in that pool. */
bool cluster_map_osd_in_pool(const struct cluster_map_osd *o, const char *pool);
/* Sorts m->osds by id: 0, or -EINVAL when two share an id (in *dup). */
int cluster_map_sort(struct cluster_map *m, uint32_t *dup);
/* *out = newer brought over older: newer's epoch, partition and OSDs,
 * and every OSD only older lists, marked removed.  0, -E2BIG past
 * CLUSTER_MAP_MAX_OSDS, -ENOMEM; *out is only written on success. */
int cluster_map_merge(const struct cluster_map *older, const struct cluster_map *newer,
		      struct cluster_map *out);
void cluster_map_free(struct cluster_map *m);

#endif
