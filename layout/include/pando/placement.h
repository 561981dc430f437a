/* Placement: a new, pseudo-random storage map for every file, and a new
 * home for a lost component (README.md, "Placement").
 *
 *   - deterministic: the same placement view, request and seed give the same
 *     map on every manager (integer arithmetic only, our own generator);
 *   - each OSD's chance of holding a component of a file is proportional to
 *     its weight (capacity, nudged by passive balancing), capped at one
 *     component a file; groups of one file use distinct OSDs;
 *   - no two components of a group on one OSD, or in one failure domain
 *     when OSDs declare domains;
 *   - passive balancing: an OSD emptier than the average gets a weight up
 *     to bias_limit above its capacity's, a fuller one down to bias_limit
 *     below it, never more (Panasas 3.1: large biases make hot spots);
 *   - automatic group width as Panasas Table 1: 8 to 11 wide, a whole
 *     number of groups, at least `spares` OSDs left out of every file.
 *
 * Every function that can fail returns 0 or a negative errno. */
#ifndef PANDO_PLACEMENT_H
#define PANDO_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_map.h"
#include "pando/storage_map.h"

#define PANDO_BIAS_DEFAULT_PPM 50000u /* passive balancing: at most 5% off capacity */
#define PANDO_MAX_OSDS 65536u
#define PANDO_AUTO_MIN_WIDTH 8u /* Panasas Table 1's range of widths */
#define PANDO_AUTO_MAX_WIDTH 11u
#define PANDO_VISIT_BYTES_DEFAULT (1ull << 30)

struct pando_placement_policy {
	/* OSDs every file leaves free for rebuild; 0 only for clusters too
	 * small to keep one (as many OSDs as a file's width). */
	uint32_t spares;
	uint32_t bias_limit_ppm; /* passive balancing bound, parts per million */
	/* NULL or "": every OSD; otherwise only the OSDs the map puts in
	 * this pool take components (cluster_map_osd_in_pool). */
	const char *pool;
};

/* A prepared, read-only view of the OSDs placement may use, derived from
 * the cluster map: weights and domains worked out once.  Safe to share
 * between threads. */
struct pando_placement_view;

/* The view of map's OSDs: an OSD's capacity is its weight when it takes
 * new components (cluster_map_osd_takes) and is in the policy's pool,
 * else 0 (it stays in the view, so maps naming it still decode; passive
 * balancing weighs the pool's OSDs against the pool's mean); OSDs with the same non-empty domain
 * string share a failure domain, "" is the OSD alone.  used is NULL or
 * parallel to map->osds: the bytes each OSD holds, for passive
 * balancing.  -EINVAL: map->osds not sorted by distinct id, more than
 * PANDO_MAX_OSDS, a bias limit of 100% or more, a pool that is not a
 * pool name. */
int pando_placement_view_new(const struct cluster_map *map, const uint64_t *used,
			     const struct pando_placement_policy *policy,
			     struct pando_placement_view **out);
void pando_placement_view_free(struct pando_placement_view *view);

/* An OSD's placement weight relative to its capacity share, in ppm
 * (1000000 = no bias); -ENOENT when the view does not know it. */
int pando_placement_view_bias_ppm(const struct pando_placement_view *view, uint32_t osd_id,
				  uint32_t *ppm);

/* Panasas Table 1: the width in [8, 11] (and within [min_width,
 * max_width]) whose whole number of groups leaves the fewest of `osds`
 * unused, at least `spares`; ties go to the wider group.  Below that
 * range (fewer than 8 + spares OSDs, or max_width under 8) the widest
 * allowed group, as many as fit.  -ENOSPC when even min_width does not
 * fit. */
int pando_group_width_auto(uint32_t osds, uint32_t spares, uint32_t min_width, uint32_t max_width,
			   uint32_t *width, uint32_t *groups);

struct pando_layout_request {
	uint8_t raid;   /* enum pando_raid */
	uint8_t copies; /* RAID-1: 2 or 3 */
	uint8_t data;   /* data columns (RS: k); 0: automatic width (RAID-0, RS) */
	uint8_t parity; /* RS: m */
	uint32_t stripe_unit;
	uint32_t max_groups;  /* 0: as many as fit (RAID-1: 1); otherwise at most this many */
	uint64_t visit_bytes; /* data bytes a group takes before the next; 0: 1 GiB */
	uint64_t seed;        /* e.g. the file id: the map is a function of it */
	uint64_t partition_id;
	uint64_t first_object_id; /* component i (group-major) gets first + i */
};

/* -ENOSPC: not enough OSDs (or domains) for one group.  A fixed width
 * (data given) that leaves fewer OSDs than the view's spares out of the
 * file gets a map with the spares there are, down to none. */
int pando_place(const struct pando_placement_view *view, const struct pando_layout_request *req,
		struct pando_storage_map **out);

/* A new OSD for component c of group g, under the same constraints: not in
 * the group, not in a domain the group's other components use, taking
 * weight.  Prefers the map's spares, then OSDs the file does not use, then
 * any; within a tier, weighted by the seed.  -ENOSPC when none qualifies. */
int pando_place_replacement(const struct pando_placement_view *view,
			    const struct pando_storage_map *map, uint32_t g, uint32_t c,
			    uint64_t seed, uint32_t *osd_id);

#endif
