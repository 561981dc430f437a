/* The cluster map parser (cluster_map_json.h) against the map of mgr/README.md
 * and against broken maps: every bad map fails with -EINVAL and a reason
 * naming what is wrong, never a crash, and leaves the caller's struct as
 * it was. */
#include "check.h"

#include <errno.h>
#include <string.h>

#include "cluster_map_json.h"

#define OSD(id, extra) \
	"{\"id\": " #id ", \"ctl\": \"127.0.0.1:2059" #id "\", \"nfs\": \"127.0.0.1:2049" #id \
	"\", \"weight\": 1099511627776, \"up\": true, \"in\": true" extra "}"

static int parse(const char *json, struct cluster_map *m, char *why, size_t cap)
{
	return cluster_map_parse(json, strlen(json), m, why, cap);
}

/* A bad map: -EINVAL, a reason containing `want`, *m untouched. */
static void bad(const char *json, const char *want)
{
	struct cluster_map m = { .epoch = 77 };
	char why[256] = "";
	int rc = parse(json, &m, why, sizeof(why));

	CHECK_EQ(rc, -EINVAL);
	CHECK(strstr(why, want) != NULL);
	if (!strstr(why, want))
		fprintf(stderr, "  why = \"%s\", want \"%s\"\n", why, want);
	CHECK_EQ(m.epoch, 77);
	CHECK(m.osds == NULL);
}

static void test_readme_map(void)
{
	const char *json =
		"{\"epoch\": 12, \"partition\": 1, \"osds\": [{\"id\": 1, \"ctl\": "
		"\"127.0.0.1:20591\", \"nfs\": \"127.0.0.1:20491\", \"advertise\": "
		"\"10.0.2.2:20491\", \"weight\": 1099511627776, \"domain\": \"host-a\", "
		"\"pool\": \"fast\", \"up\": true, \"in\": true, \"down_at\": 0, \"out_at\": 0}], \"pools\": "
		"[{\"name\": \"default\", \"scheme\": \"mirror\", \"copies\": 2, "
		"\"stripe_unit\": 1048576}], \"updated_at\": 1764070000.5, \"updated_by\": "
		"\"mgr-a\", \"reason\": \"osd.3 down: presence lease expired\"}";
	struct cluster_map m;
	char why[256];
	const struct cluster_map_osd *o;

	CHECK_EQ(parse(json, &m, why, sizeof(why)), 0);
	CHECK_EQ(m.epoch, 12);
	CHECK_EQ(m.partition, 1);
	CHECK_EQ(m.nosds, 1);
	o = cluster_map_osd(&m, 1);
	CHECK(o != NULL);
	if (o) {
		CHECK(!strcmp(o->ctl, "127.0.0.1:20591"));
		CHECK(!strcmp(o->nfs, "127.0.0.1:20491"));
		CHECK(!strcmp(o->advertise, "10.0.2.2:20491"));
		CHECK(!strcmp(o->domain, "host-a"));
		CHECK(!strcmp(o->pool, "fast"));
		CHECK_EQ(o->weight, 1099511627776ull);
		CHECK(o->up && o->in);
		CHECK(cluster_map_osd_takes(o));
	}
	CHECK(cluster_map_osd(&m, 2) == NULL);
	cluster_map_free(&m);
}

static void test_sorted_and_states(void)
{
	const char *json =
		"{\"epoch\": 3, \"partition\": 9, \"osds\": ["
		"{\"id\": 3, \"ctl\": \"h:1\", \"nfs\": \"h:2\", \"weight\": 0, \"up\": true, "
		"\"in\": true},"
		"{\"id\": 1, \"ctl\": \"h:3\", \"nfs\": \"h:4\", \"weight\": 5, \"up\": false, "
		"\"in\": true},"
		"{\"id\": 2, \"ctl\": \"[::1]:5\", \"nfs\": \"[::1]:6\", \"weight\": 5, "
		"\"up\": true, \"in\": false, \"advertise\": \"\"}]}";
	struct cluster_map m;
	char why[256];

	CHECK_EQ(parse(json, &m, why, sizeof(why)), 0);
	CHECK_EQ(m.partition, 9);
	CHECK_EQ(m.nosds, 3);
	for (size_t i = 0; i < m.nosds; i++) {
		CHECK_EQ(m.osds[i].id, i + 1);
		/* weight 0, down, out: none takes new components */
		CHECK(!cluster_map_osd_takes(&m.osds[i]));
	}
	/* No advertise (or ""): clients are told the nfs address. */
	CHECK(!strcmp(m.osds[1].advertise, "[::1]:6"));
	CHECK(!strcmp(m.osds[0].domain, ""));
	CHECK(!strcmp(m.osds[0].pool, ""));
	cluster_map_free(&m);
}

static void test_empty_osds(void)
{
	struct cluster_map m;
	char why[256];

	CHECK_EQ(parse("{\"epoch\": 1, \"osds\": []}", &m, why, sizeof(why)), 0);
	CHECK_EQ(m.nosds, 0);
	CHECK_EQ(m.partition, 1);
	cluster_map_free(&m);
}

static void test_malformed_json(void)
{
	bad("", "not JSON");
	bad("{", "not JSON");
	bad("{\"epoch\": 1, \"osds\": [}", "not JSON");
	bad("[1, 2]", "not a JSON object");
	bad("\"map\"", "not JSON");
	bad("{\"epoch\": 1, \"epoch\": 2, \"osds\": []}", "not JSON");
	bad("{\"epoch\": 1, \"osds\": []} trailing", "not JSON");
}

static void test_missing_fields(void)
{
	bad("{\"osds\": []}", "no \"epoch\"");
	bad("{\"epoch\": 1}", "no \"osds\"");
	bad("{\"epoch\": 1, \"osds\": [{\"ctl\": \"h:1\"}]}", "osds[0]: no \"id\"");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 4, \"nfs\": \"h:1\"}]}", "osd 4: no \"ctl\"");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 4, \"ctl\": \"h:1\"}]}", "osd 4: no \"nfs\"");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 4, \"ctl\": \"h:1\", \"nfs\": \"h:2\", "
	    "\"up\": true, \"in\": true}]}",
	    "no \"weight\"");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 4, \"ctl\": \"h:1\", \"nfs\": \"h:2\", "
	    "\"weight\": 1, \"in\": true}]}",
	    "no \"up\"");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 4, \"ctl\": \"h:1\", \"nfs\": \"h:2\", "
	    "\"weight\": 1, \"up\": true}]}",
	    "no \"in\"");
}

static void test_wrong_types(void)
{
	bad("{\"epoch\": \"1\", \"osds\": []}", "\"epoch\" is not an integer");
	bad("{\"epoch\": 1.5, \"osds\": []}", "\"epoch\" is not an integer");
	bad("{\"epoch\": 1, \"osds\": {}}", "\"osds\" is not an array");
	bad("{\"epoch\": 1, \"osds\": [7]}", "osds[0] is not an object");
	bad("{\"epoch\": 1, \"osds\": [" OSD(1, ", \"up\": 1") "]}", "not JSON");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"h:1\", \"nfs\": \"h:2\", "
	    "\"weight\": 1, \"up\": 1, \"in\": true}]}",
	    "\"up\" is not true or false");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": 5, \"nfs\": \"h:2\"}]}",
	    "\"ctl\" is not a string");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"nohost\", \"nfs\": \"h:2\"}]}",
	    "is not host:port");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"h:99999\", \"nfs\": \"h:2\"}]}",
	    "is not host:port");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"\", \"nfs\": \"h:2\"}]}",
	    "\"ctl\" is empty");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"h:1\\u0000x\", \"nfs\": \"h:2\"}]}",
	    "not JSON");
	bad("{\"epoch\": 1, \"osds\": [" OSD(1, ", \"pool\": 7") "]}", "\"pool\" is not a string");
	bad("{\"epoch\": 1, \"osds\": [" OSD(1, ", \"pool\": \"Fast\"") "]}",
	    "\"pool\" = \"Fast\" is not a pool name");
	bad("{\"epoch\": 1, \"osds\": [" OSD(1, ", \"pool\": \"-x\"") "]}", "is not a pool name");
	bad("{\"epoch\": 1, \"osds\": [" OSD(
		    1, ", \"pool\": \"abcdefghijklmnopqrstuvwxyz0123456\"") "]}",
	    "\"pool\" is too long");
}

static void test_duplicate_ids(void)
{
	bad("{\"epoch\": 1, \"osds\": [" OSD(2, "") ", " OSD(1, "") ", " OSD(2, "") "]}",
	    "osd 2 listed twice");
}

static void test_huge_numbers(void)
{
	char json[512];

	bad("{\"epoch\": 0, \"osds\": []}", "out of range");
	bad("{\"epoch\": -1, \"osds\": []}", "out of range");
	bad("{\"epoch\": 1, \"partition\": 0, \"osds\": []}", "out of range");
	/* Past int64: jansson refuses it as it parses. */
	bad("{\"epoch\": 18446744073709551616, \"osds\": []}", "not JSON");
	bad("{\"epoch\": 1e30, \"osds\": []}", "not an integer");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 4294967296, \"ctl\": \"h:1\"}]}", "out of range");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 0, \"ctl\": \"h:1\"}]}", "out of range");
	bad("{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"h:1\", \"nfs\": \"h:2\", "
	    "\"weight\": -5, \"up\": true, \"in\": true}]}",
	    "out of range");
	/* The largest values that fit are taken whole. */
	snprintf(json, sizeof(json),
		 "{\"epoch\": 9223372036854775807, \"osds\": [{\"id\": "
		 "4294967295, \"ctl\": \"h:1\", \"nfs\": \"h:2\", \"weight\": "
		 "9223372036854775807, \"up\": true, \"in\": true}]}");
	{
		struct cluster_map m;
		char why[256];

		CHECK_EQ(parse(json, &m, why, sizeof(why)), 0);
		CHECK(m.epoch == 9223372036854775807ull);
		CHECK(m.nosds == 1 && m.osds[0].id == 4294967295u);
		CHECK(m.osds[0].weight == 9223372036854775807ull);
		cluster_map_free(&m);
	}
}

static void test_long_strings_and_small_why(void)
{
	char json[512], host[80];
	struct cluster_map m = { 0 };
	char why[8];

	memset(host, 'a', 70);
	host[70] = 0;
	snprintf(json, sizeof(json),
		 "{\"epoch\": 1, \"osds\": [{\"id\": 1, \"ctl\": \"%s:1\", "
		 "\"nfs\": \"h:2\"}]}",
		 host);
	bad(json, "too long");
	/* A reason longer than the caller's buffer is cut, not overrun. */
	CHECK_EQ(parse(json, &m, why, sizeof(why)), -EINVAL);
	CHECK(strlen(why) == sizeof(why) - 1);
	CHECK_EQ(cluster_map_parse("{", 1, &m, NULL, 0), -EINVAL);
}

int main(void)
{
	test_readme_map();
	test_sorted_and_states();
	test_empty_osds();
	test_malformed_json();
	test_missing_fields();
	test_wrong_types();
	test_duplicate_ids();
	test_huge_numbers();
	test_long_strings_and_small_why();
	CHECK_DONE();
}
