/* The cluster map as the mgr keeps it in etcd (`<prefix>map`, the JSON of
 * mgr/README.md), parsed into plain C for the metadata manager: the map's
 * epoch, the OSD partition, and each OSD's addresses, placement weight,
 * failure domain and state (up, in).  Members the manager does not use
 * (pools, updated_at, down_at, ...) are accepted and ignored.
 *
 * No Ganesha types here: pando-fsck links this folder. */
#ifndef PANDO_CLUSTER_MAP_H
#define PANDO_CLUSTER_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_desc.h"

#define CLUSTER_MAP_MAX_OSDS CLUSTER_DESC_MAX_OSDS
#define CLUSTER_MAP_DOMAIN_MAX 64

struct cluster_map_osd {
	uint32_t id;
	char ctl[CLUSTER_DESC_ADDR_MAX];
	char nfs[CLUSTER_DESC_ADDR_MAX];
	char advertise[CLUSTER_DESC_ADDR_MAX]; /* nfs when absent or "" */
	uint64_t weight;                       /* bytes; 0: takes no new components */
	char domain[CLUSTER_MAP_DOMAIN_MAX];   /* "": the OSD alone */
	bool up;
	bool in;
};

struct cluster_map {
	uint64_t epoch;     /* >= 1 */
	uint64_t partition; /* >= 1 */
	size_t nosds;
	struct cluster_map_osd *osds; /* sorted by id */
};

/* Parses json[len].  0, or -EINVAL with the reason in why[cap] (the JSON
 * error and where, or which member is missing or wrong), -ENOMEM.  On
 * failure *out is left as it was. */
int cluster_map_parse(const char *json, size_t len, struct cluster_map *out, char *why, size_t cap);
void cluster_map_free(struct cluster_map *m);
/* The OSD with this id, or NULL. */
const struct cluster_map_osd *cluster_map_osd(const struct cluster_map *m, uint32_t id);
/* Whether the OSD takes new components: up, in and a non-zero weight. */
bool cluster_map_osd_takes(const struct cluster_map_osd *o);

/* The map the metadata manager kept beside its store (<Db_Path>.map.json)
 * for tools that run without etcd: 0, -ENOENT (none kept), -EFBIG, -errno
 * (cannot read), or cluster_map_parse's errors with why[cap]. */
int cluster_map_load(const char *path, struct cluster_map *out, char *why, size_t cap);
/* The static description brought up to the map: the map's addresses for
 * the OSDs both list (the map is newer), and the OSDs the map added.
 * d->osds must have room for CLUSTER_DESC_MAX_OSDS (cluster_desc_load's).
 * 0, or -E2BIG with d unchanged. */
int cluster_desc_merge_map(struct cluster_desc *d, const struct cluster_map *m);

#endif
