/* The RS write hole's repair: a file marked as having rows updated
 * (ns_write_hole_add) when the manager stopped has its parity recomputed from
 * its data by the next start's recovery, before any client is served:
 * the mark goes, parity_resynced is set, and a read that must decode from
 * parity (a data OSD down) returns the file's bytes.  A file whose data
 * cannot all be read keeps its mark for later; a marked file that is no
 * longer on objects only loses its mark. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mds_fixture.h"
#include "objio.h"
#include "pando/policy.h"

#define NOSDS 4
#define SU 4096u
#define K 2
#define FILE_BYTES (3 * K * SU + 1000)

/* RS(2,1) in 4 KiB units, given the file as its directory would. */
static void rs_policy(struct mds_fixture *f, uint64_t ino)
{
	struct pando_policy pol = { .scheme = PANDO_RS, .k = K, .m = 1, .stripe_unit = SU };
	uint8_t buf[PANDO_POLICY_MAX_LEN];
	size_t len = 0;

	CHECK_EQ(pando_policy_encode(&pol, buf, sizeof(buf), &len), 0);
	CHECK_EQ(ns_policy_set(f->mds.ns, ino, buf, len), 0);
}

/* An RS file with want[] written through the gateway and its size set;
 * its map in *map. */
static uint64_t rs_file(struct mds_fixture *f, const uint8_t *want, struct pando_storage_map **map)
{
	struct ns_setattr sa = { .mask = NS_SET_SIZE | NS_SET_SIZE_GROW, .size = FILE_BYTES };
	struct ns_attr a;
	struct objio io;

	*map = NULL;
	CHECK_EQ(mds_fixture_create(f, "rs", &a), 0);
	rs_policy(f, a.ino);
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	CHECK_EQ(pando_objects_open(&f->mds, a.ino, &io, map), 0);
	if (!*map)
		return a.ino;
	CHECK_EQ((*map)->shape.raid, PANDO_RS);
	CHECK_EQ(objio_write(&io, *map, 0, want, FILE_BYTES, true), 0);
	CHECK_EQ(ns_setattr(f->mds.ns, a.ino, &sa, &a), 0);
	return a.ino;
}

/* Parity of row 0 no longer what data 0 and 1 give, as a manager killed
 * between a row's data and parity writes leaves it. */
static void break_parity(struct mds_fixture *f, const struct pando_storage_map *map)
{
	const struct pando_component *p = pando_map_component(map, 0, K);

	CHECK_EQ(osd_fixture_corrupt(&f->osds, p->osd_id, p->object_id, 10), 0);
}

/* The fixture's index of the OSD that holds data column 0. */
static int data_osd(const struct pando_storage_map *map)
{
	return (int)pando_map_component(map, 0, 0)->osd_id - 1;
}

static int count_ino(void *arg, uint64_t ino)
{
	(*(int *)arg)++;
	return 0;
}

static int marks(struct mds_fixture *f)
{
	int n = 0;

	CHECK_EQ(ns_write_hole_list(f->mds.ns, count_ino, &n), 0);
	return n;
}

static void reads_back(struct mds_fixture *f, uint64_t ino, const uint8_t *want)
{
	struct pando_storage_map *map = NULL;
	uint8_t *got = calloc(1, FILE_BYTES);
	struct objio io;
	size_t n = 0;

	CHECK_EQ(pando_objects_open(&f->mds, ino, &io, &map), 0);
	if (map && got) {
		CHECK_EQ(objio_read(&io, map, FILE_BYTES, 0, got, FILE_BYTES, &n), 0);
		CHECK_EQ(n, FILE_BYTES);
		CHECK_MEM(got, want, FILE_BYTES);
	}
	pando_map_free(map);
	free(got);
}

static void test_recovery_recomputes_a_marked_files_parity(void)
{
	struct pando_storage_map *map = NULL;
	uint8_t *want = malloc(FILE_BYTES);
	struct mds_fixture f;
	struct ns_attr gone;
	uint64_t ino;

	osd_fixture_fill(want, FILE_BYTES, 11);
	CHECK_EQ(mds_fixture_start(&f, NOSDS, NULL), 0);
	ino = rs_file(&f, want, &map);
	CHECK_EQ(ns_write_hole_add(f.mds.ns, ino), 0);
	/* A marked file that is not on objects: only its mark goes. */
	CHECK_EQ(mds_fixture_create(&f, "inline", &gone), 0);
	CHECK_EQ(ns_write_hole_add(f.mds.ns, gone.ino), 0);
	if (map)
		break_parity(&f, map);
	CHECK_EQ(mds_fixture_reopen(&f), 0);
	CHECK(!atomic_load(&f.mds.parity_resynced));
	mds_fixture_log_clear();
	pando_mds_recover(&f.mds);
	CHECK(atomic_load(&f.mds.parity_resynced));
	CHECK_EQ(marks(&f), 0);
	CHECK_EQ(mds_fixture_log_find("2 RS file(s) resynced, 0 left"), 1);
	if (map)
		CHECK_EQ(osd_fixture_stop(&f.osds, data_osd(map)), 0);
	reads_back(&f, ino, want);
	pando_map_free(map);
	free(want);
	mds_fixture_finish(&f, check_failures);
}

static void test_a_file_whose_data_cannot_be_read_keeps_its_mark(void)
{
	struct pando_storage_map *map = NULL;
	uint8_t *want = malloc(FILE_BYTES);
	struct mds_fixture f;
	uint64_t ino;
	int down = 0;

	osd_fixture_fill(want, FILE_BYTES, 12);
	CHECK_EQ(mds_fixture_start(&f, NOSDS, NULL), 0);
	ino = rs_file(&f, want, &map);
	CHECK_EQ(ns_write_hole_add(f.mds.ns, ino), 0);
	if (map) {
		break_parity(&f, map);
		down = data_osd(map);
	}
	CHECK_EQ(mds_fixture_reopen(&f), 0);
	CHECK_EQ(osd_fixture_stop(&f.osds, down), 0);
	mds_fixture_log_clear();
	pando_mds_recover(&f.mds);
	CHECK(atomic_load(&f.mds.parity_resynced));
	CHECK_EQ(marks(&f), 1);
	CHECK_EQ(mds_fixture_log_find("parity not recomputed"), 1);
	/* Back: the on-demand resync makes it right and drops the mark. */
	CHECK_EQ(osd_fixture_restart(&f.osds, down), 0);
	CHECK_EQ(osd_fixture_back_in_pool(f.mds.conns, (uint32_t)down + 1), 0);
	CHECK_EQ(pando_write_hole_resync(&f.mds, ino), 0);
	CHECK_EQ(marks(&f), 0);
	CHECK_EQ(osd_fixture_stop(&f.osds, down), 0);
	reads_back(&f, ino, want);
	pando_map_free(map);
	free(want);
	mds_fixture_finish(&f, check_failures);
}

int main(void)
{
	test_recovery_recomputes_a_marked_files_parity();
	test_a_file_whose_data_cannot_be_read_keeps_its_mark();
	CHECK_DONE();
}
