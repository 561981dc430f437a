/* The cluster map's JSON as the mgr keeps it in etcd (`<prefix>map`,
 * mgr/README.md), parsed into the one type for the set of OSDs
 * (common/cluster_map.h).  Members the metadata manager does not use
 * (pools, updated_at, down_at, ...) are accepted and ignored.
 *
 * No Ganesha types here: pando-fsck links this folder. */
#ifndef PANDO_CLUSTER_MAP_JSON_H
#define PANDO_CLUSTER_MAP_JSON_H

#include <stddef.h>

#include "cluster_map.h"

/* Parses json[len].  0, or -EINVAL with the reason in why[cap] (the JSON
 * error and where, or which member is missing or wrong), -ENOMEM.  On
 * failure *out is left as it was. */
int cluster_map_parse(const char *json, size_t len, struct cluster_map *out, char *why, size_t cap);

/* The map the metadata manager kept beside its store (<Db_Path>.map.json)
 * for tools that run without etcd: 0, -ENOENT (none kept), -EFBIG, -errno
 * (cannot read), or cluster_map_parse's errors with why[cap]. */
int cluster_map_load(const char *path, struct cluster_map *out, char *why, size_t cap);

#endif
