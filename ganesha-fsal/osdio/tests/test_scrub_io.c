/* objio_scrub against three real pando-osd processes on loopback (the
 * build's own, started here on ports the kernel picks): a clean file scrubs
 * clean; a byte flipped behind an OSD's back is found in exactly its
 * extent and repaired from the other mirror; a write one mirror missed is
 * repaired from the current mirror when the other is recorded stale, and
 * left alone as unrepairable when neither is; RAID-0 verifies only; a
 * mirror whose OSD is down is counted unreachable, not bad. */
#include "check.h"

#include <errno.h>
#include <string.h>

#include "objio.h"
#include "osd_fixture.h"
#include "osd_conns.h"
#include "scrub_io.h"

#define NOSDS 3
#define EXT OBJIO_SCRUB_EXTENT
#define PART 7
#define SIZE (17 * EXT + 100)

static struct osd_fixture fx;
static uint8_t data[SIZE];

static int stop_osd(int i)
{
	return osd_fixture_stop(&fx, i);
}

static int corrupt(uint32_t osd, uint64_t object, uint64_t off)
{
	return osd_fixture_corrupt(&fx, osd, object, off);
}

/* ---- what the scrub reports ------------------------------------------------------ */

#define MAX_SEEN 16

struct seen {
	size_t n;
	struct objio_scrub_problem p[MAX_SEEN];
};

static void remember(void *arg, const struct objio_scrub_problem *p)
{
	struct seen *s = arg;

	if (s->n < MAX_SEEN)
		s->p[s->n] = *p;
	s->n++;
}

static int scrub(struct objio *io, const struct pando_storage_map *map, uint64_t size,
		 struct objio_scrub_result *res, struct seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	memset(res, 0, sizeof(*res));
	res->report = remember;
	res->report_arg = seen;
	return objio_scrub(io, map, size, res);
}

static struct pando_storage_map *make_map(uint8_t raid, uint8_t copies, const uint32_t *osd,
					  uint64_t object)
{
	struct pando_map_shape shape = { .raid = raid,
					 .copies = copies,
					 .data = 1,
					 .stripe_unit = 1u << 20,
					 .visit_rows = 1024 };
	struct pando_storage_map *m = NULL;

	CHECK_EQ(pando_map_new(&shape, 1, 0, &m), 0);
	if (!m)
		return NULL;
	m->partition_id = PART;
	for (uint32_t c = 0; c < copies; c++)
		*pando_map_component(m, 0, c) = (struct pando_component){ osd[c], object };
	return m;
}

/* ---- tests ------------------------------------------------------------------------- */

static void check_reads_back(struct objio *io, const struct pando_storage_map *map)
{
	static uint8_t got[SIZE];
	size_t n = 0;

	memset(got, 0, sizeof(got));
	CHECK_EQ(objio_read(io, map, SIZE, 0, got, SIZE, &n), 0);
	CHECK_EQ(n, SIZE);
	CHECK_MEM(got, data, SIZE);
}

static void test_clean_then_rot_repaired(struct objio *io, const struct pando_storage_map *map)
{
	struct objio_scrub_result r;
	struct seen seen;

	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.extents_checked, 18);
	CHECK_EQ(r.bytes_read, 2 * SIZE);
	CHECK_EQ(r.mismatches + r.unreachable + seen.n, 0);

	CHECK_EQ(corrupt(2, 1, 5 * EXT + 777), 0);
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 1);
	CHECK_EQ(r.repaired, 1);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.p[0].osd_id, 2);
	CHECK_EQ(seen.p[0].copy, 1);
	CHECK_EQ(seen.p[0].extent, 5);
	CHECK_EQ(seen.p[0].what, OBJIO_SCRUB_MISMATCH);
	CHECK_EQ(seen.p[0].outcome, OBJIO_SCRUB_REPAIRED);
	CHECK_EQ(seen.p[0].source_osd, 1);
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 0);
	io->skip[0] = 1; /* read mirror 2 alone: it holds the data again */
	io->nskip = 1;
	check_reads_back(io, map);
	io->nskip = 0;
}

/* Mirror 1 misses a write that mirror 2 took: both verify, CRCs differ. */
static void test_missed_write(struct objio *io, struct pando_storage_map *map)
{
	struct osd_ctl_obj_id id = { PART, 1 };
	struct objio_scrub_result r;
	struct seen seen;
	struct osd_ctl_client *c;
	int err = 0;

	memset(data + 3 * EXT + 10, 'n', 300);
	c = osd_conns_get(io->conns, 2, &err);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ(osd_ctl_write(c, &id, 3 * EXT + 10, data + 3 * EXT + 10, 300, OSD_CTL_FILE_SYNC,
			       NULL),
		 0);
	/* neither recorded stale: nothing tells which is right */
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 1);
	CHECK_EQ(r.unrepairable, 1);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.p[0].what, OBJIO_SCRUB_DIVERGED);
	CHECK_EQ(seen.p[0].outcome, OBJIO_SCRUB_UNREPAIRABLE);
	CHECK_EQ(seen.p[0].extent, 3);
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0); /* nothing was changed */
	CHECK_EQ(r.unrepairable, 1);
	/* mirror 1 recorded stale: repaired from mirror 2 */
	io->skip[0] = 1;
	io->nskip = 1;
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.repaired, 1);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.p[0].osd_id, 1);
	CHECK_EQ(seen.p[0].source_osd, 2);
	io->nskip = 0;
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 0);
	check_reads_back(io, map);
}

static void test_raid0_verifies_only(struct objio *io)
{
	static const uint32_t on[1] = { 3 };
	struct pando_storage_map *m = make_map(PANDO_RAID0, 1, on, 2);
	struct objio_scrub_result r;
	struct seen seen;

	if (!m)
		return;
	CHECK_EQ(objio_create(io, m), 0);
	CHECK_EQ(objio_write(io, m, 0, data, SIZE, true), 0);
	CHECK_EQ(corrupt(3, 2, 16 * EXT + 1), 0);
	CHECK_EQ(scrub(io, m, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 1);
	CHECK_EQ(r.unrepairable, 1);
	CHECK_EQ(seen.n == 1 && seen.p[0].extent == 16, 1);
	pando_map_free(m);
}

static void test_down_mirror_is_unreachable(struct objio *io, const struct pando_storage_map *map)
{
	struct objio_scrub_result r;
	struct seen seen;

	CHECK_EQ(stop_osd(1), 0); /* OSD 2: exits 0 on SIGTERM */
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 0);
	CHECK_EQ(r.unreachable, 18);
	CHECK_EQ(seen.n == 1 && seen.p[0].what == OBJIO_SCRUB_UNREACHABLE, 1);
	CHECK_EQ(r.extents_checked, 18); /* mirror 1 still was */
}

static void run(struct objio *io)
{
	static const uint32_t mirrors[2] = { 1, 2 };
	struct pando_storage_map *map = make_map(PANDO_RAID1, 2, mirrors, 1);

	if (!map)
		return;
	for (size_t i = 0; i < SIZE; i++)
		data[i] = (uint8_t)(i * 31 + (i >> 12));
	CHECK_EQ(objio_create(io, map), 0);
	CHECK_EQ(objio_write(io, map, 0, data, SIZE, true), 0);
	test_clean_then_rot_repaired(io, map);
	test_missed_write(io, map);
	test_raid0_verifies_only(io);
	test_down_mirror_is_unreachable(io, map);
	pando_map_free(map);
}

int main(void)
{
	struct objio io = { .owner = 99 };

	CHECK_EQ(osd_fixture_start_io(&fx, NOSDS, PART, &io), 0);
	if (!check_failures)
		run(&io);
	CHECK_EQ(osd_fixture_finish_io(&fx, &io, check_failures), 0);
	CHECK_DONE();
}
