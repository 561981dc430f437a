/* Mirrored (RAID-1) gateway I/O against four real pando-osd processes,
 * on files of two copies (two columns, so stripe units alternate) and of
 * three, two groups each.  The fault callback records a failed component
 * stale as the metadata manager does (io_check.h).
 *
 * Every OSD up: what is written reads back byte for byte, at unaligned
 * offsets, across stripe units, rows and groups, and every mirror holds
 * it on its own; reads past the end come back short and holes read as
 * zeros; truncation cuts every mirror; removal drops every object and a
 * second removal is no error; an offset past the largest file fails the
 * call and marks nothing.
 *
 * Some OSDs stopped:
 *   - a read falls back to another mirror and reports the one that
 *     failed; it fails only when every mirror of a stripe unit is down;
 *   - a write a mirror missed succeeds only once that component is
 *     recorded stale, and leaves that mirror's old bytes as they were;
 *     it fails when the record cannot be made, when there is no fault
 *     callback, or when some stripe unit reached no mirror;
 *   - truncate and flush mark a down mirror stale the same way; removal
 *     fails while an OSD is down (the caller retries);
 *   - a flush after an OSD restarted says so (verf_changed), once;
 *   - a manager holding another cluster key, and objects never created,
 *     get errors, never a crash nor bytes. */
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_check.h"
#include "objio.h"
#include "objio_internal.h"
#include "osd_fixture.h"
#include "pando/stripe.h"

#define NOSDS 4
#define PART 11
#define SU 4096u
#define VISIT_ROWS 2
#define GROUPS 2
#define VISIT2 (VISIT_ROWS * 2 * SU) /* two columns */
#define FILE_BYTES (5 * VISIT2 + 1234)
#define CAP (8 * VISIT2)

/* Where the fixture puts the two-copy file's group 0 (component c on
 * OSD c + 1): column 0 on OSDs 1 and 3, column 1 on OSDs 2 and 4.  The
 * three-copy file's group 0 is on OSDs 1, 2, 3, its group 1 on 4, 1, 2. */
#define COL0_COPY0 1u
#define COL1_COPY0 2u
#define COL0_COPY1 3u
#define COL1_COPY1 4u

static struct osd_fixture fx;
static struct io_faults faults;

static struct pando_storage_map *mirror_map(uint8_t copies, uint8_t columns, uint64_t first)
{
	struct pando_map_shape shape = { .raid = PANDO_RAID1,
					 .copies = copies,
					 .data = columns,
					 .stripe_unit = SU,
					 .visit_rows = VISIT_ROWS };
	struct pando_storage_map *map = osd_fixture_map(&fx, &shape, GROUPS, NOSDS, first);

	CHECK(map != NULL);
	return map;
}

/* ---- every OSD up ----------------------------------------------------------------- */

static void check_every_copy_holds(struct objio *io, const struct io_model *m)
{
	for (uint32_t copy = 0; copy < m->map->shape.copies; copy++)
		CHECK_EQ(io_model_copy_holds(io, m, copy), 0);
}

/* Whole, then pieces that start and end off stripe-unit boundaries,
 * then random ones; read back in one read and in odd-sized ones. */
static void test_writes_read_back_byte_exact(struct objio *io, struct io_model *m)
{
	uint64_t visit = pando_shape_visit_bytes(&m->map->shape);
	const struct {
		uint64_t off, len;
	} w[] = {
		{ 100, 10 },                  /* inside one unit */
		{ SU - 5, 10 },               /* across two units */
		{ 2 * SU - 3, 2 * SU + 7 },   /* across rows */
		{ visit - 9, 30 },            /* across groups (a visit's end) */
		{ 3 * visit + 1, 2 * visit }, /* visits, unaligned */
	};

	CHECK_EQ(io_model_write(io, m, 0, FILE_BYTES, 1, true), 0);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		CHECK_EQ(io_model_write(io, m, w[i].off, w[i].len, 10 + (unsigned)i, i % 2), 0);
	for (int i = 0; i < 30; i++) {
		uint64_t off = (uint64_t)rand() % FILE_BYTES, len = 1 + (uint64_t)rand() % (3 * SU);

		CHECK_EQ(io_model_write(io, m, off, len, 100 + (unsigned)i, true), 0);
	}
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	CHECK_EQ(io_model_reads_back(io, m, 7, 777), 0);
	CHECK_EQ(io_model_reads_back(io, m, SU - 1, 3 * SU + 1), 0);
	check_every_copy_holds(io, m);
	CHECK_EQ(faults.n, 0);
}

static void test_reads_past_the_end_are_short(struct objio *io, struct io_model *m)
{
	static uint8_t got[2 * SU];
	uint64_t hole = 3 * SU + 11;
	size_t n = 99;

	CHECK_EQ(objio_read(io, m->map, m->size, m->size - 10, got, 100, &n), 0);
	CHECK_EQ(n, 10);
	CHECK_MEM(got, m->want + m->size - 10, 10);
	CHECK_EQ(objio_read(io, m->map, m->size, m->size, got, 100, &n), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(objio_read(io, m->map, m->size, m->size + SU, got, 100, &n), 0);
	CHECK_EQ(n, 0);
	/* grown past a hole: the hole reads as zeros */
	CHECK_EQ(io_model_write(io, m, m->size + hole, 200, 300, true), 0);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	check_every_copy_holds(io, m);
}

static void test_truncate_cuts_every_copy(struct objio *io, struct io_model *m)
{
	uint64_t old = m->size, cut = 2 * VISIT2 + SU + 77, len = 0;
	static uint8_t got[CAP];
	size_t n = 0;

	CHECK_EQ(objio_mirrored_length(io, m->map, &len), 0);
	CHECK_EQ(len, old);
	CHECK_EQ(io_model_truncate(io, m, cut), 0);
	CHECK_EQ(objio_mirrored_length(io, m->map, &len), 0);
	CHECK_EQ(len, cut);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	check_every_copy_holds(io, m);
	/* read as if the file were still long: the cut bytes are gone */
	CHECK_EQ(objio_read(io, m->map, old, 0, got, old, &n), 0);
	CHECK_EQ(n, old);
	CHECK_MEM(got, m->want, old);
	CHECK_EQ(io_model_write(io, m, cut + 5 * SU, 100, 400, true), 0);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	CHECK_EQ(faults.n, 0);
}

static void test_remove_drops_every_object(struct objio *io, struct io_model *m)
{
	static uint8_t got[SU];
	size_t n = 0;

	CHECK_EQ(objio_remove(io, m->map), 0);
	CHECK_EQ(objio_remove(io, m->map), 0); /* already gone: done */
	CHECK_EQ(faults.n, 0);
	CHECK_EQ(objio_read(io, m->map, m->size, 0, got, SU, &n), -EIO);
	CHECK(faults.n > 0);
	CHECK(io_faults_match(&faults, m->map));
	CHECK_EQ(faults.f[0].err, -ENOENT);
	io_faults_clear(&faults);
	/* made again, empty: reads as zeros */
	CHECK_EQ(objio_create(io, m->map), 0);
	CHECK_EQ(objio_read(io, m->map, SU, 0, got, SU, &n), 0);
	CHECK_EQ(n, SU);
	CHECK_EQ(got[0] | got[SU / 2] | got[SU - 1], 0);
}

static void test_an_offset_past_the_largest_file_marks_nothing(struct objio *io, struct io_model *m)
{
	static uint8_t buf[10];
	size_t n = 0;

	CHECK_EQ(objio_write(io, m->map, PANDO_FILE_MAX - 5, buf, sizeof(buf), true), -ERANGE);
	CHECK_EQ(objio_read(io, m->map, UINT64_MAX, PANDO_FILE_MAX - 5, buf, sizeof(buf), &n),
		 -ERANGE);
	CHECK_EQ(n, 0);
	CHECK_EQ(faults.n, 0);
	CHECK_EQ(io->nskip, 0);
}

/* ---- OSDs stopped ------------------------------------------------------------------ */

/* The file cut to nothing and written again: FILE_BYTES of known bytes. */
static void start_over(struct objio *io, struct io_model *m, unsigned seed)
{
	CHECK_EQ(io_model_truncate(io, m, 0), 0);
	CHECK_EQ(io_model_write(io, m, 0, FILE_BYTES, seed, true), 0);
}

static void down(uint32_t osd)
{
	CHECK_EQ(osd_fixture_stop(&fx, (int)osd - 1), 0);
}

/* Started again and answering through io's connection pool, and no
 * component stale any more: a test that wrote while it was down checks
 * what it missed, then heals it. */
static void up(struct objio *io, uint32_t osd)
{
	CHECK_EQ(osd_fixture_restart(&fx, (int)osd - 1), 0);
	CHECK_EQ(osd_fixture_back_in_pool(io->conns, osd), 0);
	io_faults_clear(&faults);
}

/* Every mirror given the model's bytes again, every OSD up. */
static void heal(struct objio *io, struct io_model *m)
{
	CHECK_EQ(io_model_write(io, m, 0, m->size, 7, true), 0);
	check_every_copy_holds(io, m);
	CHECK_EQ(faults.n, 0);
}

static void test_a_read_falls_back_to_another_mirror(struct objio *io, struct io_model *two,
						     struct io_model *three)
{
	down(COL0_COPY0);
	CHECK_EQ(io_model_reads_back(io, two, 0, two->size), 0);
	CHECK(faults.n > 0);
	CHECK_EQ(io_faults_on(&faults, COL0_COPY0, false), faults.n);
	CHECK(io_faults_match(&faults, two->map));
	CHECK(faults.f[0].err < 0);
	CHECK(io->nskip == 1 && io->skip[0] == COL0_COPY0);
	/* a read needs no record: one that cannot be made changes nothing */
	io_faults_clear(&faults);
	faults.answer = -EIO;
	CHECK_EQ(io_model_reads_back(io, three, 0, three->size), 0);
	CHECK(faults.n > 0 && io_faults_match(&faults, three->map));
	faults.answer = 0;
	/* three copies: any two of them down */
	down(COL1_COPY0);
	CHECK_EQ(io_model_reads_back(io, three, 0, three->size), 0);
	CHECK_EQ(io_model_reads_back(io, two, 0, two->size), 0);
	/* every mirror of a stripe unit down: the read fails */
	down(COL0_COPY1);
	CHECK_EQ(io_model_reads_back(io, three, 0, three->size), -EIO);
	CHECK_EQ(io_model_reads_back(io, two, 0, two->size), -EIO);
	up(io, COL0_COPY0);
	up(io, COL1_COPY0);
	up(io, COL0_COPY1);
	CHECK_EQ(faults.n, 0);
}

static void test_a_write_a_mirror_missed_records_it_stale(struct objio *io, struct io_model *m)
{
	static uint8_t old[CAP], got[500];
	uint64_t len = 0;

	memcpy(old, m->want, CAP);
	down(COL0_COPY1);
	CHECK_EQ(io_model_write(io, m, 100, 500, 20, true), 0); /* column 0, group 0 */
	CHECK_EQ(faults.n, 1);
	CHECK_EQ(io_faults_on(&faults, COL0_COPY1, true), 1);
	CHECK(faults.f[0].group == 0 && faults.f[0].component == 2);
	CHECK(io->nskip == 1 && io->skip[0] == COL0_COPY1);
	/* grown in group 0's column 0 (visit 6 is group 0's): only the
	 * current mirror says how long the file is */
	CHECK(6 * VISIT2 > m->size);
	CHECK_EQ(io_model_write(io, m, 6 * VISIT2 + 100, 500, 21, true), 0);
	CHECK_EQ(objio_mirrored_length(io, m->map, &len), 0);
	CHECK_EQ(len, m->size);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	CHECK_EQ(io_model_copy_holds(io, m, 0), 0);
	up(io, COL0_COPY1);
	/* the stale mirror was not written: its old bytes are still there */
	CHECK_EQ(io_model_copy_holds(io, m, 1), -EBADMSG);
	CHECK_EQ(objio_read_component(io, m->map, 0, 2, 100, got, sizeof(got)), 0);
	CHECK_MEM(got, old + 100, sizeof(got));
	heal(io, m);
}

static void test_a_write_no_mirror_took_fails(struct objio *io, struct io_model *m)
{
	down(COL0_COPY0);
	down(COL0_COPY1);
	CHECK_EQ(io_model_write(io, m, 100, 500, 30, true), -EIO);
	CHECK_EQ(io_faults_on(&faults, COL0_COPY0, true), 1);
	CHECK_EQ(io_faults_on(&faults, COL0_COPY1, true), 1);
	/* one unit reached (column 1), the other not: fails all the same */
	CHECK_EQ(io_model_write(io, m, SU - 5, 10, 31, true), -EIO);
	up(io, COL0_COPY0);
	up(io, COL0_COPY1);
	heal(io, m);
}

static void test_a_missed_write_fails_unless_recorded(struct objio *io, struct io_model *m)
{
	down(COL0_COPY1);
	faults.answer = -EIO;
	CHECK_EQ(io_model_write(io, m, 100, 500, 40, true), -EIO);
	CHECK_EQ(io_faults_on(&faults, COL0_COPY1, true), 1);
	CHECK_EQ(io->nskip, 0);
	faults.answer = 0;
	io->fault = NULL;
	CHECK_EQ(io_model_write(io, m, 100, 500, 41, true), -EIO);
	io->fault = io_faults_record;
	up(io, COL0_COPY1);
	heal(io, m);
}

static void test_a_flush_tells_of_a_restart_once(struct objio *io, struct io_model *m)
{
	io->verf_changed = false;
	CHECK_EQ(io_model_write(io, m, 0, 2 * SU, 50, false), 0);
	CHECK_EQ(objio_flush(io, m->map), 0);
	CHECK_EQ(io->verf_changed, false);
	down(COL1_COPY0);
	up(io, COL1_COPY0);
	CHECK_EQ(objio_flush(io, m->map), 0);
	CHECK_EQ(io->verf_changed, true);
	io->verf_changed = false;
	CHECK_EQ(objio_flush(io, m->map), 0);
	CHECK_EQ(io->verf_changed, false);
	/* a write learns it as well */
	down(COL1_COPY1);
	up(io, COL1_COPY1);
	CHECK_EQ(io_model_write(io, m, SU, 10, 51, true), 0);
	CHECK_EQ(io->verf_changed, true);
	io->verf_changed = false;
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	CHECK_EQ(faults.n, 0);
}

static void test_truncate_and_flush_mark_a_down_mirror_stale(struct objio *io, struct io_model *m)
{
	down(COL1_COPY1);
	CHECK_EQ(io_model_truncate(io, m, m->size - SU - 3), 0);
	CHECK(faults.n > 0 && io_faults_on(&faults, COL1_COPY1, true) == faults.n);
	CHECK(io_faults_match(&faults, m->map));
	CHECK(io->nskip == 1 && io->skip[0] == COL1_COPY1);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	io_faults_clear(&faults);
	CHECK_EQ(objio_flush(io, m->map), 0);
	CHECK_EQ(io_faults_on(&faults, COL1_COPY1, true), 1);
	/* both mirrors of column 1 down */
	down(COL1_COPY0);
	io_faults_clear(&faults);
	CHECK_EQ(io_model_truncate(io, m, m->size - 10), -EIO);
	io_faults_clear(&faults);
	CHECK_EQ(objio_flush(io, m->map), -EIO);
	CHECK(io_faults_on(&faults, COL1_COPY0, true) > 0);
	up(io, COL1_COPY0);
	up(io, COL1_COPY1);
	heal(io, m);
}

static void test_remove_fails_while_an_osd_is_down(struct objio *io)
{
	struct pando_storage_map *map = mirror_map(2, 1, 500);

	if (!map)
		return;
	CHECK_EQ(objio_create(io, map), 0);
	down(2); /* its group 0's second copy */
	CHECK(objio_remove(io, map) < 0);
	up(io, 2);
	CHECK_EQ(objio_remove(io, map), 0);
	pando_map_free(map);
}

/* A pool whose cluster key is not the OSDs': refused at every call. */
static void test_another_cluster_key_is_refused(struct objio *io, struct io_model *m)
{
	static uint8_t got[SU];
	struct osd_conns_options opt = { .conns_per_osd = 1,
					 .timeout_ms = 5000,
					 .backoff_ms = 100 };
	struct cluster_key other = fx.key;
	struct io_faults seen = { 0 };
	struct objio forged = { .owner = 42, .fault = io_faults_record, .fault_arg = &seen };
	size_t n = 99;

	other.secret[0] ^= 1;
	seen.io = &forged;
	CHECK_EQ(osd_conns_new(&other, &fx.map, &opt, &forged.conns), 0);
	if (!forged.conns)
		return;
	CHECK_EQ(objio_read(&forged, m->map, m->size, 0, got, SU, &n), -EIO);
	CHECK_EQ(n, 0);
	CHECK(seen.n > 0 && seen.f[0].err == -EACCES);
	CHECK(io_faults_match(&seen, m->map));
	io_faults_clear(&seen);
	CHECK_EQ(io_model_write(&forged, m, 0, SU, 60, true), -EIO);
	CHECK(objio_create(&forged, m->map) < 0);
	osd_conns_free(forged.conns);
	CHECK_EQ(io_model_reads_back(io, m, 0, m->size), 0);
	CHECK_EQ(faults.n, 0);
}

static void test_objects_never_created_give_errors(struct objio *io)
{
	static uint8_t buf[SU];
	struct pando_storage_map *map = mirror_map(2, 2, 900);
	uint64_t len = 0;
	size_t n = 99;

	if (!map)
		return;
	CHECK_EQ(objio_read(io, map, SU, 0, buf, SU, &n), -EIO);
	CHECK_EQ(n, 0);
	CHECK(faults.n > 0 && faults.f[0].err == -ENOENT && io_faults_match(&faults, map));
	io_faults_clear(&faults);
	CHECK_EQ(objio_write(io, map, 0, buf, SU, true), -EIO);
	io_faults_clear(&faults);
	CHECK_EQ(objio_mirrored_length(io, map, &len), -ENOENT);
	CHECK_EQ(objio_remove(io, map), 0);
	map->partition_id = PART + 1; /* a partition no OSD has: done too */
	CHECK_EQ(objio_remove(io, map), 0);
	io_faults_clear(&faults);
	pando_map_free(map);
}

static void run(struct objio *io)
{
	static uint8_t want2[CAP], want3[CAP];
	struct pando_storage_map *map2 = mirror_map(2, 2, 200), *map3 = mirror_map(3, 1, 300);
	struct io_model two = { .map = map2, .want = want2, .cap = CAP };
	struct io_model three = { .map = map3, .want = want3, .cap = CAP };

	if (map2 && map3) {
		srand(11);
		CHECK_EQ(objio_create(io, map2), 0);
		CHECK_EQ(objio_create(io, map3), 0);
		test_writes_read_back_byte_exact(io, &two);
		test_writes_read_back_byte_exact(io, &three);
		test_reads_past_the_end_are_short(io, &two);
		test_reads_past_the_end_are_short(io, &three);
		test_truncate_cuts_every_copy(io, &two);
		test_truncate_cuts_every_copy(io, &three);
		test_an_offset_past_the_largest_file_marks_nothing(io, &two);
		start_over(io, &two, 1);
		start_over(io, &three, 2);
		test_a_read_falls_back_to_another_mirror(io, &two, &three);
		test_a_write_a_mirror_missed_records_it_stale(io, &two);
		test_a_write_no_mirror_took_fails(io, &two);
		test_a_missed_write_fails_unless_recorded(io, &two);
		test_a_flush_tells_of_a_restart_once(io, &two);
		test_truncate_and_flush_mark_a_down_mirror_stale(io, &two);
		test_remove_drops_every_object(io, &three);
		test_remove_fails_while_an_osd_is_down(io);
		test_another_cluster_key_is_refused(io, &two);
		test_objects_never_created_give_errors(io);
	}
	pando_map_free(map2);
	pando_map_free(map3);
}

int main(void)
{
	struct objio io = { .owner = 42, .fault = io_faults_record, .fault_arg = &faults };

	faults.io = &io;
	CHECK_EQ(osd_fixture_start_io(&fx, NOSDS, PART, &io), 0);
	if (!check_failures)
		run(&io);
	CHECK_EQ(osd_fixture_finish_io(&fx, &io, check_failures), 0);
	CHECK_DONE();
}
