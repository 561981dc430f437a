/* A pNFS writer's bytes past the file's size: settled from the objects.
 * The size grows to what every mirror holds, once; off the caller's thread
 * the host's worker runs it and the host's cache is told; a host that
 * refuses the job leaves it for the next start, said in the log.  A
 * manager that stopped with a write layout out fences the file's objects
 * and settles its size before it serves (pando_mds_recover). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mds_fixture.h"
#include "objio.h"

/* A regular file on objects, with len bytes written to them behind the
 * store's back, as a client with a layout writes. */
static uint64_t file_written_past_size(struct mds_fixture *f, const char *name, size_t len)
{
	struct pando_storage_map *map = NULL;
	struct ns_attr a;
	struct objio io;
	uint8_t *buf = malloc(len);

	osd_fixture_fill(buf, len, 7);
	CHECK_EQ(mds_fixture_create(f, name, &a), 0);
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	CHECK_EQ(pando_objects_open(&f->mds, a.ino, &io, &map), 0);
	if (map)
		CHECK_EQ(objio_write(&io, map, 0, buf, len, true), 0);
	pando_map_free(map);
	free(buf);
	return a.ino;
}

static uint64_t size_of(struct mds_fixture *f, uint64_t ino)
{
	struct ns_attr a = { 0 };

	CHECK_EQ(ns_getattr(f->mds.ns, ino, &a), 0);
	return a.size;
}

static void test_size_grows_to_the_objects_once(void)
{
	struct mds_fixture f;
	struct ns_attr before;
	bool grew = false;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	ino = file_written_past_size(&f, "a", 300000);
	CHECK_EQ(size_of(&f, ino), 0);
	CHECK_EQ(pando_settle_size(&f.mds, ino, "test", &grew, &before), 0);
	CHECK(grew);
	CHECK_EQ(before.size, 0);
	CHECK_EQ(size_of(&f, ino), 300000);
	CHECK_EQ(pando_settle_size(&f.mds, ino, "test", &grew, &before), 0);
	CHECK(!grew);
	mds_fixture_finish(&f, check_failures);
}

static void test_async_runs_on_a_host_worker_and_invalidates(void)
{
	struct mds_fixture f;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	ino = file_written_past_size(&f, "b", 5000);
	pando_settle_size_async(&f.mds, ino);
	CHECK(fake_host_wait(&f.host, &f.host.jobs_run, 1, 10000));
	CHECK_EQ(f.host.invalidations, 1);
	CHECK_EQ(f.host.last_invalidated_ino, ino);
	CHECK_EQ(size_of(&f, ino), 5000);
	mds_fixture_finish(&f, check_failures);
}

static void test_a_refused_job_is_left_for_the_next_start(void)
{
	struct mds_fixture f;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	ino = file_written_past_size(&f, "c", 5000);
	f.host.refuse_jobs = true;
	mds_fixture_log_clear();
	pando_settle_size_async(&f.mds, ino);
	CHECK_EQ(mds_fixture_log_find("size check left for the next start"), 1);
	CHECK_EQ(f.host.jobs_run, 0);
	CHECK_EQ(size_of(&f, ino), 0);
	mds_fixture_finish(&f, check_failures);
}

static int count_ino(void *arg, uint64_t ino)
{
	(*(int *)arg)++;
	return 0;
}

static void test_restart_fences_and_settles_marked_files(void)
{
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	uint32_t ver_before = 0, ver_after = 0;
	int marked = 0;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	ino = file_written_past_size(&f, "d", 70000);
	CHECK_EQ(ns_wlayout_add(f.mds.ns, ino), 0);
	CHECK_EQ(pando_map_load(&f.mds, ino, &map), 0);
	CHECK_EQ(pando_objects_cap_version(&f.mds, map, &ver_before), 0);
	pando_map_free(map);
	CHECK_EQ(mds_fixture_reopen(&f), 0);
	pando_mds_recover(&f.mds);
	CHECK_EQ(size_of(&f, ino), 70000);
	CHECK_EQ(pando_map_load(&f.mds, ino, &map), 0);
	CHECK_EQ(pando_objects_cap_version(&f.mds, map, &ver_after), 0);
	pando_map_free(map);
	CHECK(ver_after > ver_before);
	CHECK_EQ(ns_wlayout_list(f.mds.ns, count_ino, &marked), 0);
	CHECK_EQ(marked, 0);
	mds_fixture_finish(&f, check_failures);
}

int main(void)
{
	test_size_grows_to_the_objects_once();
	test_async_runs_on_a_host_worker_and_invalidates();
	test_a_refused_job_is_left_for_the_next_start();
	test_restart_fences_and_settles_marked_files();
	CHECK_DONE();
}
