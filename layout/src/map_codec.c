/* The storage map's stored form (README.md, "Binary map format").  Object
 * ids are written as zigzag deltas from the previous id plus one, because
 * placement hands a file consecutive ids: a fresh map costs about two
 * bytes a component whatever the ids' magnitude. */
#include "pando/storage_map.h"

#include <errno.h>
#include <stdlib.h>

#include "varint.h"

static void put_fixed(struct byte_out *o, const struct pando_storage_map *map)
{
	bout_byte(o, PANDO_MAP_FORMAT_VERSION);
	bout_byte(o, map->shape.raid);
	bout_byte(o, map->shape.copies);
	bout_byte(o, map->shape.data);
	bout_byte(o, map->shape.parity);
	for (int shift = 56; shift >= 0; shift -= 8)
		bout_byte(o, (uint8_t)(map->seed >> shift));
}

static void put_components(struct byte_out *o, const struct pando_storage_map *map)
{
	size_t n = (size_t)map->groups * pando_map_width(map);
	uint64_t expect = 0;

	for (size_t i = 0; i < n; i++) {
		bout_varint(o, map->comp[i].osd_id);
		bout_varint(o, zigzag((int64_t)(map->comp[i].object_id - expect)));
		expect = map->comp[i].object_id + 1;
	}
}

int pando_map_encode(const struct pando_storage_map *map, uint8_t *buf, size_t cap, size_t *len)
{
	struct byte_out o = { buf, cap, 0 };
	int rc = pando_map_validate(map);

	*len = 0;
	if (rc)
		return rc;
	put_fixed(&o, map);
	bout_varint(&o, map->shape.stripe_unit);
	bout_varint(&o, map->shape.visit_rows);
	bout_varint(&o, map->groups);
	bout_varint(&o, map->spare_count);
	bout_varint(&o, map->partition_id);
	put_components(&o, map);
	for (uint32_t i = 0; i < map->spare_count; i++)
		bout_varint(&o, map->spares[i]);
	*len = o.len;
	return o.len > cap ? -ENOSPC : 0;
}

/* A varint that must fit in `bits` bits. */
static uint64_t get_bounded(struct byte_in *in, unsigned bits)
{
	uint64_t v = bin_varint(in);

	if (bits < 64 && v >> bits)
		in->err = true;
	return v;
}

static int get_header(struct byte_in *in, struct pando_map_shape *shape, uint64_t *seed)
{
	uint8_t version = bin_byte(in);

	if (in->err)
		return -EBADMSG;
	if (version != PANDO_MAP_FORMAT_VERSION)
		return -ENOTSUP;
	shape->raid = bin_byte(in);
	shape->copies = bin_byte(in);
	shape->data = bin_byte(in);
	shape->parity = bin_byte(in);
	*seed = 0;
	for (int i = 0; i < 8; i++)
		*seed = *seed << 8 | bin_byte(in);
	shape->stripe_unit = (uint32_t)get_bounded(in, 32);
	shape->visit_rows = (uint32_t)get_bounded(in, 32);
	return in->err ? -EBADMSG : 0;
}

static void get_components(struct byte_in *in, struct pando_storage_map *map)
{
	size_t n = (size_t)map->groups * pando_map_width(map);
	uint64_t expect = 0;

	for (size_t i = 0; i < n && !in->err; i++) {
		map->comp[i].osd_id = (uint32_t)get_bounded(in, 32);
		map->comp[i].object_id = expect + (uint64_t)unzigzag(bin_varint(in));
		expect = map->comp[i].object_id + 1;
	}
}

static int get_body(struct byte_in *in, const struct pando_map_shape *shape, uint64_t seed,
		    struct pando_storage_map **out)
{
	struct pando_storage_map *map;
	uint32_t groups = (uint32_t)get_bounded(in, 32);
	uint32_t spare_count = (uint32_t)get_bounded(in, 32);
	uint64_t partition_id = bin_varint(in);
	int rc;

	/* every component takes at least two bytes, every spare one: a
	 * short buffer is refused before anything is allocated for it */
	if (in->err || (uint64_t)groups * pando_shape_width(shape) * 2 + spare_count >
			       (uint64_t)(in->end - in->p))
		return -EBADMSG;
	rc = pando_map_new(shape, groups, spare_count, &map);
	if (rc)
		return rc == -ENOMEM ? rc : -EBADMSG;
	map->seed = seed;
	map->partition_id = partition_id;
	get_components(in, map);
	for (uint32_t i = 0; i < spare_count; i++)
		map->spares[i] = (uint32_t)get_bounded(in, 32);
	if (in->err || in->p != in->end || pando_map_validate(map)) {
		pando_map_free(map);
		return -EBADMSG;
	}
	*out = map;
	return 0;
}

int pando_map_decode(const uint8_t *buf, size_t len, struct pando_storage_map **out)
{
	struct byte_in in = { buf, buf + len, false };
	struct pando_map_shape shape;
	uint64_t seed;
	int rc;

	*out = NULL;
	rc = get_header(&in, &shape, &seed);
	if (rc)
		return rc;
	return get_body(&in, &shape, seed, out);
}
