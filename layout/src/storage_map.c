#include "pando/storage_map.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pando/ec.h"

uint32_t pando_shape_width(const struct pando_map_shape *s)
{
	switch (s->raid) {
	case PANDO_RAID0:
		return s->data;
	case PANDO_RAID1:
		return (uint32_t)s->copies * s->data;
	case PANDO_RS:
		return (uint32_t)s->data + s->parity;
	default:
		return 0;
	}
}

static bool redundancy_valid(const struct pando_map_shape *s)
{
	switch (s->raid) {
	case PANDO_RAID0:
		return s->copies == 1 && s->parity == 0;
	case PANDO_RAID1:
		return (s->copies == 2 || s->copies == 3) && s->parity == 0;
	case PANDO_RS:
		/* every RS map must be one the codec can run */
		return s->copies == 1 && s->parity >= 1 && s->parity <= PANDO_EC_MAX_M &&
		       s->data <= PANDO_EC_MAX_K;
	default:
		return false;
	}
}

int pando_shape_validate(const struct pando_map_shape *s)
{
	uint32_t width = pando_shape_width(s);

	if (!redundancy_valid(s) || s->data == 0 || width > PANDO_MAP_MAX_WIDTH)
		return -EINVAL;
	if (s->stripe_unit < PANDO_MAP_MIN_STRIPE_UNIT ||
	    s->stripe_unit > PANDO_MAP_MAX_STRIPE_UNIT)
		return -EINVAL;
	if (s->stripe_unit % PANDO_MAP_MIN_STRIPE_UNIT)
		return -EINVAL;
	if (s->visit_rows == 0)
		return -EINVAL;
	return 0;
}

uint64_t pando_shape_visit_bytes(const struct pando_map_shape *s)
{
	return (uint64_t)s->visit_rows * s->data * s->stripe_unit;
}

int pando_map_new(const struct pando_map_shape *shape, uint32_t groups, uint32_t spare_count,
		  struct pando_storage_map **out)
{
	struct pando_storage_map *map;
	size_t ncomp, size;
	int rc;

	*out = NULL;
	rc = pando_shape_validate(shape);
	if (rc)
		return rc;
	if (groups == 0 || groups > PANDO_MAP_MAX_GROUPS || spare_count > PANDO_MAP_MAX_SPARES)
		return -EINVAL;
	ncomp = (size_t)groups * pando_shape_width(shape);
	size = sizeof(*map) + ncomp * sizeof(map->comp[0]) + spare_count * sizeof(map->spares[0]);
	map = calloc(1, size);
	if (!map)
		return -ENOMEM;
	map->shape = *shape;
	map->groups = groups;
	map->spare_count = spare_count;
	map->comp = (struct pando_component *)(map + 1);
	map->spares = (uint32_t *)(map->comp + ncomp);
	*out = map;
	return 0;
}

void pando_map_free(struct pando_storage_map *map)
{
	free(map);
}

int pando_map_copy(const struct pando_storage_map *map, struct pando_storage_map **out)
{
	size_t ncomp = (size_t)map->groups * pando_map_width(map);
	int rc = pando_map_new(&map->shape, map->groups, map->spare_count, out);

	if (rc)
		return rc;
	(*out)->seed = map->seed;
	(*out)->partition_id = map->partition_id;
	memcpy((*out)->comp, map->comp, ncomp * sizeof(map->comp[0]));
	memcpy((*out)->spares, map->spares, map->spare_count * sizeof(map->spares[0]));
	return 0;
}

static bool group_has_osd(const struct pando_storage_map *map, uint32_t g, uint32_t osd_id,
			  uint32_t except)
{
	for (uint32_t c = 0; c < pando_map_width(map); c++)
		if (c != except && pando_map_component(map, g, c)->osd_id == osd_id)
			return true;
	return false;
}

static bool map_has_osd(const struct pando_storage_map *map, uint32_t osd_id)
{
	for (uint32_t g = 0; g < map->groups; g++)
		if (group_has_osd(map, g, osd_id, UINT32_MAX))
			return true;
	return false;
}

static int groups_validate(const struct pando_storage_map *map)
{
	uint32_t width = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *comp = pando_map_component(map, g, c);

			if (comp->object_id == 0 || group_has_osd(map, g, comp->osd_id, c))
				return -EINVAL;
		}
	}
	return 0;
}

static int spares_validate(const struct pando_storage_map *map)
{
	for (uint32_t i = 0; i < map->spare_count; i++) {
		for (uint32_t j = 0; j < i; j++)
			if (map->spares[j] == map->spares[i])
				return -EINVAL;
		if (map_has_osd(map, map->spares[i]))
			return -EINVAL;
	}
	return 0;
}

int pando_map_validate(const struct pando_storage_map *map)
{
	int rc = pando_shape_validate(&map->shape);

	if (rc)
		return rc;
	if (map->groups == 0 || map->groups > PANDO_MAP_MAX_GROUPS ||
	    map->spare_count > PANDO_MAP_MAX_SPARES || map->partition_id == 0)
		return -EINVAL;
	rc = groups_validate(map);
	if (rc)
		return rc;
	return spares_validate(map);
}

static void spare_remove(struct pando_storage_map *map, uint32_t osd_id)
{
	for (uint32_t i = 0; i < map->spare_count; i++) {
		if (map->spares[i] != osd_id)
			continue;
		memmove(&map->spares[i], &map->spares[i + 1],
			(map->spare_count - i - 1) * sizeof(map->spares[0]));
		map->spare_count--;
		return;
	}
}

static bool group_survives(const struct pando_map_shape *s, const bool *lost)
{
	uint32_t n = 0;

	if (s->raid == PANDO_RS) {
		for (uint32_t c = 0; c < (uint32_t)s->data + s->parity; c++)
			n += lost[c];
		return n <= s->parity;
	}
	for (uint32_t col = 0; col < s->data; col++) {
		bool copy = false;

		for (uint32_t cp = 0; cp < s->copies; cp++)
			copy |= !lost[cp * s->data + col];
		if (!copy)
			return false;
	}
	return true;
}

bool pando_map_survives(const struct pando_storage_map *map, const bool *lost)
{
	uint32_t w = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++)
		if (!group_survives(&map->shape, lost + (size_t)g * w))
			return false;
	return true;
}

int pando_map_replace_component(struct pando_storage_map *map, uint32_t g, uint32_t c,
				uint32_t osd_id, uint64_t object_id)
{
	if (g >= map->groups || c >= pando_map_width(map) || object_id == 0 ||
	    group_has_osd(map, g, osd_id, c))
		return -EINVAL;
	pando_map_component(map, g, c)->osd_id = osd_id;
	pando_map_component(map, g, c)->object_id = object_id;
	spare_remove(map, osd_id);
	return 0;
}
