/* The cluster as the engine sees it now: the cluster map it holds (every
 * OSD it knows, with its addresses and state) and the placement view new
 * files are placed with, derived from that map.
 *
 * A view is immutable once published.  Readers take the current one with
 * an acquire load and use it without locks; applying a map builds a new
 * view and publishes it with a release store.  Superseded views are kept
 * (chained) until the engine closes, so a reader holding an old one is
 * never left with freed memory: a few hundred bytes per OSD per epoch,
 * and epochs change on admin actions and failures, not per request. */
#ifndef PANDO_VIEW_H
#define PANDO_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster_map.h"

struct pando_mds;
struct pando_placement_view;

/* The placement of one pool: its OSDs take components, the others are in
 * it with none. */
struct pando_view_pool {
	char name[CLUSTER_MAP_POOL_MAX];
	struct pando_placement_view *placement; /* NULL: none of its OSDs takes */
};

struct pando_view {
	/* Every OSD known, sorted by id: the map last applied, with the OSDs
	 * earlier maps listed and it dropped marked removed; epoch 0 is
	 * cluster.conf's seed. */
	struct cluster_map map;
	struct pando_placement_view *placement; /* NULL: no OSD takes new components */
	struct pando_view_pool *pools;          /* each pool an OSD names, by name */
	size_t npools;
	char source[16]; /* "cluster.conf", "etcd", "cache" */
	struct pando_view *older;
};

/* The first view, from cluster.conf's seed of the map. */
int pando_view_seed(struct pando_mds *mds);
/* Applies map m (its epoch above the current one; else -EALREADY): new
 * OSDs get connections, placement follows the OSDs that take new
 * components, layouts naming an OSD that went out are recalled, and what
 * changed is logged. */
int pando_view_apply(struct pando_mds *mds, const struct cluster_map *m, const char *source);
const struct pando_view *pando_view_get(struct pando_mds *mds);
/* The placement of a file in pool ("" or NULL: any OSD); NULL when no
 * OSD of the pool takes new components, or none is in it. */
const struct pando_placement_view *pando_view_placement(const struct pando_view *v,
							const char *pool);
/* The OSD's addresses and state, or NULL when the view does not know it. */
const struct cluster_map_osd *pando_view_osd(const struct pando_view *v, uint32_t id);
/* True when the OSD may take new components. */
bool pando_view_takes(const struct pando_view *v, uint32_t id);
/* Every view of the engine, at its close. */
void pando_views_free(struct pando_mds *mds);

#endif
