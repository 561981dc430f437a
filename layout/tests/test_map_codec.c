/* The stored storage-map format: known bytes, round trips over random
 * maps, and every kind of damaged input refused. */
#include <errno.h>

#include "check.h"
#include "fixture.h"
#include "pando/storage_map.h"

/* RAID-1, 2 copies of 1 column, 64 KiB units, one group, one spare. */
static const uint8_t known[] = {
	0x01,                                           /* format version 1 */
	0x01,                                           /* raid: RAID-1 */
	0x02,                                           /* copies */
	0x01,                                           /* data columns */
	0x00,                                           /* parity */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* seed, big-endian */
	0x80, 0x80, 0x04, /* stripe unit 65536 = 2^16: 0,0,4 in 7-bit groups */
	0x80, 0x80, 0x01, /* visit rows 16384 = 2^14 */
	0x01,             /* groups */
	0x01,             /* spares */
	0x07,             /* partition 7 */
	0x03, 0xc8, 0x01, /* OSD 3; object 100: zigzag(100 - 0) = 200 */
	0x09, 0x00,       /* OSD 9; object 101: zigzag(101 - 101) = 0 */
	0x0c,             /* spare OSD 12 */
};

static struct pando_storage_map *known_map(void)
{
	struct pando_map_shape s = { .raid = PANDO_RAID1,
				     .copies = 2,
				     .data = 1,
				     .stripe_unit = 65536,
				     .visit_rows = 16384 };
	struct pando_storage_map *map;

	if (pando_map_new(&s, 1, 1, &map))
		return NULL;
	map->seed = 0x0102030405060708ull;
	map->partition_id = 7;
	map->comp[0] = (struct pando_component){ 3, 100 };
	map->comp[1] = (struct pando_component){ 9, 101 };
	map->spares[0] = 12;
	return map;
}

static int maps_equal(const struct pando_storage_map *a, const struct pando_storage_map *b)
{
	size_t n = (size_t)a->groups * pando_map_width(a);

	if (memcmp(&a->shape, &b->shape, sizeof(a->shape)) || a->groups != b->groups ||
	    a->spare_count != b->spare_count || a->seed != b->seed ||
	    a->partition_id != b->partition_id)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (a->comp[i].osd_id != b->comp[i].osd_id ||
		    a->comp[i].object_id != b->comp[i].object_id)
			return 0;
	return memcmp(a->spares, b->spares, a->spare_count * sizeof(a->spares[0])) == 0;
}

static void test_known_bytes(void)
{
	struct pando_storage_map *map = known_map(), *back;
	uint8_t buf[64];
	size_t len;

	CHECK_EQ(pando_map_encode(map, NULL, 0, &len), -ENOSPC);
	CHECK_EQ(len, sizeof(known));
	CHECK_EQ(pando_map_encode(map, buf, sizeof(known) - 1, &len), -ENOSPC);
	CHECK_EQ(pando_map_encode(map, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(known));
	CHECK_MEM(buf, known, sizeof(known));
	CHECK_EQ(pando_map_decode(known, sizeof(known), &back), 0);
	CHECK(back && maps_equal(map, back));
	pando_map_free(back);
	pando_map_free(map);
}

static void test_damaged(void)
{
	struct pando_storage_map *map = NULL;
	uint8_t bad[sizeof(known) + 1];

	for (size_t n = 0; n < sizeof(known); n++) {
		CHECK_EQ(pando_map_decode(known, n, &map), -EBADMSG);
		CHECK(map == NULL);
	}
	memcpy(bad, known, sizeof(known));
	bad[sizeof(known)] = 0; /* a trailing byte */
	CHECK_EQ(pando_map_decode(bad, sizeof(known) + 1, &map), -EBADMSG);
#define MUTATE(at, value, want) \
	do { \
		memcpy(bad, known, sizeof(known)); \
		bad[at] = (value); \
		CHECK_EQ(pando_map_decode(bad, sizeof(known), &map), want); \
		CHECK(map == NULL); \
	} while (0)
	MUTATE(0, 2, -ENOTSUP);     /* a later format */
	MUTATE(1, 3, -EBADMSG);     /* no such scheme */
	MUTATE(2, 4, -EBADMSG);     /* four mirrors */
	MUTATE(4, 1, -EBADMSG);     /* parity on RAID-1 */
	MUTATE(15, 0x00, -EBADMSG); /* stripe unit 0x80 0x80 0x00: overlong */
	MUTATE(19, 0x00, -EBADMSG); /* no groups */
	MUTATE(21, 0x00, -EBADMSG); /* partition 0 */
	MUTATE(25, 0x03, -EBADMSG); /* OSD 3 twice in the group */
	MUTATE(27, 0x09, -EBADMSG); /* the spare is in the group */
	MUTATE(19, 0x7f, -EBADMSG); /* 127 groups claimed in 28 bytes */
#undef MUTATE
	{
		/* object ids 0 and 101: zigzag(0 - 0) = 0, zigzag(101 - 1) = 200 */
		static const uint8_t tail[] = { 0x03, 0x00, 0x09, 0xc8, 0x01, 0x0c };

		memcpy(bad, known, sizeof(known));
		memcpy(bad + 22, tail, sizeof(tail));
		CHECK_EQ(pando_map_decode(bad, sizeof(known), &map), -EBADMSG);
		bad[23] = 0x02; /* object 1 instead: valid */
		bad[25] = 0xc6; /* zigzag(101 - 2) = 198: 0xc6 0x01 */
		CHECK_EQ(pando_map_decode(bad, sizeof(known), &map), 0);
		CHECK(map && map->comp[0].object_id == 1 && map->comp[1].object_id == 101);
		pando_map_free(map);
	}
	{
		/* a varint running past 64 bits */
		uint8_t longer[sizeof(known) + 9];

		memcpy(longer, known, 13);
		memset(longer + 13, 0xff, 10);
		memcpy(longer + 23, known + 16, sizeof(known) - 16);
		CHECK_EQ(pando_map_decode(longer, sizeof(known) + 7, &map), -EBADMSG);
	}
}

/* Random maps from placement, with some components replaced so the object
 * ids are no longer consecutive, survive encode and decode. */
static void test_round_trips(void)
{
	struct cluster_map osds = fixture_map(48, 1, 0);
	uint64_t *used = fixture_used(48);
	struct pando_placement_view *c = fixture_view(&osds, used);
	int failed = 0;

	for (uint64_t seed = 1; seed <= 2000; seed++) {
		struct pando_layout_request req = fixture_request(seed);
		struct pando_storage_map *map, *back = NULL;
		uint8_t buf[4096];
		size_t len;
		uint32_t osd;

		CHECK_EQ(pando_place(c, &req, &map), 0);
		if (!map)
			continue;
		if (seed % 3 == 0 && pando_place_replacement(c, map, 0, 0, seed, &osd) == 0)
			CHECK_EQ(pando_map_replace_component(map, 0, 0, osd, fixture_rand() | 1),
				 0);
		if (pando_map_encode(map, buf, sizeof(buf), &len) ||
		    pando_map_decode(buf, len, &back) || !maps_equal(map, back))
			failed++;
		pando_map_free(back);
		pando_map_free(map);
	}
	CHECK_EQ(failed, 0);
	pando_placement_view_free(c);
	fixture_free(&osds, used);
}

int main(void)
{
	test_known_bytes();
	test_damaged();
	test_round_trips();
	CHECK_DONE();
}
