/* A new home for one lost component: the same hard constraints as a fresh
 * placement (another OSD than the group's, another failure domain than
 * the group's other components), the file's own spares first. */
#include "pando/placement.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "placement_view.h"
#include "rng.h"

enum tier {
	TIER_SPARE,  /* one of the map's distributed spares */
	TIER_UNUSED, /* an OSD the file does not use */
	TIER_ANY,    /* an OSD another group of the file uses */
};

/* The domain index of an OSD, or a value no cluster domain has when the
 * cluster no longer knows the OSD. */
static uint64_t domain_of(const struct pando_placement_view *c, uint32_t osd_id)
{
	long i = view_find(c, osd_id);

	return i < 0 ? UINT64_MAX : c->osds[i].domain;
}

static bool in_group(const struct pando_storage_map *map, uint32_t g, uint32_t osd_id)
{
	for (uint32_t k = 0; k < pando_map_width(map); k++)
		if (pando_map_component(map, g, k)->osd_id == osd_id)
			return true;
	return false;
}

static bool in_map(const struct pando_storage_map *map, uint32_t osd_id)
{
	for (uint32_t g = 0; g < map->groups; g++)
		if (in_group(map, g, osd_id))
			return true;
	return false;
}

static bool is_spare(const struct pando_storage_map *map, uint32_t osd_id)
{
	for (uint32_t i = 0; i < map->spare_count; i++)
		if (map->spares[i] == osd_id)
			return true;
	return false;
}

static bool domain_clash(const struct pando_placement_view *c, const struct pando_storage_map *map,
			 uint32_t g, uint32_t c_lost, uint32_t domain)
{
	for (uint32_t k = 0; k < pando_map_width(map); k++)
		if (k != c_lost && domain_of(c, pando_map_component(map, g, k)->osd_id) == domain)
			return true;
	return false;
}

static enum tier tier_of(const struct pando_storage_map *map, uint32_t osd_id)
{
	if (is_spare(map, osd_id))
		return TIER_SPARE;
	return in_map(map, osd_id) ? TIER_ANY : TIER_UNUSED;
}

/* Weight of OSD index i as a candidate of `tier`, 0 when it is not one. */
static uint64_t candidate_weight(const struct pando_placement_view *c,
				 const struct pando_storage_map *map, uint32_t g, uint32_t c_lost,
				 size_t i, enum tier tier)
{
	const struct view_osd *osd = &c->osds[i];

	if (!osd->weight || in_group(map, g, osd->id) || tier_of(map, osd->id) != tier ||
	    domain_clash(c, map, g, c_lost, osd->domain))
		return 0;
	return osd->weight;
}

/* One draw with probability proportional to weight; -ENOSPC if no weight. */
static int draw(const struct pando_placement_view *c, const struct pando_storage_map *map,
		uint32_t g, uint32_t c_lost, enum tier tier, struct rng *r, uint32_t *osd_id)
{
	uint64_t total = 0, at;

	for (size_t i = 0; i < c->count; i++)
		total += candidate_weight(c, map, g, c_lost, i, tier);
	if (!total)
		return -ENOSPC;
	at = rng_below(r, total);
	for (size_t i = 0; i < c->count; i++) {
		uint64_t w = candidate_weight(c, map, g, c_lost, i, tier);

		if (at < w) {
			*osd_id = c->osds[i].id;
			return 0;
		}
		at -= w;
	}
	return -ENOSPC;
}

int pando_place_replacement(const struct pando_placement_view *c,
			    const struct pando_storage_map *map, uint32_t g, uint32_t c_lost,
			    uint64_t seed, uint32_t *osd_id)
{
	struct rng r;

	if (g >= map->groups || c_lost >= pando_map_width(map))
		return -EINVAL;
	rng_init(&r, seed);
	for (enum tier t = TIER_SPARE; t <= TIER_ANY; t++)
		if (draw(c, map, g, c_lost, t, &r, osd_id) == 0)
			return 0;
	return -ENOSPC;
}
