/* RS(4,2) gateway I/O against six real pando-osd processes: what is
 * written reads back, whole rows and partial ones, inside a unit and
 * across units and rows; parity always agrees with the data it covers;
 * reads survive one and two lost OSDs by decoding and fail cleanly with
 * three; writes with an OSD down leave a file that reads back right, and
 * fail when a row would be left with more than m components lost;
 * truncation zeroes what it cuts and keeps parity right; a resync makes
 * parity that disagrees with the data (a write hole) right again. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "io_check.h"
#include "objio.h"
#include "objio_internal.h"
#include "osd_fixture.h"
#include "osd_conns.h"
#include "pando/ec.h"

#define NOSDS 6
#define PART 9
#define K 4
#define M 2
#define SU 4096u
#define ROW (K * SU)
#define VISIT_ROWS 3
#define GROUPS 2
#define FILE_BYTES (7 * ROW + 1234)

static struct osd_fixture fx;
static uint8_t want[FILE_BYTES + ROW];
static struct io_model file = { .want = want, .cap = sizeof(want) };

/* Every row of every group: the parity on the OSDs is the encoding of the
 * data on the OSDs. */
static int parity_agrees(struct objio *io, const struct pando_storage_map *map,
			 const struct pando_ec *ec)
{
	static uint8_t unit[K + M][SU], enc[M][SU];
	const uint8_t *d[K];
	uint8_t *p[M];
	int bad = 0;

	for (uint64_t row = 0; row * ROW < file.size; row++) {
		struct pando_piece u[K + M];
		size_t n;

		CHECK_EQ(pando_stripe_data_pieces(map, row * ROW, ROW, u, K, &n), 0);
		CHECK_EQ(pando_stripe_parity_pieces(map, row * ROW, ROW, u + K, M, &n), 0);
		for (int i = 0; i < K + M; i++)
			bad += objio_read_component(io, map, u[i].group, u[i].component,
						    u[i].object_offset, unit[i], SU) != 0;
		for (int i = 0; i < K; i++)
			d[i] = unit[i];
		for (int i = 0; i < M; i++)
			p[i] = enc[i];
		CHECK_EQ(pando_ec_encode(ec, d, p, SU), 0);
		for (int i = 0; i < M; i++)
			bad += memcmp(enc[i], unit[K + i], SU) != 0;
	}
	return bad;
}

static void test_whole_and_partial_writes(struct objio *io, const struct pando_storage_map *map,
					  const struct pando_ec *ec)
{
	static const struct {
		uint64_t off, len;
	} w[] = {
		{ 100, 10 },                  /* inside one unit */
		{ SU - 5, 10 },               /* across two units of a row */
		{ ROW - 7, 20 },              /* across two rows */
		{ 2 * ROW, ROW },             /* one whole row */
		{ 3 * ROW + 1, 2 * ROW },     /* rows, unaligned */
		{ VISIT_ROWS * ROW - 9, 30 }, /* across groups (a visit's end) */
	};

	CHECK_EQ(io_model_write(io, &file, 0, FILE_BYTES, 1, true), 0);
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(parity_agrees(io, map, ec), 0);
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		CHECK_EQ(io_model_write(io, &file, w[i].off, w[i].len, 10 + (unsigned)i, true), 0);
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(parity_agrees(io, map, ec), 0);
	for (int i = 0; i < 40; i++) {
		uint64_t off = (uint64_t)rand() % FILE_BYTES,
			 len = 1 + (uint64_t)rand() % (2 * ROW);

		if (off + len > FILE_BYTES)
			len = FILE_BYTES - off;
		CHECK_EQ(io_model_write(io, &file, off, len, 100 + (unsigned)i, true), 0);
	}
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(parity_agrees(io, map, ec), 0);
}

/* Parity bytes changed behind the OSDs' backs, as a manager killed
 * between a row's data and parity writes leaves them: found, and made
 * right from the data. */
static void test_resync_repairs_a_write_hole(struct objio *io, const struct pando_storage_map *map,
					     const struct pando_ec *ec)
{
	const struct pando_component *p0 = pando_map_component(map, 0, K);
	const struct pando_component *p1 = pando_map_component(map, 1, K + 1);

	CHECK_EQ(osd_fixture_corrupt(&fx, p0->osd_id, p0->object_id, 10), 0);
	CHECK_EQ(osd_fixture_corrupt(&fx, p1->osd_id, p1->object_id, SU + 5), 0);
	CHECK(parity_agrees(io, map, ec) > 0);
	CHECK_EQ(objio_rs_resync(io, map, file.size), 0);
	CHECK_EQ(parity_agrees(io, map, ec), 0);
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
}

static void test_reads_decode_up_to_m_lost(struct objio *io, const struct pando_storage_map *map)
{
	static uint8_t got[FILE_BYTES];
	size_t n = 0;

	CHECK_EQ(osd_fixture_stop(&fx, 1), 0); /* OSD 2: a data unit of every row */
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(osd_fixture_stop(&fx, 2), 0); /* OSD 3: m lost */
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(osd_fixture_stop(&fx, 3), 0); /* OSD 4: one too many */
	CHECK_EQ(objio_read(io, map, file.size, 0, got, file.size, &n), -EIO);
	CHECK_EQ(osd_fixture_restart(&fx, 3), 0);
	CHECK_EQ(osd_fixture_back_in_pool(io->conns, 4), 0);
}

/* OSDs 2 and 3 down and recorded stale (skipped): writes still land and
 * read back; the next component lost makes the write fail. */
static void test_degraded_writes(struct objio *io, const struct pando_storage_map *map)
{
	/* OSD 4 is back and missed nothing: only 2 and 3 stay stale */
	io->skip[0] = 2;
	io->skip[1] = 3;
	io->nskip = 2;
	CHECK_EQ(io_model_write(io, &file, 5, 3 * SU, 500, true), 0);
	CHECK_EQ(io_model_write(io, &file, 4 * ROW, ROW, 501, true), 0);
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(osd_fixture_stop(&fx, 4), 0); /* OSD 5: a third one */
	CHECK_EQ(objio_write(io, map, 0, want, ROW, true), -EIO);
	CHECK_EQ(osd_fixture_restart(&fx, 4), 0);
}

static void test_truncate_zeroes_the_cut(struct objio *io, const struct pando_storage_map *map,
					 const struct pando_ec *ec)
{
	uint64_t cut = 5 * ROW + SU + 77;

	CHECK_EQ(io_model_truncate(io, &file, cut), 0);
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(parity_agrees(io, map, ec), 0);
	/* grown again past a hole: the cut bytes read as zeros */
	CHECK_EQ(io_model_write(io, &file, cut + 3 * SU, 100, 900, true), 0);
	CHECK_EQ(io_model_reads_back(io, &file, 0, file.size), 0);
	CHECK_EQ(parity_agrees(io, map, ec), 0);
}

static void run(struct objio *io)
{
	struct pando_storage_map *map =
		osd_fixture_rs_map(&fx, K, M, SU, VISIT_ROWS, GROUPS, NOSDS);
	struct pando_ec *ec = NULL;

	CHECK(map != NULL);
	CHECK_EQ(pando_ec_new(K, M, PANDO_EC_AUTO, &ec), 0);
	file.map = map;
	if (map && ec) {
		srand(7);
		CHECK_EQ(objio_create(io, map), 0);
		test_whole_and_partial_writes(io, map, ec);
		test_truncate_zeroes_the_cut(io, map, ec);
		test_resync_repairs_a_write_hole(io, map, ec);
		test_reads_decode_up_to_m_lost(io, map);
		test_degraded_writes(io, map);
	}
	pando_ec_free(ec);
	pando_map_free(map);
}

int main(void)
{
	static struct io_faults faults; /* recorded stale at once, as the manager does */
	struct objio io = { .owner = 77, .fault = io_faults_record, .fault_arg = &faults };

	faults.io = &io;
	CHECK_EQ(osd_fixture_start_io(&fx, NOSDS, PART, &io), 0);
	if (!check_failures)
		run(&io);
	CHECK_EQ(osd_fixture_finish_io(&fx, &io, check_failures), 0);
	CHECK_DONE();
}
