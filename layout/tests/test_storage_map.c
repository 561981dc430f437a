/* Storage map shapes, validation and component replacement. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "pando/storage_map.h"

static struct pando_map_shape shape(uint8_t raid, uint8_t copies, uint8_t data, uint8_t parity)
{
	return (struct pando_map_shape){ .raid = raid,
					 .copies = copies,
					 .data = data,
					 .parity = parity,
					 .stripe_unit = 65536,
					 .visit_rows = 2048 };
}

static void test_shapes(void)
{
	struct pando_map_shape s = shape(PANDO_RS, 1, 8, 2);

	CHECK_EQ(pando_shape_width(&s), 10);
	CHECK_EQ(pando_shape_validate(&s), 0);
	CHECK_EQ(pando_shape_visit_bytes(&s), 2048ull * 8 * 65536);
	s = shape(PANDO_RAID1, 3, 4, 0);
	CHECK_EQ(pando_shape_width(&s), 12);
	CHECK_EQ(pando_shape_validate(&s), 0);
	s = shape(PANDO_RAID0, 1, 9, 0);
	CHECK_EQ(pando_shape_width(&s), 9);
	CHECK_EQ(pando_shape_validate(&s), 0);

	s = shape(PANDO_RAID1, 4, 1, 0); /* 2 or 3 mirrors only */
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(PANDO_RAID1, 1, 1, 0);
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(PANDO_RS, 1, 8, 0); /* RS needs parity */
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(PANDO_RAID0, 1, 8, 1); /* RAID-0 has none */
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(PANDO_RAID0, 1, 0, 0);
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(PANDO_RS, 1, 60, 5); /* wider than a group may be */
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(3, 1, 4, 0);
	CHECK_EQ(pando_shape_width(&s), 0);
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s = shape(PANDO_RAID0, 1, 4, 0);
	s.stripe_unit = 1000; /* not a multiple of 512 */
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s.stripe_unit = 0;
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
	s.stripe_unit = 4096;
	s.visit_rows = 0;
	CHECK_EQ(pando_shape_validate(&s), -EINVAL);
}

static struct pando_storage_map *small_map(void)
{
	struct pando_map_shape s = shape(PANDO_RS, 1, 2, 1);
	struct pando_storage_map *map;

	if (pando_map_new(&s, 2, 2, &map))
		return NULL;
	map->partition_id = 5;
	for (uint32_t i = 0; i < 6; i++) {
		map->comp[i].osd_id = 10 + i;
		map->comp[i].object_id = 100 + i;
	}
	map->spares[0] = 20;
	map->spares[1] = 21;
	return map;
}

static void test_validate(void)
{
	struct pando_storage_map *map = small_map(), *copy;
	struct pando_map_shape s = shape(PANDO_RAID0, 1, 1, 0);

	CHECK(map != NULL);
	CHECK_EQ(pando_map_validate(map), 0);
	CHECK(pando_map_component(map, 1, 2) == &map->comp[5]);
	pando_map_component(map, 0, 1)->osd_id = 10; /* twice in group 0 */
	CHECK_EQ(pando_map_validate(map), -EINVAL);
	pando_map_component(map, 0, 1)->osd_id = 13; /* in group 1 too: allowed */
	CHECK_EQ(pando_map_validate(map), 0);
	pando_map_component(map, 0, 1)->osd_id = 11;
	map->comp[3].object_id = 0; /* reserved by the OSD */
	CHECK_EQ(pando_map_validate(map), -EINVAL);
	map->comp[3].object_id = 103;
	map->spares[1] = 12; /* a spare the file uses */
	CHECK_EQ(pando_map_validate(map), -EINVAL);
	map->spares[1] = 20; /* a spare twice */
	CHECK_EQ(pando_map_validate(map), -EINVAL);
	map->spares[1] = 21;
	map->partition_id = 0;
	CHECK_EQ(pando_map_validate(map), -EINVAL);
	map->partition_id = 5;

	CHECK_EQ(pando_map_copy(map, &copy), 0);
	CHECK_EQ(pando_map_validate(copy), 0);
	CHECK_MEM(copy->comp, map->comp, 6 * sizeof(map->comp[0]));
	CHECK_MEM(copy->spares, map->spares, 2 * sizeof(map->spares[0]));
	pando_map_free(copy);
	pando_map_free(map);

	CHECK_EQ(pando_map_new(&s, 0, 1, &map), -EINVAL);
	CHECK(map == NULL);
	CHECK_EQ(pando_map_new(&s, PANDO_MAP_MAX_GROUPS + 1, 1, &map), -EINVAL);
	CHECK_EQ(pando_map_new(&s, 1, PANDO_MAP_MAX_SPARES + 1, &map), -EINVAL);
}

static void test_replace(void)
{
	struct pando_storage_map *map = small_map();

	/* spare 21 takes component 1 of group 1 and leaves the spare list */
	CHECK_EQ(pando_map_replace_component(map, 1, 1, 21, 900), 0);
	CHECK_EQ(pando_map_component(map, 1, 1)->osd_id, 21);
	CHECK_EQ(pando_map_component(map, 1, 1)->object_id, 900);
	CHECK_EQ(map->spare_count, 1);
	CHECK_EQ(map->spares[0], 20);
	CHECK_EQ(pando_map_validate(map), 0);
	/* an OSD the group already has, object 0, indices out of range */
	CHECK_EQ(pando_map_replace_component(map, 1, 0, 21, 901), -EINVAL);
	CHECK_EQ(pando_map_replace_component(map, 1, 0, 30, 0), -EINVAL);
	CHECK_EQ(pando_map_replace_component(map, 2, 0, 30, 901), -EINVAL);
	CHECK_EQ(pando_map_replace_component(map, 0, 3, 30, 901), -EINVAL);
	/* an OSD of another group, not a spare: the spare list stays */
	CHECK_EQ(pando_map_replace_component(map, 1, 0, 10, 902), 0);
	CHECK_EQ(map->spare_count, 1);
	CHECK_EQ(pando_map_validate(map), 0);
	pando_map_free(map);
}

/* Which components a map can lose and still be read: a copy of every
 * mirrored column, k of every RS group, every RAID-0 column. */
static void test_survives(void)
{
	struct pando_map_shape s = shape(PANDO_RAID1, 2, 2, 0);
	struct pando_storage_map *map;
	bool lost[2 * 6] = { false };

	CHECK_EQ(pando_map_new(&s, 2, 0, &map), 0);
	CHECK(pando_map_survives(map, lost));
	lost[0] = lost[3] = lost[4 + 1] = true; /* g0: copy 0 col 0, copy 1 col 1 */
	CHECK(pando_map_survives(map, lost));
	lost[2] = true; /* g0 column 0: both copies */
	CHECK(!pando_map_survives(map, lost));
	pando_map_free(map);

	s = shape(PANDO_RS, 1, 4, 2);
	memset(lost, 0, sizeof(lost));
	CHECK_EQ(pando_map_new(&s, 2, 0, &map), 0);
	lost[1] = lost[5] = lost[6 + 0] = lost[6 + 4] = true; /* 2 per group */
	CHECK(pando_map_survives(map, lost));
	lost[6 + 5] = true; /* a third in group 1 */
	CHECK(!pando_map_survives(map, lost));
	pando_map_free(map);

	s = shape(PANDO_RAID0, 1, 3, 0);
	memset(lost, 0, sizeof(lost));
	CHECK_EQ(pando_map_new(&s, 1, 0, &map), 0);
	CHECK(pando_map_survives(map, lost));
	lost[2] = true;
	CHECK(!pando_map_survives(map, lost));
	pando_map_free(map);
}

int main(void)
{
	test_shapes();
	test_survives();
	test_validate();
	test_replace();
	CHECK_DONE();
}
