/* The scrub (../../README.md, "Scrub"), passes asked for as dbus asks:
 * an extent whose bytes rotted behind its OSD is rewritten from the good
 * mirror, once; two mirrors that both verify but differ are reported,
 * nothing guessed; a pass reads no faster than Scrub_Bandwidth_Mb; a file
 * with writers at work is left for the next pass, and a file a client
 * asks to write is given back at once and scrubbed whole next time. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grants.h"
#include "mds_fixture.h"
#include "objio.h"
#include "scrub.h"
#include "scrub_io.h"

#define EXTENT OBJIO_SCRUB_EXTENT
#define MIB (1u << 20)

/* One pass's counters, as scrub_status gives them. */
struct pass {
	json_int_t pass, files_done, bytes_done, mismatches, repaired, unrepairable, yielded;
	double started, ended;
	int running;
};

static bool progress(struct mds_fixture *f, struct pass *p)
{
	char *text = pando_scrub_progress(f->mds.scrub);
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;
	int rc = o ? json_unpack(o, "{sb sI sI sI sI sI sI sI sf sf}", "running", &p->running,
				 "pass", &p->pass, "files_done", &p->files_done, "bytes_done",
				 &p->bytes_done, "mismatches", &p->mismatches, "repaired",
				 &p->repaired, "unrepairable", &p->unrepairable, "yielded",
				 &p->yielded, "started", &p->started, "last_pass_end", &p->ended)
		   : -1;

	json_decref(o);
	free(text);
	return rc == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Waits for pass n to have ended (the thread looks at requests each
 * second, so a pass asked for is not running at once). */
static bool pass_done(struct mds_fixture *f, json_int_t n, struct pass *p)
{
	for (int i = 0; i < 600; i++) {
		if (progress(f, p) && p->pass >= n && !p->running)
			return true;
		sleep_ms(100);
	}
	return false;
}

/* Asks for a pass and waits for it to end. */
static bool scrub_pass(struct mds_fixture *f, struct pass *p)
{
	struct pass before;

	if (!progress(f, &before))
		return false;
	pando_scrub_request(f->mds.scrub, true);
	return pass_done(f, before.pass + 1, p);
}

/* A file on objects, mirrored as the export's default, with len bytes of
 * seed.  With stride 2 only every other 64 KiB extent is written: the
 * holes cut the OSDs' verifies into one-extent runs, so the scrub paces
 * (and looks for writers) every 128 KiB of reads. */
static uint64_t file_on_objects(struct mds_fixture *f, const char *name, uint8_t *buf, size_t len,
				unsigned seed, int stride)
{
	struct pando_storage_map *map = NULL;
	struct ns_setattr sa = { .mask = NS_SET_SIZE, .size = len };
	struct ns_attr a;
	struct objio io;

	osd_fixture_fill(buf, len, seed);
	CHECK_EQ(mds_fixture_create(f, name, &a), 0);
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	CHECK_EQ(pando_objects_open(&f->mds, a.ino, &io, &map), 0);
	for (size_t off = 0; map && off < len; off += (size_t)stride * EXTENT) {
		size_t n = len - off < EXTENT ? len - off : EXTENT;

		CHECK_EQ(objio_write(&io, map, off, buf + off, n, true), 0);
	}
	pando_map_free(map);
	CHECK_EQ(ns_setattr(f->mds.ns, a.ino, &sa, NULL), 0);
	return a.ino;
}

/* Mirror m's component of the first group (column 0). */
static struct pando_component mirror(struct mds_fixture *f, uint64_t ino, uint32_t m)
{
	struct pando_storage_map *map = NULL;
	struct pando_component k = { 0 };

	CHECK_EQ(pando_map_load(&f->mds, ino, &map), 0);
	if (map)
		k = *pando_map_component(map, 0, m * map->shape.data);
	pando_map_free(map);
	return k;
}

/* The file's bytes as mirror m alone holds them: the other mirrors are
 * skipped, as stale ones are. */
static void read_mirror(struct mds_fixture *f, uint64_t ino, uint32_t m, uint8_t *out, size_t len)
{
	struct pando_storage_map *map = NULL;
	struct objio io;
	size_t n = 0;

	CHECK_EQ(pando_objects_open(&f->mds, ino, &io, &map), 0);
	if (!map)
		return;
	for (uint32_t c = 0; c < map->shape.copies; c++)
		if (c != m)
			io.skip[io.nskip++] = pando_map_component(map, 0, c)->osd_id;
	CHECK_EQ(objio_read(&io, map, len, 0, out, len, &n), 0);
	CHECK_EQ(n, len);
	pando_map_free(map);
}

static void test_a_rotted_extent_is_rewritten_from_the_good_mirror_once(void)
{
	size_t len = 3 * EXTENT + 100;
	uint8_t *want = malloc(len), *got = malloc(len);
	struct pando_component k;
	struct mds_fixture f;
	struct pass p;
	char line[200];
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	file_on_objects(&f, "calm", got, 5000, 1, 1);
	ino = file_on_objects(&f, "rotten", want, len, 2, 1);
	k = mirror(&f, ino, 1);
	CHECK_EQ(osd_fixture_corrupt(&f.osds, k.osd_id, k.object_id, EXTENT + 17), 0);
	mds_fixture_log_clear();
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.files_done, 2);
	CHECK_EQ(p.mismatches, 1);
	CHECK_EQ(p.repaired, 1);
	CHECK_EQ(p.unrepairable, 0);
	snprintf(line, sizeof(line),
		 "inode %llu extent 1 on OSD %u (object %llu) does not match its checksum: "
		 "repaired from a good mirror",
		 (unsigned long long)ino, k.osd_id, (unsigned long long)k.object_id);
	CHECK_EQ(mds_fixture_log_find(line), 1);
	read_mirror(&f, ino, 1, got, len);
	CHECK_MEM(got, want, len);
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.files_done, 2);
	CHECK_EQ(p.mismatches, 0);
	mds_fixture_finish(&f, check_failures);
	free(want);
	free(got);
}

/* Mirror 1's bytes changed through its own OSD: its checksums follow, so
 * both mirrors verify, and nothing says which one is right. */
static void test_mirrors_that_verify_but_differ_are_reported_not_guessed(void)
{
	size_t len = 2 * EXTENT;
	uint8_t *want = malloc(len), *other = malloc(len), *got = malloc(len);
	struct pando_storage_map *map = NULL;
	struct mds_fixture f;
	struct objio io;
	struct pass p;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	ino = file_on_objects(&f, "two", want, len, 3, 1);
	memcpy(other, want, len);
	memcpy(other + 10, "0123456789", 10);
	CHECK_EQ(pando_objects_open(&f.mds, ino, &io, &map), 0);
	io.skip[io.nskip++] = mirror(&f, ino, 0).osd_id;
	if (map)
		CHECK_EQ(objio_write(&io, map, 0, other, len, true), 0);
	pando_map_free(map);
	mds_fixture_log_clear();
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.mismatches, 1);
	CHECK_EQ(p.unrepairable, 1);
	CHECK_EQ(p.repaired, 0);
	CHECK_EQ(mds_fixture_log_find("extent 0 on OSD"), 1);
	CHECK_EQ(mds_fixture_log_find("differs from the other mirror: UNREPAIRABLE"), 1);
	read_mirror(&f, ino, 0, got, len);
	CHECK_MEM(got, want, len);
	read_mirror(&f, ino, 1, got, len);
	CHECK_MEM(got, other, len);
	mds_fixture_finish(&f, check_failures);
	free(want);
	free(other);
	free(got);
}

static void one_mib_per_s(struct pando_mds_config *c)
{
	c->scrub_bandwidth_mb = 1;
}

/* 6 MiB read at 1 MiB/s in 128 KiB steps: the pacing reserves each
 * step's time before the next, so the pass cannot be faster than all but
 * the first step take; the upper bound only catches a scrub that sleeps
 * far more than it must, with room for a loaded machine. */
static void test_a_pass_reads_no_faster_than_its_bandwidth(void)
{
	size_t len = 6 * MIB;
	uint8_t *buf = malloc(len);
	struct mds_fixture f;
	struct pass p;
	double took, floor_s;

	CHECK_EQ(mds_fixture_start(&f, 2, one_mib_per_s), 0);
	file_on_objects(&f, "paced", buf, len, 4, 2);
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.bytes_done, len); /* half the extents, on two mirrors */
	took = p.ended - p.started;
	floor_s = (double)(p.bytes_done - 2 * EXTENT) / MIB;
	fprintf(stderr, "scrub: %lld bytes in %.2f s at 1 MiB/s (at least %.2f s)\n",
		(long long)p.bytes_done, took, floor_s);
	CHECK(took >= floor_s * 0.98);
	CHECK(took <= (double)p.bytes_done / MIB * 1.5 + 3);
	mds_fixture_finish(&f, check_failures);
	free(buf);
}

static void test_a_file_with_a_writer_is_left_for_the_next_pass(void)
{
	size_t len = 2 * EXTENT;
	uint8_t *buf = malloc(len);
	struct pando_grant *seg = NULL;
	struct pando_component k;
	struct mds_fixture f;
	struct pass p;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	file_on_objects(&f, "idle", buf, len, 5, 1);
	ino = file_on_objects(&f, "written", buf, len, 6, 1);
	k = mirror(&f, ino, 0);
	CHECK_EQ(osd_fixture_corrupt(&f.osds, k.osd_id, k.object_id, 5), 0);
	CHECK_EQ(mds_fixture_layout_get(&f, ino, true, &seg), 0);
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.files_done, 2);
	CHECK_EQ(p.yielded, 1);
	CHECK_EQ(p.mismatches, 0);
	CHECK_EQ(f.host.recalls, 0); /* the writer was not disturbed */
	if (seg)
		mds_fixture_layout_return(&f, seg);
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.yielded, 0);
	CHECK_EQ(p.mismatches, 1);
	CHECK_EQ(p.repaired, 1);
	mds_fixture_finish(&f, check_failures);
	free(buf);
}

/* Read layouts asked for until one is refused: the scrub has the file
 * frozen.  Read segments neither count as writers nor are recalled, so
 * the asking does not turn the scrub away before it freezes. */
static bool wait_frozen(struct mds_fixture *f, uint64_t ino)
{
	struct pando_grant *seg;

	for (int i = 0; i < 3000; i++) {
		int rc = mds_fixture_layout_get(f, ino, false, &seg);

		if (rc == -EAGAIN)
			return true;
		if (rc == 0)
			pando_grants_ungrant(f->mds.grants, seg);
		sleep_ms(5);
	}
	return false;
}

/* A write layout, asked for until the scrub gives the file back. */
static struct pando_grant *write_layout_when_thawed(struct mds_fixture *f, uint64_t ino)
{
	struct pando_grant *seg = NULL;

	for (int i = 0; i < 3000 && mds_fixture_layout_get(f, ino, true, &seg) == -EAGAIN; i++)
		sleep_ms(10);
	CHECK(seg != NULL);
	return seg;
}

/* 4 MiB of reads at 1 MiB/s take the scrub at least 4 s; the client that
 * asked is answered within one 128 KiB step. */
static void test_a_file_a_client_asks_to_write_is_given_back_and_done_later(void)
{
	size_t len = 4 * MIB;
	uint8_t *buf = malloc(len);
	struct pando_grant *seg;
	struct mds_fixture f;
	struct pass before, p;
	uint64_t ino;

	CHECK_EQ(mds_fixture_start(&f, 2, one_mib_per_s), 0);
	ino = file_on_objects(&f, "wanted", buf, len, 8, 2);
	CHECK(progress(&f, &before));
	pando_scrub_request(f.mds.scrub, true);
	CHECK(wait_frozen(&f, ino));
	seg = write_layout_when_thawed(&f, ino);
	CHECK(pass_done(&f, before.pass + 1, &p));
	CHECK_EQ(p.yielded, 1);
	CHECK(p.bytes_done < (json_int_t)len);
	if (seg)
		mds_fixture_layout_return(&f, seg);
	CHECK(scrub_pass(&f, &p));
	CHECK_EQ(p.yielded, 0);
	CHECK_EQ(p.files_done, 1);
	CHECK_EQ(p.bytes_done, len);
	mds_fixture_finish(&f, check_failures);
	free(buf);
}

int main(void)
{
	test_a_rotted_extent_is_rewritten_from_the_good_mirror_once();
	test_mirrors_that_verify_but_differ_are_reported_not_guessed();
	test_a_pass_reads_no_faster_than_its_bandwidth();
	test_a_file_with_a_writer_is_left_for_the_next_pass();
	test_a_file_a_client_asks_to_write_is_given_back_and_done_later();
	CHECK_DONE();
}
