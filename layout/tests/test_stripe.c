/* Stripe math: known positions, then properties over many random maps:
 * every file byte maps to exactly one object byte per mirror and back,
 * pieces never overlap, RS data sits where RAID-0 puts it and parity on
 * the last m components, and
 * layout segments agree with the client's own striping rule. */
#include <errno.h>

#include "check.h"
#include "fixture.h"
#include "pando/stripe.h"

#define MAX_PIECES 4096

static struct pando_piece pieces[MAX_PIECES];

static struct pando_storage_map *make_map(uint8_t raid, uint8_t copies, uint8_t data,
					  uint8_t parity, uint32_t su, uint32_t visit_rows,
					  uint32_t groups)
{
	struct pando_map_shape s = { .raid = raid,
				     .copies = copies,
				     .data = data,
				     .parity = parity,
				     .stripe_unit = su,
				     .visit_rows = visit_rows };
	struct pando_storage_map *map;
	uint32_t n;

	if (pando_map_new(&s, groups, 0, &map))
		return NULL;
	map->partition_id = 1;
	n = groups * pando_map_width(map);
	for (uint32_t i = 0; i < n; i++) {
		map->comp[i].osd_id = 100 + i;
		map->comp[i].object_id = 1 + i;
	}
	return map;
}

static struct pando_storage_map *random_map(void)
{
	static const uint32_t units[] = { 512, 1024, 4096, 65536 };
	uint8_t raid = (uint8_t)(fixture_rand() % 3), parity = 0, copies = 1;
	uint8_t data = (uint8_t)(1 + fixture_rand() % 6);

	if (raid == PANDO_RAID1)
		copies = (uint8_t)(2 + fixture_rand() % 2);
	if (raid == PANDO_RS)
		parity = (uint8_t)(1 + fixture_rand() % 4);
	return make_map(raid, copies, data, parity, units[fixture_rand() % 4],
			(uint32_t)(1 + fixture_rand() % 5), (uint32_t)(1 + fixture_rand() % 4));
}

static size_t data_pieces(const struct pando_storage_map *map, uint64_t off, uint64_t len)
{
	size_t n = 0;

	CHECK_EQ(pando_stripe_data_pieces(map, off, len, pieces, MAX_PIECES, &n), 0);
	return n;
}

static void test_known_raid0(void)
{
	/* 3 columns of 4 KiB, 2 rows a visit, 2 groups: a visit is 24 KiB */
	struct pando_storage_map *map = make_map(PANDO_RAID0, 1, 3, 0, 4096, 2, 2);
	static const struct {
		uint64_t off;
		uint32_t group, comp;
	} want[] = {
		{ 0, 0, 0 },     { 4096, 0, 1 },  { 8192 + 5, 0, 2 }, { 12288, 0, 0 },
		{ 24576, 1, 0 }, { 28672, 1, 1 }, { 49152, 0, 0 },    { 73728 + 4096, 1, 1 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_EQ(data_pieces(map, want[i].off, 1), 1);
		CHECK_EQ(pieces[0].group, want[i].group);
		CHECK_EQ(pieces[0].component, want[i].comp);
		CHECK_EQ(pieces[0].object_offset, want[i].off); /* sparse */
	}
	pando_map_free(map);
}

static void test_known_rs(void)
{
	/* RS(2,1), 512-byte units, 2 rows a visit (2 KiB), 2 groups: data
	 * where RAID-0 puts it (sparse), parity on component 2, packed */
	struct pando_storage_map *map = make_map(PANDO_RS, 1, 2, 1, 512, 2, 2);
	static const struct {
		uint64_t off;
		uint32_t group, comp;
	} want[] = {
		{ 0, 0, 0 },    { 512, 0, 1 },      /* row 0 of group 0 */
		{ 1024, 0, 0 }, { 1536 + 7, 0, 1 }, /* row 1 */
		{ 2048, 1, 0 }, { 2560, 1, 1 },     /* visit 1: group 1, row 0 */
		{ 4096, 0, 0 }, { 4608, 0, 1 },     /* visit 2: group 0 again, row 2 */
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_EQ(data_pieces(map, want[i].off, 1), 1);
		CHECK_EQ(pieces[0].group, want[i].group);
		CHECK_EQ(pieces[0].component, want[i].comp);
		CHECK_EQ(pieces[0].object_offset, want[i].off);
	}
	/* parity of row 1 (file 1024..2047) is chunk 2 on component 2 */
	CHECK_EQ(pando_stripe_parity_pieces(map, 1024 + 100, 10, pieces, MAX_PIECES, &n), 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(pieces[0].component, 2);
	CHECK_EQ(pieces[0].chunk, 2);
	CHECK_EQ(pieces[0].object_offset, 512 + 100);
	CHECK_EQ(pieces[0].length, 10);
	CHECK_EQ(pieces[0].file_offset, 1024);
	/* a write across both units of row 1 changes the whole parity unit */
	CHECK_EQ(pando_stripe_parity_pieces(map, 1024 + 500, 100, pieces, MAX_PIECES, &n), 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(pieces[0].object_offset, 512);
	CHECK_EQ(pieces[0].length, 512);
	/* visit 2 is group 0's third row: its parity at 2 x 512 */
	CHECK_EQ(pando_stripe_parity_pieces(map, 4096, 1, pieces, MAX_PIECES, &n), 0);
	CHECK_EQ(pieces[0].object_offset, 1024);
	pando_map_free(map);
}

static int cmp_file(const void *a, const void *b)
{
	const struct pando_piece *x = a, *y = b;

	if (x->copy != y->copy)
		return x->copy < y->copy ? -1 : 1;
	return x->file_offset < y->file_offset ? -1 : x->file_offset > y->file_offset;
}

static int cmp_object(const void *a, const void *b)
{
	const struct pando_piece *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->component != y->component)
		return x->component < y->component ? -1 : 1;
	return x->object_offset < y->object_offset ? -1 : x->object_offset > y->object_offset;
}

/* Data pieces tile the range once per mirror; each stays in one stripe
 * unit of a component and locates back to its file bytes. */
static int check_tiling(const struct pando_storage_map *map, uint64_t off, uint64_t len, size_t n)
{
	uint32_t su = map->shape.stripe_unit;
	uint64_t at = off;
	uint32_t copy = 0;
	int bad = 0;

	qsort(pieces, n, sizeof(pieces[0]), cmp_file);
	for (size_t i = 0; i < n; i++) {
		struct pando_piece *p = &pieces[i];
		struct pando_location loc, last;

		if (p->copy != copy) {
			bad += at != off + len || p->copy != copy + 1;
			copy = p->copy;
			at = off;
		}
		bad += p->file_offset != at || p->length == 0 || p->role != PANDO_PIECE_DATA;
		bad += p->object_offset / su != (p->object_offset + p->length - 1) / su;
		at += p->length;
		if (pando_stripe_locate(map, p->group, p->component, p->object_offset, &loc) ||
		    pando_stripe_locate(map, p->group, p->component,
					p->object_offset + p->length - 1, &last)) {
			bad++;
			continue;
		}
		bad += loc.role != PANDO_PIECE_DATA || loc.file_offset != p->file_offset ||
		       loc.copy != p->copy || loc.chunk != p->chunk || loc.length < p->length;
		bad += last.file_offset != p->file_offset + p->length - 1;
	}
	bad += at != off + len || copy + 1u != map->shape.copies;
	return bad;
}

/* No object byte holds two things: data pieces of all mirrors and, for
 * RS, the parity pieces of the rows, sorted by place, never overlap. */
static int check_no_overlap(const struct pando_storage_map *map, uint64_t off, uint64_t len,
			    size_t n)
{
	size_t np = 0;
	int bad = 0;

	if (map->shape.raid == PANDO_RS) {
		CHECK_EQ(pando_stripe_parity_pieces(map, off, len, pieces + n, MAX_PIECES - n, &np),
			 0);
		for (size_t i = n; i < n + np; i++) {
			struct pando_location loc;

			bad += pando_stripe_locate(map, pieces[i].group, pieces[i].component,
						   pieces[i].object_offset, &loc) != 0;
			bad += loc.role != PANDO_PIECE_PARITY || loc.chunk != pieces[i].chunk ||
			       loc.file_offset != pieces[i].file_offset;
		}
	}
	qsort(pieces, n + np, sizeof(pieces[0]), cmp_object);
	for (size_t i = 1; i < n + np; i++) {
		const struct pando_piece *a = &pieces[i - 1], *b = &pieces[i];

		if (a->group == b->group && a->component == b->component)
			bad += a->object_offset + a->length > b->object_offset;
	}
	return bad;
}

static void test_random_ranges(void)
{
	int bad = 0;

	for (int round = 0; round < 3000; round++) {
		struct pando_storage_map *map = random_map();
		uint64_t span = pando_shape_visit_bytes(&map->shape) * (map->groups + 2);
		uint64_t off = fixture_rand() % span, len = 1 + fixture_rand() % (span / 3 + 1);
		size_t n = 0;

		if (pando_stripe_data_pieces(map, off, len, pieces, MAX_PIECES / 2, &n) ==
		    -ENOSPC) {
			len = MAX_PIECES / 2 / map->shape.copies / 3 * map->shape.stripe_unit;
			CHECK_EQ(pando_stripe_data_pieces(map, off, len, pieces, MAX_PIECES / 2,
							  &n),
				 0);
		}
		bad += check_tiling(map, off, len, n);
		bad += check_no_overlap(map, off, len, n);
		pando_map_free(map);
	}
	CHECK_EQ(bad, 0);
}

/* Small maps, byte by byte over a few visits of every group: every file
 * byte goes to exactly one object byte per mirror and every object byte
 * of the components is either a hole, parity, or the one file byte that
 * maps to it. */
static void test_bijection(void)
{
	int bad = 0;

	for (int round = 0; round < 100; round++) {
		struct pando_storage_map *map = random_map();
		uint32_t su = map->shape.stripe_unit, width = pando_map_width(map);
		uint64_t file_bytes = pando_shape_visit_bytes(&map->shape) * map->groups * 2;
		/* RS parity packs each group's two visits into 2 x visit_rows rows */
		uint64_t parity_bytes = file_bytes / map->shape.data / map->groups;
		uint64_t data_hits = 0, parity_hits = 0;

		if (file_bytes > (1u << 20)) {
			pando_map_free(map);
			continue;
		}
		for (uint32_t g = 0; g < map->groups; g++) {
			for (uint32_t c = 0; c < width; c++) {
				uint64_t object_bytes = c < map->shape.data * map->shape.copies
								? file_bytes
								: parity_bytes;

				for (uint64_t x = 0; x < object_bytes; x += su / 8) {
					struct pando_location loc;
					int rc = pando_stripe_locate(map, g, c, x, &loc);

					if (rc == -ENOENT)
						continue;
					if (rc || loc.length != su - x % su) {
						bad++;
						continue;
					}
					if (loc.role == PANDO_PIECE_PARITY) {
						parity_hits++;
						continue;
					}
					data_hits++;
					bad += data_pieces(map, loc.file_offset, 1) !=
					       map->shape.copies;
					bad += pieces[loc.copy].group != g ||
					       pieces[loc.copy].component != c ||
					       pieces[loc.copy].object_offset != x;
				}
			}
		}
		/* sampled every su/8 bytes: 8 samples a unit */
		bad += data_hits != file_bytes / su * 8 * map->shape.copies;
		bad += parity_hits != file_bytes / su / map->shape.data * map->shape.parity * 8;
		pando_map_free(map);
	}
	CHECK_EQ(bad, 0);
}

/* RS: the first k components hold only data, the last m only parity,
 * parity chunk i on component k + i. */
static void test_rs_fixed_columns(void)
{
	struct pando_storage_map *map = make_map(PANDO_RS, 1, 8, 2, 4096, 3, 2);
	int bad = 0;

	for (uint64_t row = 0; row < 50; row++) {
		for (uint32_t c = 8; c < 10; c++) {
			struct pando_location loc;

			bad += pando_stripe_locate(map, 1, c, row * 4096, &loc) != 0;
			bad += loc.role != PANDO_PIECE_PARITY || loc.chunk != c;
		}
	}
	for (uint64_t off = 0; off < 20 * 8 * 4096; off += 4096) {
		bad += data_pieces(map, off, 1) != 1;
		bad += pieces[0].component != off / 4096 % 8;
	}
	CHECK_EQ(bad, 0);
	pando_map_free(map);
}

/* The client's rule for a striped flexfiles layout (RFC 8435 section 7,
 * sparse): byte L goes to data server (L / stripe_unit) mod columns of
 * each mirror, at offset L. */
static int check_segment_rule(const struct pando_storage_map *map, const struct pando_segment *seg,
			      uint64_t l)
{
	uint32_t col = seg->stripe_unit ? (uint32_t)(l / seg->stripe_unit % seg->columns) : 0;
	int bad = 0;

	if (l < seg->offset || (seg->length != PANDO_LENGTH_EOF && l >= seg->offset + seg->length))
		return 0;
	bad += data_pieces(map, l, 1) != seg->mirrors;
	for (uint32_t m = 0; m < seg->mirrors; m++) {
		bad += pieces[m].group != seg->group;
		bad += pieces[m].component != seg->component[m * seg->columns + col];
		bad += pieces[m].object_offset != l;
	}
	return bad;
}

static void test_segments(void)
{
	int bad = 0;

	for (int round = 0; round < 2000; round++) {
		struct pando_storage_map *map = random_map();
		uint64_t vb = pando_shape_visit_bytes(&map->shape);
		uint64_t off = fixture_rand() % (vb * (map->groups + 1));
		struct pando_segment one, all;

		bad += pando_stripe_striped(map, off, &all) != 0;
		bad += (all.stripe_unit == 0) != (map->shape.data == 1);
		bad += all.columns != map->shape.data || all.mirrors != map->shape.copies;
		if (map->shape.raid == PANDO_RS) {
			/* only the data components, striped, for reading */
			bad += pando_stripe_segment(map, off, &one) != -EOPNOTSUPP;
			for (int probe = 0; probe < 20; probe++)
				bad += check_segment_rule(map, &all,
							  all.offset + fixture_rand() % (2 * vb));
			pando_map_free(map);
			continue;
		}
		bad += pando_stripe_segment(map, off, &one) != 0;
		bad += one.columns != 1 || one.stripe_unit != 0 || off < one.offset;
		bad += one.length != PANDO_LENGTH_EOF && off >= one.offset + one.length;
		bad += (all.length == PANDO_LENGTH_EOF) != (map->groups == 1);
		for (int probe = 0; probe < 20; probe++) {
			bad += check_segment_rule(map, &one,
						  one.offset + fixture_rand() % (2 * vb));
			bad += check_segment_rule(map, &all,
						  all.offset + fixture_rand() % (2 * vb));
		}
		pando_map_free(map);
	}
	CHECK_EQ(bad, 0);
}

static void test_known_segments(void)
{
	struct pando_storage_map *mirror = make_map(PANDO_RAID1, 2, 1, 0, 65536, 16384, 1);
	struct pando_storage_map *raid0 = make_map(PANDO_RAID0, 1, 4, 0, 65536, 4096, 1);
	struct pando_segment seg;

	/* a plain mirror: one segment for the whole file, one DS per mirror */
	CHECK_EQ(pando_stripe_segment(mirror, 5 << 20, &seg), 0);
	CHECK_EQ(seg.offset, 0);
	CHECK(seg.length == PANDO_LENGTH_EOF);
	CHECK_EQ(seg.mirrors, 2);
	CHECK_EQ(seg.component[0], 0);
	CHECK_EQ(seg.component[1], 1);
	/* RAID-0 for an old client: the 64 KiB unit holding the offset */
	CHECK_EQ(pando_stripe_segment(raid0, 200000, &seg), 0);
	CHECK_EQ(seg.offset, 196608);
	CHECK_EQ(seg.length, 65536);
	CHECK_EQ(seg.component[0], 3);
	/* and for 6.18+: one layout, 4 data servers, stripe unit 64 KiB */
	CHECK_EQ(pando_stripe_striped(raid0, 200000, &seg), 0);
	CHECK_EQ(seg.offset, 0);
	CHECK(seg.length == PANDO_LENGTH_EOF);
	CHECK_EQ(seg.stripe_unit, 65536);
	CHECK_EQ(seg.columns, 4);
	pando_map_free(mirror);
	pando_map_free(raid0);
}

static void test_limits(void)
{
	struct pando_storage_map *rs = make_map(PANDO_RS, 1, 3, 2, 4096, 7, 3);
	struct pando_storage_map *raid1 = make_map(PANDO_RAID1, 3, 2, 0, 512, 1, 5);
	struct pando_location loc;
	size_t n;

	CHECK_EQ(pando_stripe_data_pieces(rs, PANDO_FILE_MAX, 1, pieces, MAX_PIECES, &n), -ERANGE);
	CHECK_EQ(pando_stripe_data_pieces(rs, 1, PANDO_FILE_MAX, pieces, MAX_PIECES, &n), -ERANGE);
	CHECK_EQ(pando_stripe_data_pieces(rs, 0, 0, pieces, MAX_PIECES, &n), 0);
	CHECK_EQ(n, 0);
	/* short array: filled up to cap, and told the full count */
	CHECK_EQ(pando_stripe_data_pieces(raid1, 0, 512 * 4, pieces, 5, &n), -ENOSPC);
	CHECK_EQ(n, 12);
	CHECK_EQ(pando_stripe_data_pieces(raid1, 0, 512 * 4, NULL, 0, &n), -ENOSPC);
	CHECK_EQ(n, 12);
	/* the last bytes a file can have still map, both ways */
	CHECK_EQ(pando_stripe_data_pieces(rs, PANDO_FILE_MAX - 10, 10, pieces, MAX_PIECES, &n), 0);
	CHECK_EQ(pando_stripe_locate(rs, pieces[n - 1].group, pieces[n - 1].component,
				     pieces[n - 1].object_offset + pieces[n - 1].length - 1, &loc),
		 0);
	CHECK(loc.file_offset == PANDO_FILE_MAX - 1);
	CHECK_EQ(pando_stripe_data_pieces(raid1, PANDO_FILE_MAX - 600, 600, pieces, MAX_PIECES, &n),
		 0);
	CHECK_EQ(n, 6);
	CHECK_EQ(pando_stripe_locate(rs, 3, 0, 0, &loc), -EINVAL);
	CHECK_EQ(pando_stripe_locate(rs, 0, 5, 0, &loc), -EINVAL);
	CHECK_EQ(pando_stripe_locate(rs, 0, 0, PANDO_FILE_MAX, &loc), -ERANGE);
	CHECK_EQ(pando_stripe_locate(rs, 2, 4, PANDO_FILE_MAX / 3 + 4096, &loc), -ERANGE);
	CHECK_EQ(pando_stripe_locate(raid1, 1, 0, 0, &loc), -ENOENT); /* group 0's byte */
	CHECK_EQ(pando_stripe_locate(raid1, 0, 1, 0, &loc), -ENOENT); /* column 0's byte */
	CHECK_EQ(pando_stripe_locate(raid1, 0, 2, 0, &loc), 0);       /* mirror 1, column 0 */
	CHECK_EQ(loc.copy, 1);
	CHECK_EQ(pando_stripe_segment(raid1, PANDO_FILE_MAX, &(struct pando_segment){ 0 }),
		 -ERANGE);
	pando_map_free(rs);
	pando_map_free(raid1);
}

int main(void)
{
	test_known_raid0();
	test_known_rs();
	test_random_ranges();
	test_bijection();
	test_rs_fixed_columns();
	test_segments();
	test_known_segments();
	test_limits();
	CHECK_DONE();
}
