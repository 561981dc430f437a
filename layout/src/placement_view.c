/* The prepared placement view: OSDs sorted by id (so a map depends on the set
 * of OSDs, not on the order a caller lists them in), passive-balancing
 * weights, and failure domains numbered 0.. in order of their ids. */
#include "placement_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PPM 1000000u
#define WEIGHT_BITS 40 /* weights summed over 2^16 OSDs stay below 2^56 */

static int cmp_osd_id(const void *a, const void *b)
{
	uint32_t x = ((const struct pando_osd *)a)->id, y = ((const struct pando_osd *)b)->id;

	return x < y ? -1 : x > y;
}

/* A domain's sort key: declared domains by id, then each undeclared OSD
 * as a domain of its own. */
static uint64_t domain_key(const struct pando_osd *osd)
{
	if (osd->domain == PANDO_DOMAIN_NONE)
		return 1ull << 32 | osd->id;
	return osd->domain;
}

static uint32_t util_ppm(uint64_t used, uint64_t capacity)
{
	unsigned __int128 u = (unsigned __int128)used * PPM / capacity;

	return u > 2 * PPM ? 2 * PPM : (uint32_t)u;
}

/* 1 + (mean utilisation - this OSD's), held within the bias limit. */
static void set_bias(struct pando_placement_view *c, const struct pando_osd *osds, uint32_t limit)
{
	unsigned __int128 used = 0, capacity = 0;
	uint32_t mean;

	for (size_t i = 0; i < c->count; i++) {
		used += osds[i].capacity ? osds[i].used : 0;
		capacity += osds[i].capacity;
	}
	mean = capacity ? (uint32_t)(used * PPM / capacity) : 0;
	for (size_t i = 0; i < c->count; i++) {
		int64_t diff = 0;

		if (osds[i].capacity)
			diff = (int64_t)mean - util_ppm(osds[i].used, osds[i].capacity);
		if (diff > (int64_t)limit)
			diff = limit;
		if (diff < -(int64_t)limit)
			diff = -(int64_t)limit;
		c->osds[i].bias_ppm = (uint32_t)(PPM + diff);
	}
}

/* capacity x bias, shifted right alike for all so the largest is below
 * 2^WEIGHT_BITS; an OSD with capacity never rounds down to nothing. */
static void set_weights(struct pando_placement_view *c, const struct pando_osd *osds)
{
	unsigned __int128 max = 0;
	unsigned shift = 0;

	for (size_t i = 0; i < c->count; i++) {
		unsigned __int128 w = (unsigned __int128)osds[i].capacity * c->osds[i].bias_ppm;

		if (w > max)
			max = w;
	}
	while (max >> shift >= (unsigned __int128)1 << WEIGHT_BITS)
		shift++;
	c->eligible = 0;
	for (size_t i = 0; i < c->count; i++) {
		unsigned __int128 w = (unsigned __int128)osds[i].capacity * c->osds[i].bias_ppm;

		uint64_t scaled = (uint64_t)(w >> shift);

		c->osds[i].weight = osds[i].capacity ? (scaled ? scaled : 1) : 0;
		c->eligible += c->osds[i].weight != 0;
	}
}

static int cmp_key_index(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

static int set_domains(struct pando_placement_view *c, const struct pando_osd *osds)
{
	uint64_t(*keys)[2] = calloc(c->count ? c->count : 1, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < c->count; i++) {
		keys[i][0] = domain_key(&osds[i]);
		keys[i][1] = i;
	}
	qsort(keys, c->count, sizeof(*keys), cmp_key_index);
	c->domains = 0;
	for (size_t i = 0; i < c->count; i++) {
		if (i == 0 || keys[i][0] != keys[i - 1][0])
			c->domain_first[c->domains++] = (uint32_t)i;
		c->osds[keys[i][1]].domain = (uint32_t)c->domains - 1;
		c->members[i] = (uint32_t)keys[i][1];
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

static int sorted_copy(const struct pando_osd *osds, size_t count, struct pando_osd **out)
{
	struct pando_osd *sorted = malloc((count ? count : 1) * sizeof(*sorted));

	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, osds, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), cmp_osd_id);
	for (size_t i = 1; i < count; i++) {
		if (sorted[i].id == sorted[i - 1].id) {
			free(sorted);
			return -EINVAL;
		}
	}
	*out = sorted;
	return 0;
}

int pando_placement_view_new(const struct pando_osd *osds, size_t count,
			     const struct pando_placement_policy *policy,
			     struct pando_placement_view **out)
{
	struct pando_osd *sorted;
	struct pando_placement_view *c;
	int rc;

	*out = NULL;
	if (count > PANDO_MAX_OSDS || policy->bias_limit_ppm >= PPM)
		return -EINVAL;
	rc = sorted_copy(osds, count, &sorted);
	if (rc)
		return rc;
	rc = view_alloc(count, &c);
	if (rc) {
		free(sorted);
		return rc;
	}
	c->spares = policy->spares;
	for (size_t i = 0; i < count; i++)
		c->osds[i].id = sorted[i].id;
	set_bias(c, sorted, policy->bias_limit_ppm);
	set_weights(c, sorted);
	rc = set_domains(c, sorted);
	free(sorted);
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
