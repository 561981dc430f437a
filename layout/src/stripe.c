#include "pando/stripe.h"

#include <errno.h>
#include <stdbool.h>

/* Where one file byte's stripe unit sits. */
struct unit_pos {
	uint32_t group;
	uint32_t chunk; /* column (RAID-0/1) or data chunk (RS) */
	uint64_t row;   /* RS: component row, counted over all visits */
};

static uint64_t visit_bytes(const struct pando_storage_map *map)
{
	return pando_shape_visit_bytes(&map->shape);
}

static bool is_rs(const struct pando_storage_map *map)
{
	return map->shape.raid == PANDO_RS;
}

static struct unit_pos unit_of(const struct pando_storage_map *map, uint64_t off)
{
	const struct pando_map_shape *s = &map->shape;
	uint64_t visit = off / visit_bytes(map), in_visit = off % visit_bytes(map);
	uint64_t row_bytes = (uint64_t)s->data * s->stripe_unit;
	struct unit_pos pos;

	pos.group = (uint32_t)(visit % map->groups);
	pos.chunk = (uint32_t)(off / s->stripe_unit % s->data);
	pos.row = visit / map->groups * s->visit_rows + in_visit / row_bytes;
	return pos;
}

/* RS is systematic and does not rotate: data chunk i of every row is on
 * component i at its file offset, as RAID-0 keeps it, so the k data
 * components are a plain striped flexfiles layout that stock clients can
 * read; parity chunk i is on component k + i, packed (one stripe unit a
 * row).  Parity load spreads over OSDs through per-file placement rather
 * than rotation within a file. */
static uint64_t rs_parity_offset(const struct pando_storage_map *map, uint64_t row)
{
	return row * map->shape.stripe_unit;
}

static int range_check(uint64_t offset, uint64_t length)
{
	if (offset > PANDO_FILE_MAX || length > PANDO_FILE_MAX - offset)
		return -ERANGE;
	return 0;
}

static void emit(struct pando_piece *pieces, size_t cap, size_t *n, const struct pando_piece *p)
{
	if (*n < cap)
		pieces[*n] = *p;
	(*n)++;
}

static void unit_pieces(const struct pando_storage_map *map, uint64_t off, uint64_t len,
			struct pando_piece *pieces, size_t cap, size_t *n)
{
	const struct pando_map_shape *s = &map->shape;
	struct unit_pos pos = unit_of(map, off);
	struct pando_piece p = {
		.group = pos.group,
		.role = PANDO_PIECE_DATA,
		.chunk = (uint8_t)pos.chunk,
		.file_offset = off,
		.length = len,
	};

	p.object_offset = off;
	for (uint32_t copy = 0; copy < s->copies; copy++) {
		p.copy = (uint8_t)copy;
		p.component = copy * s->data + pos.chunk;
		emit(pieces, cap, n, &p);
	}
}

int pando_stripe_data_pieces(const struct pando_storage_map *map, uint64_t offset, uint64_t length,
			     struct pando_piece *pieces, size_t cap, size_t *count)
{
	uint64_t su = map->shape.stripe_unit, end = offset + length;
	int rc = range_check(offset, length);

	*count = 0;
	if (rc)
		return rc;
	for (uint64_t off = offset; off < end;) {
		uint64_t unit_end = (off / su + 1) * su;
		uint64_t len = (unit_end < end ? unit_end : end) - off;

		unit_pieces(map, off, len, pieces, cap, count);
		off += len;
	}
	return *count > cap ? -ENOSPC : 0;
}

/* Parity bytes changed in one stripe row by writing [lo, hi) of it
 * (row-relative): the bytes under the write when it stays in one unit,
 * the whole parity unit otherwise. */
static void row_parity(const struct pando_storage_map *map, uint64_t row_start, uint64_t lo,
		       uint64_t hi, struct pando_piece *pieces, size_t cap, size_t *n)
{
	const struct pando_map_shape *s = &map->shape;
	struct unit_pos pos = unit_of(map, row_start);
	bool one_unit = lo / s->stripe_unit == (hi - 1) / s->stripe_unit;
	uint64_t first = one_unit ? lo % s->stripe_unit : 0;
	struct pando_piece p = {
		.group = pos.group,
		.role = PANDO_PIECE_PARITY,
		.file_offset = row_start,
		.object_offset = rs_parity_offset(map, pos.row) + first,
		.length = one_unit ? hi - lo : s->stripe_unit,
	};

	for (uint32_t i = 0; i < s->parity; i++) {
		p.chunk = (uint8_t)(s->data + i);
		p.component = s->data + i;
		emit(pieces, cap, n, &p);
	}
}

int pando_stripe_parity_pieces(const struct pando_storage_map *map, uint64_t offset,
			       uint64_t length, struct pando_piece *pieces, size_t cap,
			       size_t *count)
{
	uint64_t row_len = (uint64_t)map->shape.data * map->shape.stripe_unit;
	uint64_t end = offset + length;
	int rc = range_check(offset, length);

	*count = 0;
	if (rc || !is_rs(map))
		return rc;
	for (uint64_t off = offset; off < end;) {
		uint64_t row_start = off / row_len * row_len;
		uint64_t row_end = row_start + row_len < end ? row_start + row_len : end;

		row_parity(map, row_start, off - row_start, row_end - row_start, pieces, cap,
			   count);
		off = row_end;
	}
	return *count > cap ? -ENOSPC : 0;
}

/* Parity component c (>= k) of group g: object offset x is parity of
 * the group's component row x / stripe_unit. */
static int locate_parity(const struct pando_storage_map *map, uint32_t g, uint32_t c,
			 uint64_t object_offset, struct pando_location *loc)
{
	const struct pando_map_shape *s = &map->shape;
	uint64_t row = object_offset / s->stripe_unit;
	uint64_t round = row / s->visit_rows;
	uint64_t last_visit = PANDO_FILE_MAX / visit_bytes(map);
	uint64_t row_start;

	/* refuse visits past the largest file offset before multiplying */
	if (g > last_visit || round > (last_visit - g) / map->groups)
		return -ERANGE;
	row_start = (round * map->groups + g) * visit_bytes(map) +
		    row % s->visit_rows * s->data * s->stripe_unit;
	if (row_start >= PANDO_FILE_MAX)
		return -ERANGE;
	loc->role = PANDO_PIECE_PARITY;
	loc->chunk = (uint8_t)c;
	loc->copy = 0;
	loc->file_offset = row_start;
	loc->length = s->stripe_unit - object_offset % s->stripe_unit;
	return 0;
}

static int locate_sparse(const struct pando_storage_map *map, uint32_t g, uint32_t c,
			 uint64_t object_offset, struct pando_location *loc)
{
	const struct pando_map_shape *s = &map->shape;
	struct unit_pos pos = unit_of(map, object_offset);

	if (pos.group != g || pos.chunk != c % s->data)
		return -ENOENT;
	loc->role = PANDO_PIECE_DATA;
	loc->copy = (uint8_t)(c / s->data);
	loc->chunk = (uint8_t)pos.chunk;
	loc->file_offset = object_offset;
	loc->length = s->stripe_unit - object_offset % s->stripe_unit;
	return 0;
}

int pando_stripe_locate(const struct pando_storage_map *map, uint32_t g, uint32_t c,
			uint64_t object_offset, struct pando_location *loc)
{
	if (g >= map->groups || c >= pando_map_width(map))
		return -EINVAL;
	if (object_offset >= PANDO_FILE_MAX)
		return -ERANGE;
	if (is_rs(map) && c >= map->shape.data)
		return locate_parity(map, g, c, object_offset, loc);
	return locate_sparse(map, g, c, object_offset, loc);
}

/* The visit holding offset, or the whole file when there is one group. */
static void visit_range(const struct pando_storage_map *map, uint64_t offset,
			struct pando_segment *seg)
{
	uint64_t vb = visit_bytes(map);

	if (map->groups == 1) {
		seg->offset = 0;
		seg->length = PANDO_LENGTH_EOF;
		return;
	}
	seg->offset = offset / vb * vb;
	seg->length = vb;
}

static void fill_mirrors(const struct pando_storage_map *map, uint32_t first_column,
			 uint32_t columns, struct pando_segment *seg)
{
	const struct pando_map_shape *s = &map->shape;

	seg->mirrors = s->copies;
	seg->columns = columns;
	for (uint32_t m = 0; m < s->copies; m++)
		for (uint32_t col = 0; col < columns; col++)
			seg->component[m * columns + col] = m * s->data + first_column + col;
}

int pando_stripe_segment(const struct pando_storage_map *map, uint64_t offset,
			 struct pando_segment *seg)
{
	const struct pando_map_shape *s = &map->shape;
	struct unit_pos pos;

	if (is_rs(map))
		return -EOPNOTSUPP;
	if (offset >= PANDO_FILE_MAX)
		return -ERANGE;
	pos = unit_of(map, offset);
	seg->group = pos.group;
	seg->stripe_unit = 0;
	if (s->data == 1) {
		visit_range(map, offset, seg);
	} else {
		seg->offset = offset / s->stripe_unit * s->stripe_unit;
		seg->length = s->stripe_unit;
	}
	fill_mirrors(map, pos.chunk, 1, seg);
	return 0;
}

int pando_stripe_striped(const struct pando_storage_map *map, uint64_t offset,
			 struct pando_segment *seg)
{
	const struct pando_map_shape *s = &map->shape;

	if (offset >= PANDO_FILE_MAX)
		return -ERANGE;
	seg->group = unit_of(map, offset).group;
	seg->stripe_unit = s->data > 1 ? s->stripe_unit : 0;
	visit_range(map, offset, seg);
	fill_mirrors(map, 0, s->data, seg);
	return 0;
}
