/* The cluster as the engine sees it now: every OSD it knows (addresses),
 * each one's state in the last applied cluster map, and the placement
 * view new files are placed with.
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

#include "cluster_desc.h"
#include "cluster_map.h"

struct pando_mds;
struct pando_placement_view;

struct pando_view_osd {
	bool listed; /* in the map (the seed lists every OSD of cluster.conf) */
	bool up;
	bool in;
	uint64_t weight; /* bytes; 0: takes no new components */
	char domain[CLUSTER_MAP_DOMAIN_MAX];
};

struct pando_view {
	uint64_t epoch;                         /* 0: cluster.conf only, no map applied */
	struct cluster_desc desc;               /* every OSD known, sorted by id; key unset */
	struct pando_view_osd *state;           /* parallel to desc.osds */
	struct pando_placement_view *placement; /* NULL: no OSD takes new components */
	char source[16];                        /* "cluster.conf", "etcd", "cache" */
	struct pando_view *older;
};

/* The first view, from the engine's cluster description. */
int pando_view_seed(struct pando_mds *mds);
/* Applies map m (its epoch above the current one; else -EALREADY): new
 * OSDs get connections, placement follows the OSDs that take new
 * components, layouts naming an OSD that went out are recalled, and what
 * changed is logged. */
int pando_view_apply(struct pando_mds *mds, const struct cluster_map *m, const char *source);
const struct pando_view *pando_view_get(struct pando_mds *mds);
/* The OSD's addresses and state, or NULL when the view does not know it. */
const struct cluster_osd *pando_view_osd(const struct pando_view *v, uint32_t id,
					 const struct pando_view_osd **state);
/* True when the OSD may take new components. */
bool pando_view_takes(const struct pando_view *v, uint32_t id);
/* Every view of the engine, at its close. */
void pando_views_free(struct pando_mds *mds);

#endif
