/* The rebuild service on a real etcd and real OSDs, driven as pando-mgr
 * drives it: a cluster map that takes an OSD out and a job
 * rebuild/jobs/<epoch> put beside it.  A job moves every component off
 * its OSD, the data still reads, and the progress JSON says so; the files
 * with the fewest healthy copies are claimed first; a task that cannot
 * run now (its OSD down but in) is held back and retried, one that fails
 * is counted and held back; a task claimed under another holder's live
 * lease is left alone until that lease expires, then taken over; two
 * managers on one etcd each rebuild their own files, once. */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "mds_fixture.h"
#include "objio.h"
#include "rebuild_queue.h"
#include "view.h"

#define MAX_FILES 16
#define FILE_BYTES (200 * 1024)
#define TASKS "/pando/rebuild/tasks/"
#define CLAIMS "/pando/rebuild/claims/"

static struct etcd_fixture etcd;
static struct etcd_client *cl; /* the test's own client: the mgr's part */
static char name_a[] = "mds-a", name_b[] = "mds-b";

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void tune_a(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
	cfg->mds_name = name_a;
}

static void tune_b(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
	cfg->mds_name = name_b;
}

/* One worker: tasks run in the order they were claimed. */
static void tune_serial(struct pando_mds_config *cfg)
{
	tune_a(cfg);
	cfg->rebuild_parallel = 1;
}

/* RAID-0: no other copy to rebuild from. */
static void tune_raid0(struct pando_mds_config *cfg)
{
	tune_a(cfg);
	cfg->mirrors = 1;
}

static int begin(struct mds_fixture *f, int nosds, void (*tune)(struct pando_mds_config *cfg))
{
	struct etcd_options o = { .endpoints = etcd.url };

	cl = NULL;
	if (etcd_fixture_start(&etcd) != 0 || etcd_client_new(&o, &cl) != 0)
		return -1;
	return mds_fixture_start(f, nosds, tune);
}

/* The engine closes first: it revokes its lease in etcd as it stops. */
static void end(struct mds_fixture *f)
{
	mds_fixture_finish(f, check_failures);
	if (cl)
		etcd_client_free(cl);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
}

/* A file on objects holding FILE_BYTES of seed's bytes, its size settled
 * from them as after a pNFS write. */
static uint64_t file_with_data(struct mds_fixture *f, const char *name, unsigned seed)
{
	struct pando_storage_map *map = NULL;
	uint8_t *buf = malloc(FILE_BYTES);
	struct ns_attr a, before;
	bool grew = false;
	struct objio io;

	osd_fixture_fill(buf, FILE_BYTES, seed);
	CHECK_EQ(mds_fixture_create(f, name, &a), 0);
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	CHECK_EQ(pando_objects_open(&f->mds, a.ino, &io, &map), 0);
	if (map)
		CHECK_EQ(objio_write(&io, map, 0, buf, FILE_BYTES, true), 0);
	pando_map_free(map);
	free(buf);
	CHECK_EQ(pando_settle_size(&f->mds, a.ino, "test", &grew, &before), 0);
	return a.ino;
}

static uint64_t *make_files(struct mds_fixture *f, uint64_t *inos, int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		inos[i] = file_with_data(f, name, 100 + (unsigned)i);
	}
	return inos;
}

static bool data_reads_back(struct mds_fixture *f, uint64_t ino, unsigned seed)
{
	struct pando_storage_map *map = NULL;
	uint8_t *want = malloc(FILE_BYTES), *got = calloc(1, FILE_BYTES);
	struct objio io;
	size_t n = 0;
	bool same = false;

	osd_fixture_fill(want, FILE_BYTES, seed);
	if (pando_objects_open(&f->mds, ino, &io, &map) == 0 &&
	    objio_read(&io, map, FILE_BYTES, 0, got, FILE_BYTES, &n) == 0)
		same = n == FILE_BYTES && memcmp(got, want, FILE_BYTES) == 0;
	if (map)
		pando_map_free(map);
	free(want);
	free(got);
	return same;
}

static uint32_t first_osd_of(struct mds_fixture *f, uint64_t ino)
{
	struct pando_storage_map *map = NULL;
	uint32_t osd = 0;

	if (pando_map_load(&f->mds, ino, &map) == 0) {
		osd = map->comp[0].osd_id;
		pando_map_free(map);
	}
	return osd;
}

#define OSD_BIT(id) (1u << (id))

/* The cluster map as the mgr puts it (mgr/README.md): every OSD of the
 * fixture, those in the down mask (OSD_BIT) not up, those in the out mask
 * not in; then waits until the engine applied it. */
static void put_map(struct mds_fixture *f, uint64_t epoch, uint32_t down, uint32_t out)
{
	char map[4096];
	size_t len;

	len = (size_t)snprintf(map, sizeof(map),
			       "{\"epoch\":%" PRIu64 ",\"partition\":%" PRIu64 ",\"osds\":[", epoch,
			       f->osds.partition);
	for (int i = 0; i < f->osds.n; i++) {
		uint32_t id = f->osds.osds[i].id;

		len += (size_t)snprintf(map + len, sizeof(map) - len,
					"%s{\"id\":%u,\"ctl\":\"%s\",\"nfs\":\"127.0.0.1:2049\","
					"\"weight\":1099511627776,\"up\":%s,\"in\":%s}",
					i ? "," : "", id, f->osds.osds[i].ctl,
					down & OSD_BIT(id) ? "false" : "true",
					out & OSD_BIT(id) ? "false" : "true");
	}
	len += (size_t)snprintf(map + len, sizeof(map) - len, "]}");
	CHECK_EQ(etcd_put(cl, "/pando/map", map, len, 0), 0);
	for (int i = 0; i < 100 && pando_view_get(&f->mds)->map.epoch < epoch; i++)
		sleep_ms(50);
	CHECK_EQ(pando_view_get(&f->mds)->map.epoch, epoch);
}

/* A job as pando-mgr puts it when an OSD goes out (mgr/pando_mgr/rebuild.py, Job). */
static void put_job(uint64_t id, uint32_t osd)
{
	char key[64], job[160];

	snprintf(key, sizeof(key), "/pando/rebuild/jobs/%" PRIu64, id);
	snprintf(job, sizeof(job),
		 "{\"id\":%" PRIu64 ",\"osd\":%u,\"reason\":\"out\",\"target\":null,"
		 "\"created\":%ld,\"by\":\"mgr-test\"}",
		 id, osd, (long)time(NULL));
	CHECK_EQ(etcd_put(cl, key, job, strlen(job), 0), 0);
}

static long long progress_int(struct mds_fixture *f, const char *field)
{
	char *s = pando_rebuild_progress(f->mds.rebuild);
	json_t *o = s ? json_loads(s, 0, NULL) : NULL;
	long long v = json_integer_value(json_object_get(o, field));

	json_decref(o);
	free(s);
	return v;
}

/* The progress JSON lists job id done, with state idle. */
static bool job_done(struct mds_fixture *f, uint64_t id)
{
	char *s = pando_rebuild_progress(f->mds.rebuild);
	json_t *o = s ? json_loads(s, 0, NULL) : NULL, *v;
	bool done = false;
	size_t i;

	json_array_foreach(json_object_get(o, "jobs_done"), i, v)
		done |= (uint64_t)json_integer_value(v) == id;
	done = done && strcmp(json_string_value(json_object_get(o, "state")) ?: "", "idle") == 0;
	json_decref(o);
	free(s);
	return done;
}

static bool wait_job_done(struct mds_fixture *f, uint64_t id, int ms)
{
	for (int waited = 0; !job_done(f, id) && waited < ms; waited += 100)
		sleep_ms(100);
	return job_done(f, id);
}

static bool wait_count(struct mds_fixture *f, const char *field, long long n, int ms)
{
	for (int waited = 0; progress_int(f, field) < n && waited < ms; waited += 100)
		sleep_ms(100);
	return progress_int(f, field) >= n;
}

static int count_key(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	return 0;
}

static int64_t keys_under(const char *prefix)
{
	int64_t n = -1;

	CHECK_EQ(etcd_list(cl, prefix, 0, count_key, NULL, &n), 0);
	return n;
}

static void test_a_job_moves_every_component_off_its_out_osd(void)
{
	uint64_t ino[8];
	struct mds_fixture f;
	int on_osd = 0;

	CHECK_EQ(begin(&f, 4, tune_a), 0);
	make_files(&f, ino, 8);
	for (int i = 0; i < 8; i++)
		on_osd += pando_map_uses_osd(&f.mds, ino[i], 1);
	CHECK(on_osd > 0);
	CHECK_EQ(osd_fixture_stop(&f.osds, 0), 0);
	put_map(&f, 2, OSD_BIT(1), OSD_BIT(1));
	put_job(2, 1);
	CHECK(wait_job_done(&f, 2, 30000));
	for (int i = 0; i < 8; i++) {
		CHECK(!pando_map_uses_osd(&f.mds, ino[i], 1));
		CHECK(data_reads_back(&f, ino[i], 100 + (unsigned)i));
	}
	CHECK_EQ(progress_int(&f, "files_total"), on_osd);
	CHECK_EQ(progress_int(&f, "files_done"), on_osd);
	CHECK_EQ(progress_int(&f, "files_failed"), 0);
	CHECK_EQ(progress_int(&f, "bytes_total"), (long long)on_osd * FILE_BYTES);
	CHECK_EQ(progress_int(&f, "bytes_done"), (long long)on_osd * FILE_BYTES);
	CHECK_EQ(keys_under(TASKS), 0);
	CHECK_EQ(keys_under(CLAIMS), 0);
	end(&f);
}

/* An OSD pair (a, b) such that some files use both and some use a
 * without b: with a rebuilt and b out, the first have no healthy copy
 * left in the map's eyes, the others one. */
static bool pick_pair(struct mds_fixture *f, const uint64_t *ino, int n, uint32_t *a, uint32_t *b)
{
	for (uint32_t i = 1; i <= (uint32_t)f->osds.n; i++) {
		for (uint32_t j = 1; j <= (uint32_t)f->osds.n; j++) {
			int both = 0, alone = 0;

			for (int k = 0; i != j && k < n; k++) {
				bool ui = pando_map_uses_osd(&f->mds, ino[k], i);
				bool uj = pando_map_uses_osd(&f->mds, ino[k], j);

				both += ui && uj;
				alone += ui && !uj;
			}
			if (both && alone) {
				*a = i;
				*b = j;
				return true;
			}
		}
	}
	return false;
}

static int rebuilt_at(uint64_t ino, uint32_t osd)
{
	char line[96];

	snprintf(line, sizeof(line), "inode %" PRIu64 " rebuilt off OSD %u", ino, osd);
	return mds_fixture_log_first(line);
}

static void test_the_files_with_fewest_healthy_copies_are_claimed_first(void)
{
	uint64_t ino[12];
	bool weak[12];
	struct mds_fixture f;
	uint32_t a = 0, b = 0;
	int last_weak = -1, first_strong = 1 << 30;

	CHECK_EQ(begin(&f, 4, tune_serial), 0);
	make_files(&f, ino, 12);
	CHECK(pick_pair(&f, ino, 12, &a, &b));
	for (int k = 0; k < 12; k++)
		weak[k] = pando_map_uses_osd(&f.mds, ino[k], b);
	CHECK_EQ(osd_fixture_stop(&f.osds, (int)a - 1), 0);
	/* b stays up: its copies are read, but it is out. */
	put_map(&f, 3, OSD_BIT(a), OSD_BIT(a) | OSD_BIT(b));
	mds_fixture_log_clear();
	put_job(3, a);
	CHECK(wait_job_done(&f, 3, 30000));
	for (int k = 0; k < 12; k++) {
		int at = rebuilt_at(ino[k], a);

		if (at >= 0 && weak[k] && at > last_weak)
			last_weak = at;
		if (at >= 0 && !weak[k] && at < first_strong)
			first_strong = at;
	}
	CHECK(last_weak >= 0);
	CHECK(first_strong < 1 << 30);
	CHECK(last_weak < first_strong);
	CHECK_EQ(progress_int(&f, "files_failed"), 0);
	end(&f);
}

static void test_a_task_whose_osd_is_down_but_in_is_held_back_and_retried(void)
{
	struct pando_rebuild_task t = { .job = 0 };
	struct mds_fixture f;
	uint64_t ino;
	bool tried = false, held = true;

	CHECK_EQ(begin(&f, 3, tune_a), 0);
	ino = file_with_data(&f, "f", 7);
	t = (struct pando_rebuild_task){ .ino = ino, .osd = first_osd_of(&f, ino) };
	put_map(&f, 2, OSD_BIT(t.osd), 0);
	/* A stale component's task, as the stale scan puts it. */
	CHECK_EQ(pando_rebuild_put_task(f.mds.rebuild, cl, &t, 1, FILE_BYTES), 0);
	for (int i = 0; i < 300 && !tried; i++, sleep_ms(10))
		tried = !pando_rebuild_idle_for(f.mds.rebuild, ino);
	CHECK(tried);
	/* Not tried again at once: held back (RETRY_LATER_S). */
	for (int i = 0; i < 100; i++, sleep_ms(20))
		held &= !pando_rebuild_idle_for(f.mds.rebuild, ino);
	CHECK(held);
	CHECK_EQ(progress_int(&f, "files_done"), 0);
	CHECK_EQ(progress_int(&f, "files_failed"), 0);
	CHECK_EQ(keys_under(TASKS), 1);
	put_map(&f, 3, 0, 0);
	CHECK(wait_count(&f, "files_done", 1, 15000));
	CHECK_EQ(progress_int(&f, "files_failed"), 0);
	CHECK_EQ(keys_under(TASKS), 0);
	/* Caught up where it is: the OSD is back in the map. */
	CHECK(pando_map_uses_osd(&f.mds, ino, t.osd));
	CHECK(data_reads_back(&f, ino, 7));
	end(&f);
}

static void test_a_task_that_fails_is_counted_and_held_back(void)
{
	struct mds_fixture f;
	char line[96];
	uint64_t ino;
	uint32_t osd;

	CHECK_EQ(begin(&f, 3, tune_raid0), 0);
	ino = file_with_data(&f, "f", 9);
	osd = first_osd_of(&f, ino);
	put_job(4, osd);
	CHECK(wait_count(&f, "files_failed", 1, 10000));
	sleep_ms(3000);
	/* Once in those seconds: the next try waits RETRY_FAILED_S. */
	CHECK_EQ(progress_int(&f, "files_failed"), 1);
	CHECK_EQ(progress_int(&f, "files_done"), 0);
	snprintf(line, sizeof(line), "rebuild of inode %" PRIu64 " off OSD %u failed", ino, osd);
	CHECK_EQ(mds_fixture_log_find(line), 1);
	/* The task stays for that try. */
	CHECK_EQ(keys_under(TASKS), 1);
	CHECK_EQ(keys_under(CLAIMS), 0);
	CHECK(!pando_rebuild_idle_for(f.mds.rebuild, ino));
	CHECK(pando_map_uses_osd(&f.mds, ino, osd));
	end(&f);
}

/* Claims a's task for ino as another worker would, under a lease of
 * ttl_s it keeps alive only while the caller renews it. */
static int64_t claim_as_other(uint64_t ino, int ttl_s)
{
	const char *body = "{\"worker\":\"other\",\"since\":0}";
	char key[128];
	int64_t lease = 0;

	snprintf(key, sizeof(key), CLAIMS "%s/%016" PRIx64, name_a, ino);
	CHECK_EQ(etcd_lease_grant(cl, ttl_s, &lease), 0);
	CHECK_EQ(etcd_create(cl, key, body, strlen(body), lease), 0);
	return lease;
}

static void test_a_claim_under_a_live_lease_is_left_until_the_lease_expires(void)
{
	uint64_t ino[6];
	struct mds_fixture f;
	uint32_t osd;
	int64_t lease, ttl = 0;
	int on_osd = 0;

	CHECK_EQ(begin(&f, 4, tune_a), 0);
	make_files(&f, ino, 6);
	osd = first_osd_of(&f, ino[0]);
	for (int i = 0; i < 6; i++)
		on_osd += pando_map_uses_osd(&f.mds, ino[i], osd);
	lease = claim_as_other(ino[0], 2);
	put_job(5, osd);
	for (int i = 0; i < 60 && progress_int(&f, "files_done") < on_osd - 1; i++) {
		CHECK_EQ(etcd_lease_keepalive(cl, lease, &ttl), 0);
		sleep_ms(250);
	}
	/* Every other file done; the claimed one stays its holder's. */
	for (int i = 0; i < 8; i++) {
		CHECK_EQ(etcd_lease_keepalive(cl, lease, &ttl), 0);
		sleep_ms(250);
	}
	CHECK_EQ(progress_int(&f, "files_done"), on_osd - 1);
	CHECK(pando_map_uses_osd(&f.mds, ino[0], osd));
	CHECK_EQ(keys_under(TASKS), 1);
	/* Its holder dies: no more renewals, the lease expires in etcd. */
	CHECK(wait_job_done(&f, 5, 15000));
	CHECK_EQ(progress_int(&f, "files_done"), on_osd);
	CHECK(!pando_map_uses_osd(&f.mds, ino[0], osd));
	CHECK(data_reads_back(&f, ino[0], 100));
	CHECK_EQ(keys_under(CLAIMS), 0);
	end(&f);
}

static int count_on(struct mds_fixture *f, const uint64_t *ino, int n, uint32_t osd)
{
	int on = 0;

	for (int i = 0; i < n; i++)
		on += pando_map_uses_osd(&f->mds, ino[i], osd);
	return on;
}

static void test_two_managers_on_one_etcd_each_rebuild_their_own_files_once(void)
{
	uint64_t ia[6], ib[6];
	struct mds_fixture a, b;
	int on_a, on_b;

	CHECK_EQ(begin(&a, 3, tune_a), 0);
	CHECK_EQ(mds_fixture_start(&b, 3, tune_b), 0);
	make_files(&a, ia, 6);
	/* b's files take other inode numbers than a's (most of them), so a
	 * task of one run by the other shows in the counts. */
	for (int i = 0; i < 8; i++) {
		char pad[16];
		struct ns_attr at;

		snprintf(pad, sizeof(pad), "pad%d", i);
		CHECK_EQ(mds_fixture_create(&b, pad, &at), 0);
	}
	make_files(&b, ib, 6);
	on_a = count_on(&a, ia, 6, 1);
	on_b = count_on(&b, ib, 6, 1);
	put_job(6, 1);
	CHECK(wait_job_done(&a, 6, 30000));
	CHECK(wait_job_done(&b, 6, 30000));
	sleep_ms(1000);
	CHECK_EQ(progress_int(&a, "files_done"), on_a);
	CHECK_EQ(progress_int(&b, "files_done"), on_b);
	CHECK_EQ(count_on(&a, ia, 6, 1), 0);
	CHECK_EQ(count_on(&b, ib, 6, 1), 0);
	for (int i = 0; i < 6; i++) {
		CHECK(data_reads_back(&a, ia[i], 100 + (unsigned)i));
		CHECK(data_reads_back(&b, ib[i], 100 + (unsigned)i));
	}
	CHECK_EQ(keys_under(TASKS), 0);
	mds_fixture_finish(&b, check_failures);
	end(&a);
}

int main(void)
{
	test_a_job_moves_every_component_off_its_out_osd();
	test_the_files_with_fewest_healthy_copies_are_claimed_first();
	test_a_task_whose_osd_is_down_but_in_is_held_back_and_retried();
	test_a_task_that_fails_is_counted_and_held_back();
	test_a_claim_under_a_live_lease_is_left_until_the_lease_expires();
	test_two_managers_on_one_etcd_each_rebuild_their_own_files_once();
	CHECK_DONE();
}
