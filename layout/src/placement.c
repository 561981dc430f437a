/* A new file's map (README.md, "Placement"):
 *   1. the shape: scheme, width (Table 1 when automatic), number of groups;
 *   2. how many of the file's components each failure domain holds: mean
 *      proportional to the domain's weight, at most one per group;
 *   3. which OSDs of each domain: probability proportional to weight;
 *   4. dealing: the chosen OSDs, domain by domain in a random order, go
 *      round the groups one at a time, so no group gets two of a domain;
 *   5. spares among the OSDs left out, again by weight. */
#include "pando/placement.h"

#include <errno.h>
#include <stdlib.h>

#include "placement_view.h"
#include "rng.h"
#include "sampling.h"

/* Scratch for one placement; every array has one entry per OSD. */
struct work {
	uint64_t *weight;
	uint64_t *share;
	uint32_t *cap;
	uint32_t *order;
	uint32_t *count;
	uint32_t *domain_count;
	uint32_t *picked; /* OSD indices in dealing order */
	uint8_t *open;
	uint8_t *used; /* per OSD: in the file */
};

static void work_free(struct work *w)
{
	free(w->weight);
}

static int work_alloc(struct work *w, size_t n)
{
	size_t words = n ? n : 1;
	uint8_t *block = malloc(words * (2 * sizeof(uint64_t) + 5 * sizeof(uint32_t) + 2));

	if (!block)
		return -ENOMEM;
	w->weight = (uint64_t *)block;
	w->share = w->weight + words;
	w->cap = (uint32_t *)(w->share + words);
	w->order = w->cap + words;
	w->count = w->order + words;
	w->domain_count = w->count + words;
	w->picked = w->domain_count + words;
	w->open = (uint8_t *)(w->picked + words);
	w->used = w->open + words;
	return 0;
}

static void identity_shuffled(struct rng *r, uint32_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	rng_shuffle(r, order, n);
}

static uint32_t domain_eligible(const struct pando_placement_view *c, size_t d)
{
	uint32_t n = 0;

	for (uint32_t k = c->domain_first[d]; k < c->domain_first[d + 1]; k++)
		n += c->osds[c->members[k]].weight != 0;
	return n;
}

/* Components a file with `groups` groups can put in the domains: at most
 * one a group from each, and no more than a domain has OSDs. */
static uint64_t domain_room(const struct pando_placement_view *c, uint32_t groups)
{
	uint64_t room = 0;

	for (size_t d = 0; d < c->domains; d++) {
		uint32_t n = domain_eligible(c, d);

		room += n < groups ? n : groups;
	}
	return room;
}

/* The shape's width, how many groups fit, and the spares the map keeps:
 * the cluster's, or fewer when a fixed width leaves no room for them (a
 * storage policy may ask for a file as wide as the cluster). */
static int shape_width(const struct pando_placement_view *c, struct pando_map_shape *s,
		       uint32_t *fit, uint32_t *spares_out)
{
	uint32_t spares = c->spares, eligible = (uint32_t)c->eligible;
	uint32_t domains = (uint32_t)domain_room(c, 1), width;
	int rc;

	if (s->data == 0 && s->raid != PANDO_RAID1) {
		uint32_t min = s->parity + 1u;
		uint32_t max = domains < PANDO_MAP_MAX_WIDTH ? domains : PANDO_MAP_MAX_WIDTH;

		rc = pando_group_width_auto(eligible, spares, min, max, &width, fit);
		if (rc)
			return rc;
		s->data = (uint8_t)(width - s->parity);
		*spares_out = spares;
		return 0;
	}
	if (s->data == 0)
		s->data = 1;
	width = pando_shape_width(s);
	if (width == 0 || width > domains || eligible < width)
		return width == 0 ? -EINVAL : -ENOSPC;
	if (eligible < width + spares)
		spares = eligible - width;
	*fit = (eligible - spares) / width;
	*spares_out = spares;
	return 0;
}

static int plan_shape(const struct pando_placement_view *c, const struct pando_layout_request *req,
		      struct pando_map_shape *s, uint32_t *groups, uint32_t *spares)
{
	uint64_t visit = req->visit_bytes ? req->visit_bytes : PANDO_VISIT_BYTES_DEFAULT;
	uint64_t rows;
	uint32_t fit;
	int rc;

	*s = (struct pando_map_shape){ .raid = req->raid,
				       .copies = req->copies,
				       .data = req->data,
				       .parity = req->parity,
				       .stripe_unit = req->stripe_unit };
	if (s->raid != PANDO_RAID1 && s->copies == 0)
		s->copies = 1;
	if (s->raid == PANDO_RAID1 && s->copies < 2)
		return -EINVAL;
	rc = shape_width(c, s, &fit, spares);
	if (rc)
		return rc;
	if (s->stripe_unit == 0)
		return -EINVAL;
	rows = visit / ((uint64_t)s->data * s->stripe_unit);
	s->visit_rows = rows == 0 ? 1 : rows > UINT32_MAX ? UINT32_MAX : (uint32_t)rows;
	rc = pando_shape_validate(s);
	if (rc)
		return rc;
	*groups = req->max_groups ? req->max_groups : s->raid == PANDO_RAID1 ? 1 : fit;
	if (*groups > fit)
		*groups = fit;
	if (*groups > PANDO_MAP_MAX_GROUPS)
		*groups = PANDO_MAP_MAX_GROUPS;
	while (*groups && domain_room(c, *groups) < (uint64_t)*groups * pando_shape_width(s))
		(*groups)--;
	return *groups ? 0 : -ENOSPC;
}

/* Step 2: how many components each domain holds. */
static int pick_domain_counts(const struct pando_placement_view *c, struct work *w, struct rng *r,
			      uint32_t total, uint32_t groups)
{
	int rc;

	for (size_t d = 0; d < c->domains; d++) {
		uint32_t n = domain_eligible(c, d);

		w->weight[d] = 0;
		for (uint32_t k = c->domain_first[d]; k < c->domain_first[d + 1]; k++)
			w->weight[d] += c->osds[c->members[k]].weight;
		w->cap[d] = n < groups ? n : groups;
	}
	rc = shares_proportional(w->weight, w->cap, c->domains, total, w->share, w->open);
	if (rc)
		return rc;
	identity_shuffled(r, w->order, c->domains);
	shares_round(w->share, w->order, c->domains, r, w->domain_count);
	return 0;
}

/* Step 3: `want` OSDs of domain d, into w->used. */
static int pick_in_domain(const struct pando_placement_view *c, struct work *w, struct rng *r,
			  size_t d, uint32_t want)
{
	uint32_t first = c->domain_first[d], n = c->domain_first[d + 1] - first;
	int rc;

	for (uint32_t k = 0; k < n; k++) {
		w->weight[k] = c->osds[c->members[first + k]].weight;
		w->cap[k] = 1;
	}
	rc = shares_proportional(w->weight, w->cap, n, want, w->share, w->open);
	if (rc)
		return rc;
	identity_shuffled(r, w->order, n);
	shares_round(w->share, w->order, n, r, w->count);
	for (uint32_t k = 0; k < n; k++)
		w->used[c->members[first + k]] = (uint8_t)w->count[k];
	return 0;
}

/* Step 4: the chosen OSDs in dealing order: domains shuffled, and each
 * domain's OSDs shuffled. */
static size_t deal_order(const struct pando_placement_view *c, struct work *w, struct rng *r)
{
	size_t n = 0;

	identity_shuffled(r, w->order, c->domains);
	for (size_t i = 0; i < c->domains; i++) {
		uint32_t d = w->order[i], start = (uint32_t)n;

		for (uint32_t k = c->domain_first[d]; k < c->domain_first[d + 1]; k++)
			if (w->used[c->members[k]])
				w->picked[n++] = c->members[k];
		rng_shuffle(r, w->picked + start, n - start);
	}
	return n;
}

static void fill_groups(const struct pando_placement_view *c, struct work *w, struct rng *r,
			struct pando_storage_map *map, uint64_t first_object)
{
	uint32_t width = pando_map_width(map), groups = map->groups;

	for (uint32_t g = 0; g < groups; g++) {
		for (uint32_t k = 0; k < width; k++)
			w->order[k] = w->picked[k * groups + g];
		rng_shuffle(r, w->order, width);
		for (uint32_t k = 0; k < width; k++) {
			struct pando_component *comp = pando_map_component(map, g, k);

			comp->osd_id = c->osds[w->order[k]].id;
			comp->object_id = first_object + g * width + k;
		}
	}
}

/* Step 5: spares among the eligible OSDs the file does not use. */
static int pick_spares(const struct pando_placement_view *c, struct work *w, struct rng *r,
		       struct pando_storage_map *map)
{
	uint32_t n = 0;
	int rc;

	for (size_t i = 0; i < c->count; i++) {
		w->weight[i] = w->used[i] ? 0 : c->osds[i].weight;
		w->cap[i] = 1;
	}
	rc = shares_proportional(w->weight, w->cap, c->count, map->spare_count, w->share, w->open);
	if (rc)
		return rc;
	identity_shuffled(r, w->order, c->count);
	shares_round(w->share, w->order, c->count, r, w->count);
	for (size_t k = 0; k < c->count; k++)
		if (w->count[w->order[k]])
			map->spares[n++] = c->osds[w->order[k]].id;
	return 0;
}

static int place_osds(const struct pando_placement_view *c, struct work *w, struct rng *r,
		      struct pando_storage_map *map, uint64_t first_object)
{
	uint32_t total = map->groups * pando_map_width(map);
	int rc = pick_domain_counts(c, w, r, total, map->groups);

	if (rc)
		return rc;
	for (size_t i = 0; i < c->count; i++)
		w->used[i] = 0;
	for (size_t d = 0; d < c->domains && !rc; d++)
		if (w->domain_count[d])
			rc = pick_in_domain(c, w, r, d, w->domain_count[d]);
	if (rc)
		return rc;
	if (deal_order(c, w, r) != total)
		return -EIO;
	fill_groups(c, w, r, map, first_object);
	return pick_spares(c, w, r, map);
}

int pando_place(const struct pando_placement_view *c, const struct pando_layout_request *req,
		struct pando_storage_map **out)
{
	struct pando_map_shape shape;
	struct pando_storage_map *map;
	struct work w;
	struct rng r;
	uint32_t groups, spares;
	uint64_t count;
	int rc;

	*out = NULL;
	rc = plan_shape(c, req, &shape, &groups, &spares);
	if (rc)
		return rc;
	count = (uint64_t)groups * pando_shape_width(&shape);
	if (req->first_object_id == 0 || req->partition_id == 0 ||
	    req->first_object_id + count - 1 < req->first_object_id)
		return -EINVAL;
	rc = pando_map_new(&shape, groups, spares, &map);
	if (rc)
		return rc;
	rc = work_alloc(&w, c->count);
	if (rc) {
		pando_map_free(map);
		return rc;
	}
	map->seed = req->seed;
	map->partition_id = req->partition_id;
	rng_init(&r, req->seed);
	rc = place_osds(c, &w, &r, map, req->first_object_id);
	work_free(&w);
	if (rc) {
		pando_map_free(map);
		return rc;
	}
	*out = map;
	return 0;
}
