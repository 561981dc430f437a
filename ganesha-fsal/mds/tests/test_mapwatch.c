/* The map watch on a real etcd: a map the mgr puts at <prefix>map is
 * applied (source "etcd") and kept beside the store; a malformed map, or
 * one below the applied epoch, changes nothing and says why in the log;
 * and an engine opened again takes the kept map before etcd answers, so
 * it knows an OSD cluster.conf never listed. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cluster_map_json.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "mds_fixture.h"
#include "view.h"

#define NOSDS 3
#define NEW_OSD 9 /* in the maps, never in cluster.conf */

static struct etcd_fixture etcd;
static struct etcd_client *cl;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void tune(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
}

/* The fixture's OSDs and NEW_OSD (nobody listens at its address), up and
 * in, at epoch. */
static void put_map(struct mds_fixture *f, uint64_t epoch)
{
	char map[4096];
	size_t len;

	len = (size_t)snprintf(map, sizeof(map),
			       "{\"epoch\":%" PRIu64 ",\"partition\":%" PRIu64 ",\"osds\":[", epoch,
			       f->osds.partition);
	for (int i = 0; i < f->osds.n; i++)
		len += (size_t)snprintf(map + len, sizeof(map) - len,
					"{\"id\":%u,\"ctl\":\"%s\",\"nfs\":\"127.0.0.1:2049\","
					"\"weight\":1099511627776,\"up\":true,\"in\":true},",
					f->osds.osds[i].id, f->osds.osds[i].ctl);
	len += (size_t)snprintf(map + len, sizeof(map) - len,
				"{\"id\":%d,\"ctl\":\"127.0.0.1:1\",\"nfs\":\"127.0.0.1:1\","
				"\"weight\":1,\"up\":true,\"in\":true}]}",
				NEW_OSD);
	CHECK_EQ(etcd_put(cl, "/pando/map", map, len, 0), 0);
}

static void put_raw(const char *value)
{
	CHECK_EQ(etcd_put(cl, "/pando/map", value, strlen(value), 0), 0);
}

/* Waits up to 5 s for the applied epoch to reach epoch. */
static uint64_t wait_epoch(struct mds_fixture *f, uint64_t epoch)
{
	for (int i = 0; i < 100 && pando_view_get(&f->mds)->map.epoch < epoch; i++)
		sleep_ms(50);
	return pando_view_get(&f->mds)->map.epoch;
}

/* Waits up to 5 s for a log line holding needle. */
static int wait_log(const char *needle)
{
	for (int i = 0; i < 100 && !mds_fixture_log_find(needle); i++)
		sleep_ms(50);
	return mds_fixture_log_find(needle);
}

static int begin(struct mds_fixture *f)
{
	struct etcd_options o = { .endpoints = etcd.url };

	cl = NULL;
	if (etcd_fixture_start(&etcd) != 0 || etcd_client_new(&o, &cl) != 0)
		return -1;
	return mds_fixture_start(f, NOSDS, tune);
}

static void end(struct mds_fixture *f)
{
	mds_fixture_finish(f, check_failures);
	if (cl)
		etcd_client_free(cl);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
}

static void test_a_map_in_etcd_is_applied_and_kept_beside_the_store(struct mds_fixture *f)
{
	char path[256], why[256];
	struct cluster_map kept = { 0 };
	const struct pando_view *v;

	put_map(f, 4);
	CHECK_EQ(wait_epoch(f, 4), 4);
	v = pando_view_get(&f->mds);
	CHECK(!strcmp(v->source, "etcd"));
	CHECK(pando_view_osd(v, NEW_OSD) != NULL);
	CHECK(mds_fixture_log_find("cluster map epoch 4 applied (from etcd): osd.9 new"));
	/* Kept once applied: the file may lag the view by a moment. */
	snprintf(path, sizeof(path), "%s.map.json", f->db_path);
	for (int i = 0; i < 100 && access(path, F_OK) != 0; i++)
		sleep_ms(50);
	CHECK_EQ(cluster_map_load(path, &kept, why, sizeof(why)), 0);
	if (kept.osds) {
		CHECK_EQ(kept.epoch, 4);
		CHECK(cluster_map_osd(&kept, NEW_OSD) != NULL);
		cluster_map_free(&kept);
	}
}

static void test_a_malformed_or_older_map_changes_nothing(struct mds_fixture *f)
{
	const struct pando_view *before = pando_view_get(&f->mds);

	put_raw("{\"epoch\": 7, \"osds\": [{\"id\": 1}]}");
	CHECK(wait_log("malformed cluster map (etcd"));
	CHECK(wait_log("no \"ctl\""));
	put_raw("not json");
	CHECK(wait_log("not JSON"));
	put_map(f, 2);
	CHECK(wait_log("at epoch 2, below the applied 4"));
	CHECK(pando_view_get(&f->mds) == before);
	CHECK_EQ(pando_view_get(&f->mds)->map.epoch, 4);
	put_map(f, 5);
	CHECK_EQ(wait_epoch(f, 5), 5);
}

/* etcd stopped: the reopened engine has only the kept map to go on. */
static void test_a_reopened_engine_takes_the_kept_map_first(struct mds_fixture *f)
{
	const struct pando_view *v;

	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_EQ(mds_fixture_reopen(f), 0);
	v = pando_view_get(&f->mds);
	CHECK_EQ(v->map.epoch, 5);
	CHECK(!strcmp(v->source, "cache"));
	CHECK(pando_view_osd(v, NEW_OSD) != NULL);
	CHECK(etcd_fixture_start(&etcd) == 0);
}

int main(void)
{
	struct mds_fixture f;

	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the map watch needs one\n");
		return 1;
	}
	if (begin(&f) == 0) {
		test_a_map_in_etcd_is_applied_and_kept_beside_the_store(&f);
		test_a_malformed_or_older_map_changes_nothing(&f);
		test_a_reopened_engine_takes_the_kept_map_first(&f);
	} else {
		CHECK(!"the engine and etcd start");
	}
	end(&f);
	CHECK_DONE();
}
