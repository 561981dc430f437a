/* The transcoder (../../README.md, "Transcoding"): a pass takes the files
 * whose policy has a cold rule, still mirrored, unmodified for
 * cold_after_s, at least one RS row long and with no writer, and leaves
 * every other; one file goes from mirrors to RS(k,m) with the same bytes,
 * its layouts recalled and its mirrors left to the reaper; a file written
 * during its copy is copied again with its writers held, and a file whose
 * writers do not let go is not switched. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "grants.h"
#include "mds_fixture.h"
#include "objio.h"
#include "pando/policy.h"
#include "transcode.h"

#define KIB 1024u
#define SU (64 * KIB)
#define ROW (2 * SU) /* RS(2,1) */
#define COPY_CAP (1u << 20)

/* Mirrored while hot, RS(2,1) once an hour cold. */
static const struct pando_policy cold_rule = {
	.scheme = PANDO_RAID1,
	.copies = 2,
	.stripe_unit = SU,
	.cold_after_s = 3600,
	.cold_k = 2,
	.cold_m = 1,
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* A file on mirrored objects (under policy p, when given) with len bytes
 * of seed, just written. */
static uint64_t mirrored_file(struct mds_fixture *f, const char *name, const struct pando_policy *p,
			      uint8_t *buf, size_t len, unsigned seed)
{
	struct pando_storage_map *map = NULL;
	struct ns_setattr sa = { .mask = NS_SET_SIZE, .size = len };
	uint8_t blob[PANDO_POLICY_MAX_LEN];
	struct ns_attr a;
	struct objio io;
	size_t n = 0;

	osd_fixture_fill(buf, len, seed);
	CHECK_EQ(mds_fixture_create(f, name, &a), 0);
	if (p) {
		CHECK_EQ(pando_policy_encode(p, blob, sizeof(blob), &n), 0);
		CHECK_EQ(ns_policy_set(f->mds.ns, a.ino, blob, n), 0);
	}
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	CHECK_EQ(pando_objects_open(&f->mds, a.ino, &io, &map), 0);
	if (map)
		CHECK_EQ(objio_write(&io, map, 0, buf, len, true), 0);
	pando_map_free(map);
	CHECK_EQ(ns_setattr(f->mds.ns, a.ino, &sa, NULL), 0);
	return a.ino;
}

/* The file last modified age_s ago. */
static void age(struct mds_fixture *f, uint64_t ino, time_t age_s)
{
	struct ns_setattr sa = { .mask = NS_SET_MTIME };

	clock_gettime(CLOCK_REALTIME, &sa.mtime);
	sa.mtime.tv_sec -= age_s;
	CHECK_EQ(ns_setattr(f->mds.ns, ino, &sa, NULL), 0);
}

static struct pando_map_shape shape_of(struct mds_fixture *f, uint64_t ino)
{
	struct pando_storage_map *map = NULL;
	struct pando_map_shape s = { 0 };

	CHECK_EQ(pando_map_load(&f->mds, ino, &map), 0);
	if (map)
		s = map->shape;
	pando_map_free(map);
	return s;
}

/* The file's bytes through the gateway, as its map now says. */
static void check_bytes(struct mds_fixture *f, uint64_t ino, const uint8_t *want, size_t len)
{
	struct pando_storage_map *map = NULL;
	uint8_t *got = malloc(len);
	struct ns_attr a = { 0 };
	struct objio io;
	size_t n = 0;

	CHECK_EQ(ns_getattr(f->mds.ns, ino, &a), 0);
	CHECK_EQ(a.size, len);
	CHECK_EQ(pando_objects_open(&f->mds, ino, &io, &map), 0);
	if (map)
		CHECK_EQ(objio_read(&io, map, len, 0, got, len, &n), 0);
	CHECK_EQ(n, len);
	CHECK_MEM(got, want, len);
	pando_map_free(map);
	free(got);
}

static int count_intent(void *arg, const struct ns_intent *in)
{
	(*(int *)arg)++;
	return 0;
}

/* Removal intents left, waited for up to five seconds to be none (the
 * reaper drops an intent after its objects are gone). */
static int intents(struct mds_fixture *f)
{
	int n = 0;

	for (int tries = 0; tries < 50; tries++) {
		n = 0;
		CHECK_EQ(ns_intent_list(f->mds.ns, 0, count_intent, &n), 0);
		if (!n)
			break;
		sleep_ms(100);
	}
	return n;
}

struct status {
	json_int_t passes, files_done, bytes_done, failed;
};

static struct status status(struct mds_fixture *f)
{
	char *text = pando_transcode_status(f->mds.transcode);
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;
	struct status s = { 0 };

	CHECK(o && !json_unpack(o, "{sI sI sI sI}", "passes", &s.passes, "files_done",
				&s.files_done, "bytes_done", &s.bytes_done, "failed", &s.failed));
	json_decref(o);
	free(text);
	return s;
}

/* Two more passes: the second began after this call, so it saw every
 * file as the caller left it. */
static struct status two_more_passes(struct mds_fixture *f)
{
	json_int_t want = status(f).passes + 2;
	struct status s = status(f);

	for (int i = 0; i < 300 && s.passes < want; i++) {
		sleep_ms(100);
		s = status(f);
	}
	CHECK(s.passes >= want);
	return s;
}

static void every_second(struct pando_mds_config *c)
{
	c->transcode_interval_s = 1;
}

/* mtime is set last: until then a file is hot, whatever pass sees it. */
static void test_a_pass_takes_cold_idle_mirrored_files_of_a_row_or_more(void)
{
	size_t big = 3 * ROW + 1000, small = ROW - 1;
	uint8_t *buf = malloc(big), *busy_bytes = malloc(big);
	uint64_t cold, plain, tiny, warm, busy;
	struct pando_grant *seg = NULL;
	struct mds_fixture f;
	struct status s;

	CHECK_EQ(mds_fixture_start(&f, 3, every_second), 0);
	plain = mirrored_file(&f, "no-rule", NULL, buf, big, 1);
	tiny = mirrored_file(&f, "small", &cold_rule, buf, small, 2);
	warm = mirrored_file(&f, "warm", &cold_rule, buf, big, 3);
	busy = mirrored_file(&f, "busy", &cold_rule, busy_bytes, big, 4);
	CHECK_EQ(mds_fixture_layout_get(&f, busy, true, &seg), 0);
	cold = mirrored_file(&f, "cold", &cold_rule, buf, big, 5);
	age(&f, plain, 7200);
	age(&f, tiny, 7200);
	age(&f, warm, 3000);
	age(&f, busy, 7200);
	age(&f, cold, 7200);
	s = two_more_passes(&f);
	CHECK_EQ(shape_of(&f, cold).raid, PANDO_RS);
	check_bytes(&f, cold, buf, big);
	CHECK_EQ(shape_of(&f, plain).raid, PANDO_RAID1);
	CHECK_EQ(shape_of(&f, tiny).raid, PANDO_RAID1);
	CHECK_EQ(shape_of(&f, warm).raid, PANDO_RAID1);
	CHECK_EQ(shape_of(&f, busy).raid, PANDO_RAID1);
	CHECK_EQ(s.files_done, 1);
	CHECK_EQ(s.bytes_done, big);
	CHECK_EQ(s.failed, 0);
	CHECK_EQ(f.host.recalls, 0); /* the writer was left alone */
	if (seg)
		mds_fixture_layout_return(&f, seg);
	s = two_more_passes(&f);
	CHECK_EQ(shape_of(&f, busy).raid, PANDO_RS);
	check_bytes(&f, busy, busy_bytes, big);
	CHECK_EQ(s.files_done, 2); /* and the RS one was not taken again */
	mds_fixture_finish(&f, check_failures);
	free(buf);
	free(busy_bytes);
}

/* Whether every component of map is gone from its OSD, waited for up
 * to ten seconds (the reaper runs when kicked, off this thread). */
static bool objects_gone(struct mds_fixture *f, const struct pando_storage_map *map)
{
	struct objio io = { .conns = f->mds.conns };
	uint32_t n = pando_map_width(map) * map->groups;

	for (int tries = 0; tries < 100; tries++) {
		uint32_t left = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t len;

			left += objio_component_length(&io, map->partition_id, &map->comp[i],
						       &len) != -ENOENT;
		}
		if (!left)
			return true;
		sleep_ms(100);
	}
	return false;
}

static void test_one_file_goes_to_rs_with_the_same_bytes_and_its_mirrors_reaped(void)
{
	size_t len = 5 * ROW + 4321;
	uint8_t *want = malloc(len), *buf = malloc(COPY_CAP);
	struct pando_storage_map *old = NULL;
	struct pando_grant *reader = NULL;
	struct pando_map_shape s;
	struct mds_fixture f;
	uint64_t ino, copied = 0;

	CHECK_EQ(mds_fixture_start(&f, 3, NULL), 0);
	ino = mirrored_file(&f, "f", &cold_rule, want, len, 9);
	CHECK_EQ(pando_map_load(&f.mds, ino, &old), 0);
	CHECK_EQ(mds_fixture_layout_get(&f, ino, false, &reader), 0);
	CHECK_EQ(pando_transcode_file(&f.mds, ino, buf, COPY_CAP, &copied), 0);
	CHECK_EQ(copied, len); /* nobody wrote: one copy */
	s = shape_of(&f, ino);
	CHECK_EQ(s.raid, PANDO_RS);
	CHECK_EQ(s.data, 2);
	CHECK_EQ(s.parity, 1);
	CHECK_EQ(s.stripe_unit, SU);
	check_bytes(&f, ino, want, len);
	/* the reader's layout names the old objects */
	CHECK(fake_host_wait(&f.host, &f.host.recalls, 1, 5000));
	CHECK_EQ(f.host.last_recall_ino, ino);
	if (old)
		CHECK(objects_gone(&f, old));
	CHECK_EQ(intents(&f), 0);
	CHECK_EQ(pando_transcode_file(&f.mds, ino, buf, COPY_CAP, &copied), 0);
	CHECK_EQ(copied, 0); /* RS already */
	if (reader)
		pando_grant_end(reader);
	pando_map_free(old);
	mds_fixture_finish(&f, check_failures);
	free(want);
	free(buf);
}

struct transcoding {
	struct mds_fixture *f;
	uint64_t ino;
	uint64_t copied;
	void *buf;
	int rc;
};

static void *transcode_thread(void *arg)
{
	struct transcoding *t = arg;

	t->rc = pando_transcode_file(&t->f->mds, t->ino, t->buf, COPY_CAP, &t->copied);
	return NULL;
}

/* The freeze recalls the writer only after the first copy: what it
 * writes before it returns its layout is missing from that copy. */
static void test_a_file_written_during_its_copy_is_copied_again_under_the_freeze(void)
{
	size_t len = 3 * ROW;
	uint8_t *first = malloc(len), *then = malloc(len);
	struct transcoding t = { .buf = malloc(COPY_CAP) };
	struct pando_storage_map *map = NULL;
	struct pando_grant *writer = NULL;
	struct mds_fixture f;
	struct objio io;
	pthread_t th;

	CHECK_EQ(mds_fixture_start(&f, 3, NULL), 0);
	t.f = &f;
	t.ino = mirrored_file(&f, "f", &cold_rule, first, len, 10);
	osd_fixture_fill(then, len, 11);
	CHECK_EQ(mds_fixture_layout_get(&f, t.ino, true, &writer), 0);
	mds_fixture_log_clear();
	CHECK_EQ(pthread_create(&th, NULL, transcode_thread, &t), 0);
	CHECK(fake_host_wait(&f.host, &f.host.recalls, 1, 20000));
	CHECK_EQ(f.host.last_recall_ino, t.ino);
	CHECK_EQ(pando_objects_open(&f.mds, t.ino, &io, &map), 0);
	if (map)
		CHECK_EQ(objio_write(&io, map, 0, then, len, true), 0);
	pando_map_free(map);
	if (writer)
		mds_fixture_layout_return(&f, writer);
	pthread_join(th, NULL);
	CHECK_EQ(t.rc, 0);
	CHECK_EQ(t.copied, 2 * len);
	CHECK_EQ(mds_fixture_log_find("was written during its transcoding"), 1);
	CHECK_EQ(shape_of(&f, t.ino).raid, PANDO_RS);
	check_bytes(&f, t.ino, then, len);
	mds_fixture_finish(&f, check_failures);
	free(first);
	free(then);
	free(t.buf);
}

static void quick_recall(struct pando_mds_config *c)
{
	c->recall_timeout_s = 1;
}

/* A gateway write that does not end keeps the freeze from being had:
 * after the recall timeout and the freeze's margin (6 s here) the file is
 * left as it was, its new objects removed, for a later pass. */
static void test_a_file_whose_writer_does_not_let_go_is_not_switched(void)
{
	size_t len = 3 * ROW;
	uint8_t *want = malloc(len), *buf = malloc(COPY_CAP);
	struct mds_fixture f;
	uint64_t ino, copied = 0;

	CHECK_EQ(mds_fixture_start(&f, 3, quick_recall), 0);
	ino = mirrored_file(&f, "f", &cold_rule, want, len, 12);
	CHECK_EQ(pando_grants_write_begin(f.mds.grants, ino), 0);
	CHECK_EQ(pando_transcode_file(&f.mds, ino, buf, COPY_CAP, &copied), -EAGAIN);
	CHECK_EQ(shape_of(&f, ino).raid, PANDO_RAID1);
	check_bytes(&f, ino, want, len);
	CHECK_EQ(intents(&f), 0);
	pando_grants_write_end(f.mds.grants, ino);
	CHECK_EQ(pando_transcode_file(&f.mds, ino, buf, COPY_CAP, &copied), 0);
	CHECK_EQ(shape_of(&f, ino).raid, PANDO_RS);
	check_bytes(&f, ino, want, len);
	mds_fixture_finish(&f, check_failures);
	free(want);
	free(buf);
}

int main(void)
{
	test_a_pass_takes_cold_idle_mirrored_files_of_a_row_or_more();
	test_one_file_goes_to_rs_with_the_same_bytes_and_its_mirrors_reaped();
	test_a_file_written_during_its_copy_is_copied_again_under_the_freeze();
	test_a_file_whose_writer_does_not_let_go_is_not_switched();
	CHECK_DONE();
}
