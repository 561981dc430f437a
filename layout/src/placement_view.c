/* The prepared placement view, derived from the cluster map: OSDs in the
 * map's order, by id (so a file's map depends on the set of OSDs, not on
 * the order they were listed in), passive-balancing weights, and failure
 * domains numbered 0.. in an order that again depends only on the set. */
#include "placement_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PPM 1000000u
#define WEIGHT_BITS 40 /* weights summed over 2^16 OSDs stay below 2^56 */

/* What placement may put on an OSD: an OSD that takes no new components
 * (down, out, removed, without weight or outside the view's pool) stays
 * in the view with none, so the maps that name it still find it. */
static uint64_t capacity_of(const struct cluster_map_osd *o, const char *pool)
{
	return cluster_map_osd_takes(o) && cluster_map_osd_in_pool(o, pool) ? o->weight : 0;
}

static uint32_t util_ppm(uint64_t used, uint64_t capacity)
{
	unsigned __int128 u = (unsigned __int128)used * PPM / capacity;

	return u > 2 * PPM ? 2 * PPM : (uint32_t)u;
}

/* 1 + (mean utilisation - this OSD's), held within the bias limit.
 * Without used bytes every OSD is as full as the mean: no bias. */
static void set_bias(struct pando_placement_view *c, const struct cluster_map *map,
		     const uint64_t *used, const struct pando_placement_policy *policy)
{
	unsigned __int128 total = 0, capacity = 0;
	uint32_t mean, limit = policy->bias_limit_ppm;

	for (size_t i = 0; i < c->count; i++) {
		uint64_t cap = capacity_of(&map->osds[i], policy->pool);

		total += cap && used ? used[i] : 0;
		capacity += cap;
	}
	mean = capacity ? (uint32_t)(total * PPM / capacity) : 0;
	for (size_t i = 0; i < c->count; i++) {
		uint64_t cap = capacity_of(&map->osds[i], policy->pool);
		int64_t diff = 0;

		if (cap)
			diff = (int64_t)mean - util_ppm(used ? used[i] : 0, cap);
		if (diff > (int64_t)limit)
			diff = limit;
		if (diff < -(int64_t)limit)
			diff = -(int64_t)limit;
		c->osds[i].bias_ppm = (uint32_t)(PPM + diff);
	}
}

/* capacity x bias, shifted right alike for all so the largest is below
 * 2^WEIGHT_BITS; an OSD with capacity never rounds down to nothing. */
static void set_weights(struct pando_placement_view *c, const struct cluster_map *map,
			const char *pool)
{
	unsigned __int128 max = 0;
	unsigned shift = 0;

	for (size_t i = 0; i < c->count; i++) {
		unsigned __int128 w =
			(unsigned __int128)capacity_of(&map->osds[i], pool) * c->osds[i].bias_ppm;

		if (w > max)
			max = w;
	}
	while (max >> shift >= (unsigned __int128)1 << WEIGHT_BITS)
		shift++;
	c->eligible = 0;
	for (size_t i = 0; i < c->count; i++) {
		uint64_t cap = capacity_of(&map->osds[i], pool);
		unsigned __int128 w = (unsigned __int128)cap * c->osds[i].bias_ppm;
		uint64_t scaled = (uint64_t)(w >> shift);

		c->osds[i].weight = cap ? (scaled ? scaled : 1) : 0;
		c->eligible += c->osds[i].weight != 0;
	}
}

/* An OSD's place in the domain order: declared domains by name, members
 * by index (= by id); then each undeclared OSD, a domain of its own, by
 * id.  Sorting by name first gathers a domain whose ids are scattered, and
 * bounds the work at n log n for PANDO_MAX_OSDS. */
struct domain_key {
	const char *domain; /* NULL: undeclared */
	uint32_t id;
	uint32_t idx;
};

static int cmp_domain_key(const void *a, const void *b)
{
	const struct domain_key *x = a, *y = b;
	int d;

	if (!x->domain != !y->domain)
		return x->domain ? -1 : 1;
	if (x->domain) {
		d = strncmp(x->domain, y->domain, CLUSTER_MAP_DOMAIN_MAX);
		if (d)
			return d;
		return (x->idx > y->idx) - (x->idx < y->idx);
	}
	return (x->id > y->id) - (x->id < y->id);
}

/* Whether two keys, next to each other once sorted, share a domain. */
static int same_domain(const struct domain_key *prev, const struct domain_key *k)
{
	return prev->domain && k->domain &&
	       !strncmp(prev->domain, k->domain, CLUSTER_MAP_DOMAIN_MAX);
}

static int set_domains(struct pando_placement_view *c, const struct cluster_map *map)
{
	struct domain_key *keys = calloc(c->count ? c->count : 1, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < c->count; i++) {
		const struct cluster_map_osd *o = &map->osds[i];

		keys[i].domain = o->domain[0] ? o->domain : NULL;
		keys[i].id = o->id;
		keys[i].idx = (uint32_t)i;
	}
	qsort(keys, c->count, sizeof(*keys), cmp_domain_key);
	c->domains = 0;
	for (size_t i = 0; i < c->count; i++) {
		if (i == 0 || !same_domain(&keys[i - 1], &keys[i]))
			c->domain_first[c->domains++] = (uint32_t)i;
		c->osds[keys[i].idx].domain = (uint32_t)c->domains - 1;
		c->members[i] = keys[i].idx;
	}
	c->domain_first[c->domains] = (uint32_t)c->count;
	free(keys);
	return 0;
}

static int view_alloc(size_t count, struct pando_placement_view **out)
{
	struct pando_placement_view *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->count = count;
	c->osds = calloc(count + 1, sizeof(*c->osds));
	c->domain_first = calloc(count + 1, sizeof(*c->domain_first));
	c->members = calloc(count + 1, sizeof(*c->members));
	if (!c->osds || !c->domain_first || !c->members) {
		pando_placement_view_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

/* The map keeps its OSDs sorted by distinct id (cluster_map_sort).  One
 * that does not is refused, not sorted here: its holder has a broken map,
 * and used[] is parallel to the order it came in. */
static int map_sorted(const struct cluster_map *map)
{
	for (size_t i = 1; i < map->nosds; i++)
		if (map->osds[i].id <= map->osds[i - 1].id)
			return 0;
	return 1;
}

int pando_placement_view_new(const struct cluster_map *map, const uint64_t *used,
			     const struct pando_placement_policy *policy,
			     struct pando_placement_view **out)
{
	struct pando_placement_view *c;
	int rc;

	*out = NULL;
	if (map->nosds > PANDO_MAX_OSDS || policy->bias_limit_ppm >= PPM || !map_sorted(map) ||
	    (policy->pool && policy->pool[0] && !cluster_map_pool_name_ok(policy->pool)))
		return -EINVAL;
	rc = view_alloc(map->nosds, &c);
	if (rc)
		return rc;
	c->spares = policy->spares;
	for (size_t i = 0; i < c->count; i++)
		c->osds[i].id = map->osds[i].id;
	set_bias(c, map, used, policy);
	set_weights(c, map, policy->pool);
	rc = set_domains(c, map);
	if (rc) {
		pando_placement_view_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void pando_placement_view_free(struct pando_placement_view *c)
{
	if (!c)
		return;
	free(c->osds);
	free(c->domain_first);
	free(c->members);
	free(c);
}

long view_find(const struct pando_placement_view *c, uint32_t osd_id)
{
	size_t lo = 0, hi = c->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->osds[mid].id == osd_id)
			return (long)mid;
		if (c->osds[mid].id < osd_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int pando_placement_view_bias_ppm(const struct pando_placement_view *c, uint32_t osd_id,
				  uint32_t *ppm)
{
	long i = view_find(c, osd_id);

	if (i < 0)
		return -ENOENT;
	*ppm = c->osds[i].bias_ppm;
	return 0;
}
