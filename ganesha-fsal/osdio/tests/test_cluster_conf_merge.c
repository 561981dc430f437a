/* A newer cluster map merged over an older one (cluster_map_merge), as
 * pando-fsck brings cluster.conf's seed up to the map the manager kept
 * beside its store and the manager applies each map from etcd: the newer
 * map's addresses and state win, OSDs it added join in id order, OSDs
 * only the older one lists stay known, marked removed; and a kept map
 * that cannot be read or parsed is an error the caller can report. */
#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_conf.h"
#include "cluster_map_json.h"

/* The path written, in a buffer the next call reuses. */
static const char *write_tmp(const char *dir, const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

static void load_seed(const char *dir, struct cluster_conf *c)
{
	char why[256];

	write_tmp(dir, "cluster.key",
		  "id = 1\nsecret = "
		  "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
	const char *p = write_tmp(dir, "cluster.conf",
				  "key_file = cluster.key\n"
				  "osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491\n"
				  "osd 3 ctl=127.0.0.1:20593 nfs=127.0.0.1:20493\n");
	CHECK_EQ(cluster_conf_load(p, c, why, sizeof(why)), 0);
}

static void test_map_addresses_win_and_new_osds_join_in_order(const char *dir)
{
	struct cluster_conf c;
	struct cluster_map m, d;
	char why[256];
	const char *p;

	load_seed(dir, &c);
	p = write_tmp(
		dir, "ns.map.json",
		"{\"epoch\": 4, \"partition\": 1, \"osds\": ["
		"{\"id\": 1, \"ctl\": \"10.0.0.1:20591\", \"nfs\": \"10.0.0.1:20491\","
		" \"weight\": 1, \"up\": true, \"in\": true},"
		"{\"id\": 2, \"ctl\": \"10.0.0.2:20592\", \"nfs\": \"10.0.0.2:20492\","
		" \"advertise\": \"192.0.2.2:20492\", \"weight\": 1, \"up\": true, \"in\": true}]}");

	CHECK_EQ(cluster_map_load(p, &m, why, sizeof(why)), 0);
	CHECK_EQ(cluster_map_merge(&c.map, &m, &d), 0);
	CHECK_EQ(d.epoch, 4);
	CHECK_EQ(d.nosds, 3);
	CHECK_EQ(d.osds[0].id, 1);
	CHECK_EQ(d.osds[1].id, 2);
	CHECK_EQ(d.osds[2].id, 3);
	CHECK(strcmp(cluster_map_osd(&d, 1)->ctl, "10.0.0.1:20591") == 0);
	CHECK_EQ(cluster_map_osd(&d, 1)->weight, 1);
	CHECK(strcmp(cluster_map_osd(&d, 2)->advertise, "192.0.2.2:20492") == 0);
	CHECK(cluster_map_osd_takes(cluster_map_osd(&d, 2)));
	/* An OSD the map no longer lists keeps the seed's addresses (fsck
	 * still looks for its objects), removed: it takes nothing new. */
	CHECK(strcmp(cluster_map_osd(&d, 3)->nfs, "127.0.0.1:20493") == 0);
	CHECK(cluster_map_osd(&d, 3)->removed);
	CHECK(!cluster_map_osd_takes(cluster_map_osd(&d, 3)));
	CHECK(!cluster_map_osd(&d, 1)->removed);
	cluster_map_free(&m);
	cluster_map_free(&d);
	cluster_conf_free(&c);
}

static void test_missing_and_broken_kept_maps(const char *dir)
{
	struct cluster_map m = { .epoch = 9 };
	char path[512], why[256] = "";

	snprintf(path, sizeof(path), "%s/absent.map.json", dir);
	CHECK_EQ(cluster_map_load(path, &m, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "absent.map.json") != NULL);
	CHECK_EQ(cluster_map_load(write_tmp(dir, "bad.map.json", "{\"epoch\": "), &m, why,
				  sizeof(why)),
		 -EINVAL);
	CHECK_EQ(m.epoch, 9);
}

int main(void)
{
	char dir[] = "/tmp/pando-merge-XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	test_map_addresses_win_and_new_osds_join_in_order(dir);
	test_missing_and_broken_kept_maps(dir);
	for (const char *n = "cluster.key\0cluster.conf\0ns.map.json\0bad.map.json\0"; *n;
	     n += strlen(n) + 1) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", dir, n);
		unlink(p);
	}
	rmdir(dir);
	CHECK_DONE();
}
