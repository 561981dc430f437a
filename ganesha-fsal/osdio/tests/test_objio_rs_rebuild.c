/* Rebuild of RS(4,2) components against seven real pando-osd processes
 * (six hold a two-group file, the seventh is the spare): every component
 * of both groups, data and parity, decoded onto a fresh object while one
 * other component of its group is lost too, comes out byte for byte as
 * it was, in one pass or in pieces cut mid-unit; the file then reads
 * back through the rebuilt object with two others lost; a third loss
 * fails cleanly; an OSD that dies unannounced is read around. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "objio.h"
#include "objio_internal.h"
#include "objio_rs_rebuild.h"
#include "osd_fixture.h"
#include "osd_conns.h"

#define NOSDS 7
#define SPARE 7
#define PART 9
#define K 4
#define M 2
#define W (K + M)
#define SU 4096u
#define ROW (K * SU)
#define VISIT_ROWS 3
#define GROUPS 2
#define FILE_BYTES (17 * ROW + 1234)
#define BUF_ROWS 2

static struct osd_fixture fx;
static uint8_t want[FILE_BYTES];

static void skip_only(struct objio *io, uint32_t a, uint32_t b)
{
	io->skip[0] = a;
	io->skip[1] = b;
	io->nskip = b ? 2 : a ? 1 : 0;
}

static uint32_t osd_of(const struct pando_storage_map *map, uint32_t g, uint32_t c)
{
	return pando_map_component(map, g, c)->osd_id;
}

/* Rebuilds (g, c) onto dst in pieces of `step` object bytes (0: one call). */
static int rebuild(struct objio *io, const struct pando_storage_map *map, uint32_t g, uint32_t c,
		   const struct pando_component *dst, uint64_t step, uint64_t *bytes)
{
	static uint8_t buf[BUF_ROWS * W * SU + 100];
	uint64_t len = objio_rs_component_length(map, g, c, FILE_BYTES), done = 0;
	int rc = 0;

	*bytes = 0;
	for (uint64_t off = 0; !rc && off < len; off += step ? step : len) {
		uint64_t n = step && len - off > step ? step : len - off;

		rc = objio_rs_rebuild_component(io, map, g, c, dst, FILE_BYTES, off, n, buf,
						sizeof(buf), &done);
		*bytes += done;
	}
	return rc ? rc : objio_component_settle(io, PART, dst, len);
}

/* Component (g, c) of map a and of map b hold the same bytes up to len. */
static int same_component(struct objio *io, const struct pando_storage_map *a,
			  const struct pando_storage_map *b, uint32_t g, uint32_t c, uint64_t len)
{
	static uint8_t x[FILE_BYTES + ROW], y[FILE_BYTES + ROW];
	int rc = objio_read_component(io, a, g, c, 0, x, len);

	if (!rc)
		rc = objio_read_component(io, b, g, c, 0, y, len);
	return rc ? rc : memcmp(x, y, len) ? -EBADMSG : 0;
}

static int reads_back(struct objio *io, const struct pando_storage_map *map)
{
	static uint8_t got[FILE_BYTES];
	size_t n = 0;
	int rc = objio_read(io, map, FILE_BYTES, 0, got, FILE_BYTES, &n);

	return rc ? rc : n != FILE_BYTES || memcmp(got, want, n) ? -EBADMSG : 0;
}

static void rebuild_one(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			uint32_t c, uint64_t step)
{
	uint32_t width = W, other = (c + 1) % W, third = (c + 2) % W;
	struct pando_component dst = { SPARE, 1000 + step + g * W + c };
	struct pando_storage_map *next = NULL;
	uint64_t len = objio_rs_component_length(map, g, c, FILE_BYTES), bytes = 0;

	CHECK_EQ(objio_component_create(io, PART, &dst, g * width + c, OBJIO_CAP_VERSION_NEW), 0);
	/* c itself and one more of its group lost: m in all */
	skip_only(io, osd_of(map, g, c), osd_of(map, g, other));
	CHECK_EQ(rebuild(io, map, g, c, &dst, step, &bytes), 0);
	CHECK(bytes > 0 && bytes <= len);
	CHECK_EQ(pando_map_copy(map, &next), 0);
	if (!next)
		return;
	CHECK_EQ(pando_map_replace_component(next, g, c, dst.osd_id, dst.object_id), 0);
	skip_only(io, 0, 0);
	CHECK_EQ(same_component(io, map, next, g, c, len + SU), 0);
	/* the rebuilt one is needed: two others of its group lost */
	skip_only(io, osd_of(map, g, other), osd_of(map, g, third));
	CHECK_EQ(reads_back(io, next), 0);
	pando_map_free(next);
	skip_only(io, 0, 0);
}

static void test_every_component_rebuilt(struct objio *io, const struct pando_storage_map *map)
{
	for (uint32_t g = 0; g < GROUPS; g++)
		for (uint32_t c = 0; c < W; c++)
			rebuild_one(io, map, g, c, 0);
	/* pieces cut mid-unit and mid-row: batches of differently cut rows */
	for (uint32_t c = 0; c < W; c++)
		rebuild_one(io, map, 1, c, c < K ? ROW + 777 : SU + 555);
}

static void test_three_lost_fails(struct objio *io, const struct pando_storage_map *map)
{
	static uint8_t buf[W * SU];
	struct pando_component dst = { SPARE, 2000 };
	uint64_t done = 0;

	CHECK_EQ(objio_component_create(io, PART, &dst, 0, OBJIO_CAP_VERSION_NEW), 0);
	skip_only(io, osd_of(map, 0, 1), osd_of(map, 0, 2));
	CHECK_EQ(objio_rs_rebuild_component(io, map, 0, 0, &dst, FILE_BYTES, 0, FILE_BYTES, buf,
					    sizeof(buf), &done),
		 -EIO);
	CHECK_EQ(objio_rs_rebuild_component(io, map, 0, 0, &dst, FILE_BYTES, 0, FILE_BYTES, buf,
					    W * SU - 1, &done),
		 -EINVAL);
	skip_only(io, 0, 0);
}

/* Its OSD stopped, not skipped: the read fails and another component is
 * read instead. */
static void test_a_dead_osd_is_read_around(struct objio *io, const struct pando_storage_map *map)
{
	struct pando_component dst = { SPARE, 3000 };
	struct pando_storage_map *next = NULL;
	uint64_t len = objio_rs_component_length(map, 0, 0, FILE_BYTES), bytes = 0;

	CHECK_EQ(objio_component_create(io, PART, &dst, 0, OBJIO_CAP_VERSION_NEW), 0);
	CHECK_EQ(osd_fixture_stop(&fx, (int)osd_of(map, 0, 2) - 1), 0);
	skip_only(io, osd_of(map, 0, 0), 0);
	CHECK_EQ(rebuild(io, map, 0, 0, &dst, 0, &bytes), 0);
	CHECK_EQ(pando_map_copy(map, &next), 0);
	if (!next)
		return;
	CHECK_EQ(pando_map_replace_component(next, 0, 0, dst.osd_id, dst.object_id), 0);
	skip_only(io, 0, 0);
	CHECK_EQ(same_component(io, map, next, 0, 0, len + SU), 0);
	pando_map_free(next);
}

static int record(void *arg, uint64_t owner, uint32_t g, uint32_t c, uint32_t osd, int err,
		  bool write)
{
	(void)arg, (void)owner, (void)g, (void)c, (void)osd, (void)err, (void)write;
	return 0;
}

static void run(struct objio *io)
{
	struct pando_storage_map *map =
		osd_fixture_rs_map(&fx, K, M, SU, VISIT_ROWS, GROUPS, NOSDS - 1);

	CHECK(map != NULL);
	if (!map)
		return;
	CHECK_EQ(objio_create(io, map), 0);
	osd_fixture_fill(want, FILE_BYTES, 3);
	CHECK_EQ(objio_write(io, map, 0, want, FILE_BYTES, true), 0);
	test_every_component_rebuilt(io, map);
	test_three_lost_fails(io, map);
	test_a_dead_osd_is_read_around(io, map);
	pando_map_free(map);
}

int main(void)
{
	struct objio io = { .owner = 77, .fault = record };

	CHECK_EQ(osd_fixture_start_io(&fx, NOSDS, PART, &io), 0);
	if (!check_failures)
		run(&io);
	CHECK_EQ(osd_fixture_finish_io(&fx, &io, check_failures), 0);
	CHECK_DONE();
}
