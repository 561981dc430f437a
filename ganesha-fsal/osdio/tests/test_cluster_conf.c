/* The cluster.conf parser (cluster_conf.h) against valid and
 * malformed files.  A bad file must fail with the right errno, say in "why"
 * which file (and, for a syntax error, which line) is wrong, and leave the
 * caller's struct as it was so that cluster_conf_free on it stays safe. */
#include "check.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_conf.h"

/* Key 7, secret bytes 0x00..0x1f: the loaded key can be compared exactly. */
#define SECRET_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define KEY "key_file = cluster.key\n"
#define ADDRS " ctl=127.0.0.1:20591 nfs=127.0.0.1:20491"
#define OSD1 "osd 1" ADDRS "\n"

static char root[] = "/tmp/test_cluster_conf.XXXXXX";
static char conf_path[PATH_MAX]; /* root/cluster.conf, what most cases load */

static void path_in(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", root, name);
}

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	path_in(path, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void put_key(const char *name, unsigned id)
{
	char text[128];

	snprintf(text, sizeof(text), "id = %u\nsecret = " SECRET_HEX "\n", id);
	put(name, text);
}

/* "path:N: " for a syntax error on line N; just "path:" for line 0, the
 * errors that belong to the whole file (no osd lines, the key file). */
static int names_where(const char *why, const char *path, int line)
{
	char want[PATH_MAX + 32];

	if (line > 0)
		snprintf(want, sizeof(want), "%s:%d: ", path, line);
	else
		snprintf(want, sizeof(want), "%s:", path);
	return strncmp(why, want, strlen(want)) == 0;
}

/* Loads path expecting failure; src is the case's line here, for the report. */
static void expect_fail(int src, const char *path, int want_rc, int line, const char *what)
{
	static const struct cluster_conf zero;
	struct cluster_conf d;
	char why[PATH_MAX + 256] = "";
	int before = check_failures;

	memset(&d, 0, sizeof(d));
	CHECK_EQ(cluster_conf_load(path, &d, why, sizeof(why)), want_rc);
	CHECK(names_where(why, path, line));
	CHECK(strstr(why, what) != NULL);
	CHECK(memcmp(&d, &zero, sizeof(d)) == 0);
	cluster_conf_free(&d);
	if (check_failures != before)
		fprintf(stderr, "  case at %s:%d, why = \"%s\"\n", __FILE__, src, why);
}

#define EXPECT_FAIL_FILE(path, rc, line, what) expect_fail(__LINE__, path, rc, line, what)
#define EXPECT_INVALID(text, line, what) \
	(put("cluster.conf", text), expect_fail(__LINE__, conf_path, -EINVAL, line, what))

static int load_valid(int src, const char *path, struct cluster_conf *d)
{
	char why[PATH_MAX + 256] = "";
	int rc;

	memset(d, 0, sizeof(*d));
	rc = cluster_conf_load(path, d, why, sizeof(why));
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "  case at %s:%d, why = \"%s\"\n", __FILE__, src, why);
	return rc;
}

#define LOAD_VALID(text, d) (put("cluster.conf", text), load_valid(__LINE__, conf_path, d))

static void check_key(const struct cluster_conf *d, unsigned id)
{
	uint8_t want[CLUSTER_KEY_SECRET_LEN];

	for (int i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		want[i] = (uint8_t)i;
	CHECK_EQ(d->key.id, id);
	CHECK_MEM(d->key.secret, want, sizeof(want));
}

static void test_minimal(void)
{
	struct cluster_conf d;

	if (LOAD_VALID(KEY OSD1, &d))
		return;
	check_key(&d, 7);
	CHECK_EQ(d.map.partition, 1);
	CHECK_EQ(d.map.nosds, 1);
	CHECK_EQ(d.map.osds[0].id, 1);
	CHECK(!strcmp(d.map.osds[0].ctl, "127.0.0.1:20591"));
	CHECK(!strcmp(d.map.osds[0].nfs, "127.0.0.1:20491"));
	CHECK(!strcmp(d.map.osds[0].advertise, "127.0.0.1:20491"));
	CHECK_EQ(d.map.osds[0].weight, CLUSTER_CONF_DEFAULT_WEIGHT);
	/* The seed: epoch 0, every OSD up and in. */
	CHECK_EQ(d.map.epoch, 0);
	CHECK(d.map.osds[0].up && d.map.osds[0].in && !d.map.osds[0].removed);
	cluster_conf_free(&d);
	CHECK(d.map.osds == NULL && d.map.nosds == 0);
	cluster_conf_free(&d); /* twice is harmless */
}

/* Everything a hand-written file may contain, CRLF from a Windows editor
 * included, and a last line without its newline. */
static void test_full(void)
{
	static const char text[] =
		"# Pando test cluster\r\n"
		"\r\n"
		"\tkey_file\t=\tcluster.key   \r\n"
		"partition = 7\t# the OSD partition\r\n"
		"   \t \r\n"
		"osd 3\tctl=10.0.0.3:20591  nfs=10.0.0.3:20491 advertise=192.0.2.3:20491"
		" capacity=1000000000000 \t\r\n"
		"osd\t1 ctl=10.0.0.1:20591 nfs=10.0.0.1:20491  # advertise: nfs\r\n"
		"osd 2 ctl=10.0.0.2:20591 nfs=10.0.0.2:20491 capacity=0 pool=ssd-1";
	struct cluster_conf d;

	if (LOAD_VALID(text, &d))
		return;
	check_key(&d, 7);
	CHECK_EQ(d.map.partition, 7);
	CHECK_EQ(d.map.nosds, 3);
	CHECK_EQ(d.map.osds[0].id, 1);
	CHECK(!strcmp(d.map.osds[0].advertise, "10.0.0.1:20491"));
	CHECK_EQ(d.map.osds[1].id, 2);
	CHECK(!strcmp(d.map.osds[1].nfs, "10.0.0.2:20491"));
	CHECK_EQ(d.map.osds[2].id, 3);
	CHECK(!strcmp(d.map.osds[2].ctl, "10.0.0.3:20591"));
	CHECK(!strcmp(d.map.osds[2].nfs, "10.0.0.3:20491"));
	CHECK(!strcmp(d.map.osds[2].advertise, "192.0.2.3:20491"));
	CHECK_EQ(d.map.osds[2].weight, 1000000000000ll);
	CHECK_EQ(d.map.osds[1].weight, CLUSTER_CONF_DEFAULT_WEIGHT); /* capacity=0: none given */
	CHECK(!strcmp(d.map.osds[1].pool, "ssd-1"));
	CHECK(!strcmp(d.map.osds[0].pool, ""));
	cluster_conf_free(&d);
}

static void test_ipv6(void)
{
	struct cluster_conf d;

	if (LOAD_VALID(KEY "osd 1 ctl=[::1]:20591 nfs=[::1]:20491\n"
			   "osd 2 ctl=[::1]:20592 nfs=[::1]:20492 advertise=[2001:db8::2]:20491\n",
		       &d))
		return;
	CHECK(!strcmp(d.map.osds[0].ctl, "[::1]:20591"));
	CHECK(!strcmp(d.map.osds[0].nfs, "[::1]:20491"));
	CHECK(!strcmp(d.map.osds[0].advertise, "[::1]:20491"));
	CHECK(!strcmp(d.map.osds[1].advertise, "[2001:db8::2]:20491"));
	cluster_conf_free(&d);
}

/* Lookups may binary-search, so the order is the contract, not the file's. */
static void test_sorted(void)
{
	static const uint32_t want[] = { 2, 17, 30, 4294967295u };
	struct cluster_conf d;

	if (LOAD_VALID(KEY "osd 30" ADDRS "\nosd 2" ADDRS "\nosd 4294967295" ADDRS "\nosd 17" ADDRS
			   "\n",
		       &d))
		return;
	CHECK_EQ(d.map.nosds, 4);
	for (size_t i = 0; i < d.map.nosds && i < 4; i++)
		CHECK_EQ(d.map.osds[i].id, want[i]);
	CHECK(cluster_map_osd(&d.map, 17) == &d.map.osds[1]);
	CHECK(cluster_map_osd(&d.map, 4294967295u) == &d.map.osds[3]);
	CHECK(cluster_map_osd(&d.map, 5) == NULL);
	cluster_conf_free(&d);
}

/* 63 characters fit the 64-byte fields with their NUL. */
static void test_longest_address(void)
{
	char text[256], addr[CLUSTER_MAP_ADDR_MAX];
	struct cluster_conf d;

	memset(addr, 'h', sizeof(addr));
	strcpy(addr + CLUSTER_MAP_ADDR_MAX - 1 - 6, ":20491");
	snprintf(text, sizeof(text), KEY "osd 1 ctl=%s nfs=%s\n", addr, addr);
	if (LOAD_VALID(text, &d))
		return;
	CHECK(!strcmp(d.map.osds[0].ctl, addr));
	CHECK(!strcmp(d.map.osds[0].advertise, addr));
	cluster_conf_free(&d);
}

/* Relative key files are found next to cluster.conf, whatever the
 * working directory: etc/cluster.key (id 9) is not ./cluster.key (id 7). */
static void test_key_file_paths(void)
{
	char etc[PATH_MAX], path[PATH_MAX], text[PATH_MAX + 64];
	struct cluster_conf d;

	path_in(etc, "etc");
	CHECK_EQ(mkdir(etc, 0700), 0);
	put_key("etc/cluster.key", 9);
	path_in(path, "etc/cluster.conf");

	put("etc/cluster.conf", KEY OSD1);
	if (!load_valid(__LINE__, path, &d)) {
		check_key(&d, 9);
		cluster_conf_free(&d);
	}
	put("etc/cluster.conf", "key_file = ../cluster.key\n" OSD1);
	if (!load_valid(__LINE__, path, &d)) {
		check_key(&d, 7);
		cluster_conf_free(&d);
	}
	snprintf(text, sizeof(text), "key_file = %s/cluster.key\n" OSD1, root);
	put("etc/cluster.conf", text);
	if (!load_valid(__LINE__, path, &d)) {
		check_key(&d, 7);
		cluster_conf_free(&d);
	}
	/* A bare file name has "." as its folder. */
	put("etc/cluster.conf", KEY OSD1);
	CHECK_EQ(chdir(etc), 0);
	if (!load_valid(__LINE__, "cluster.conf", &d)) {
		check_key(&d, 9);
		cluster_conf_free(&d);
	}
	CHECK_EQ(chdir("/"), 0);
}

static void test_bad_settings(void)
{
	EXPECT_INVALID(OSD1, 0, "no key_file");
	EXPECT_INVALID(KEY "colour = blue\n" OSD1, 2, "unknown setting \"colour\"");
	EXPECT_INVALID(KEY "partition 3\n" OSD1, 2, "expected");
	EXPECT_INVALID("key_file cluster.key\n" OSD1, 1, "expected");
	EXPECT_INVALID("key_file =\n" OSD1, 1, "bad key_file");
	EXPECT_INVALID(KEY "partition = 0\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = -1\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = one\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = 1.5\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = 1 2\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition =\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = 18446744073709551616\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = +5\n" OSD1, 2, "partition");
	EXPECT_INVALID(KEY "partition = \v-1\n" OSD1, 2, "partition");
}

static void test_no_osds(void)
{
	EXPECT_INVALID("", 0, "no osd lines");
	EXPECT_INVALID("\n\n# nothing\n", 0, "no osd lines");
	EXPECT_INVALID(KEY, 0, "no osd lines");
	EXPECT_INVALID(KEY "osd\n", 2, "expected");
	EXPECT_INVALID(KEY "osd \t\n", 2, "expected");
}

static void test_bad_osd_ids(void)
{
	static const char *const ids[] = {
		"0", "-1", "-0", "one", "1x", "0x10", "4294967296", "18446744073709551616",
	};
	char text[256];

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(text, sizeof(text), KEY "osd %s" ADDRS "\n", ids[i]);
		EXPECT_INVALID(text, 2, "1..4294967295");
	}
	EXPECT_INVALID(KEY "osd" ADDRS "\n", 2, "1..4294967295");
}

static void test_bad_osd_options(void)
{
	EXPECT_INVALID(KEY "osd 1" ADDRS " weight=3\n", 2, "unknown osd option \"weight\"");
	EXPECT_INVALID(KEY "osd 1" ADDRS " =3\n", 2, "unknown osd option");
	EXPECT_INVALID(KEY "osd 1" ADDRS " capacity\n", 2, "expected name=value");
	EXPECT_INVALID(KEY "osd 1 ctl 127.0.0.1:20591 nfs=127.0.0.1:20491\n", 2, "name=value");
	EXPECT_INVALID(KEY "osd 1 nfs=127.0.0.1:20491\n", 2, "needs ctl= and nfs=");
	EXPECT_INVALID(KEY "osd 1 ctl=127.0.0.1:20591\n", 2, "needs ctl= and nfs=");
	EXPECT_INVALID(KEY "osd 1 advertise=127.0.0.1:20491\n", 2, "needs ctl= and nfs=");
	EXPECT_INVALID(KEY "osd 1\n", 2, "needs ctl= and nfs=");
	EXPECT_INVALID(KEY "osd 1" ADDRS " capacity=lots\n", 2, "bad capacity");
	EXPECT_INVALID(KEY "osd 1" ADDRS " capacity=-1\n", 2, "bad capacity");
	EXPECT_INVALID(KEY "osd 1" ADDRS " capacity=\n", 2, "bad capacity");
	EXPECT_INVALID(KEY "osd 1" ADDRS " capacity=1e12\n", 2, "bad capacity");
	EXPECT_INVALID(KEY "osd 1" ADDRS " capacity=18446744073709551616\n", 2, "bad capacity");
	EXPECT_INVALID(KEY "osd 1" ADDRS " pool=\n", 2, "is not a pool name");
	EXPECT_INVALID(KEY "osd 1" ADDRS " pool=SSD\n", 2, "\"SSD\" is not a pool name");
	EXPECT_INVALID(KEY "osd 1" ADDRS " pool=abcdefghijklmnopqrstuvwxyz0123456\n", 2,
		       "is not a pool name");
}

/* Each bad address in each of the three address options, on line 2. */
static void expect_bad_addr(int src, const char *addr)
{
	static const char *const before[] = {
		KEY "osd 1 ctl=",
		KEY "osd 1 ctl=127.0.0.1:20591 nfs=",
		KEY "osd 1" ADDRS " advertise=",
	};
	static const char *const after[] = { " nfs=127.0.0.1:20491\n", "\n", "\n" };
	char text[512];

	for (int i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), "%s%s%s", before[i], addr, after[i]);
		put("cluster.conf", text);
		expect_fail(src, conf_path, -EINVAL, 2, "is not host:port");
	}
}

static void test_bad_addresses(void)
{
	char long_addr[CLUSTER_MAP_ADDR_MAX + 1];

	expect_bad_addr(__LINE__, "");
	expect_bad_addr(__LINE__, "127.0.0.1");
	expect_bad_addr(__LINE__, "127.0.0.1:");
	expect_bad_addr(__LINE__, "127.0.0.1:0");
	expect_bad_addr(__LINE__, "127.0.0.1:65536");
	expect_bad_addr(__LINE__, "127.0.0.1:-1");
	expect_bad_addr(__LINE__, "127.0.0.1:nfs");
	expect_bad_addr(__LINE__, "127.0.0.1:20491x");
	expect_bad_addr(__LINE__, "127.0.0.1:99999999999999999999");
	expect_bad_addr(__LINE__, ":20491");
	expect_bad_addr(__LINE__, "[::1]");
	/* 64 characters: one more than the fields hold. */
	memset(long_addr, 'h', sizeof(long_addr));
	strcpy(long_addr + CLUSTER_MAP_ADDR_MAX - 6, ":20491");
	expect_bad_addr(__LINE__, long_addr);
}

static void test_duplicate_id(void)
{
	EXPECT_INVALID(KEY OSD1 "osd 2" ADDRS "\n" OSD1, 4, "osd 1 listed twice");
	EXPECT_INVALID(KEY "osd 01" ADDRS "\n" OSD1, 3, "listed twice");
}

/* The buffer holds 1022 characters and the newline.  A longer line is an
 * error, not split in two: the tail of a long comment would otherwise be
 * read as a setting. */
static void test_long_lines(void)
{
	char text[4096];
	size_t n = strlen(KEY);
	struct cluster_conf d;

	memcpy(text, KEY, n);
	text[n] = '#';
	memset(text + n + 1, 'x', 1021);
	strcpy(text + n + 1022, "\n" OSD1);
	if (!LOAD_VALID(text, &d))
		cluster_conf_free(&d);
	text[n + 1022] = 'x';
	strcpy(text + n + 1023, "\n" OSD1);
	EXPECT_INVALID(text, 2, "line too long");
	strcpy(text + n + 1023, "partition = 5\n" OSD1);
	EXPECT_INVALID(text, 2, "line too long");
	memset(text + n, 'x', 3000);
	strcpy(text + n + 3000, "\n" OSD1);
	EXPECT_INVALID(text, 2, "line too long");
}

static void write_osds(int n)
{
	char path[PATH_MAX];
	FILE *f;

	path_in(path, "cluster.conf");
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(KEY, f);
	for (int id = n; id > 0; id--)
		fprintf(f, "osd %d" ADDRS "\n", id);
	fclose(f);
}

static void test_max_osds(void)
{
	struct cluster_conf d;

	write_osds(CLUSTER_MAP_MAX_OSDS);
	if (!load_valid(__LINE__, conf_path, &d)) {
		CHECK_EQ(d.map.nosds, CLUSTER_MAP_MAX_OSDS);
		CHECK_EQ(d.map.osds[0].id, 1);
		CHECK_EQ(d.map.osds[CLUSTER_MAP_MAX_OSDS - 1].id, CLUSTER_MAP_MAX_OSDS);
		cluster_conf_free(&d);
	}
	write_osds(CLUSTER_MAP_MAX_OSDS + 1);
	EXPECT_FAIL_FILE(conf_path, -EINVAL, CLUSTER_MAP_MAX_OSDS + 2, "more than 1024 OSDs");
}

static void test_unreadable(void)
{
	char path[PATH_MAX];

	path_in(path, "missing.conf_path");
	EXPECT_FAIL_FILE(path, -ENOENT, 0, strerror(ENOENT));
	path_in(path, "missing/cluster.conf");
	EXPECT_FAIL_FILE(path, -ENOENT, 0, strerror(ENOENT));
	/* A directory opens for reading; only the read fails. */
	path_in(path, "etc");
	EXPECT_FAIL_FILE(path, -EISDIR, 0, strerror(EISDIR));
	if (geteuid() != 0) { /* root reads anything */
		put("cluster.conf", KEY OSD1);
		CHECK_EQ(chmod(conf_path, 0), 0);
		EXPECT_FAIL_FILE(conf_path, -EACCES, 0, strerror(EACCES));
		CHECK_EQ(chmod(conf_path, 0600), 0);
	}
}

/* Whatever cluster_key_load refuses fails the load, naming both files. */
static void expect_bad_key(int src, const char *key_text, int want_rc, const char *what)
{
	char key_path[PATH_MAX];
	int before = check_failures;

	path_in(key_path, "bad.key");
	if (key_text)
		put("bad.key", key_text);
	else
		unlink(key_path);
	put("cluster.conf", "key_file = bad.key\n" OSD1);
	expect_fail(src, conf_path, want_rc, 0, what);
	expect_fail(src, conf_path, want_rc, 0, key_path);
	if (check_failures != before)
		fprintf(stderr, "  key file was \"%s\"\n", key_text ? key_text : "(none)");
}

static void test_bad_keys(void)
{
	char big[2048];

	expect_bad_key(__LINE__, NULL, -ENOENT, strerror(ENOENT));
	expect_bad_key(__LINE__, "", -EINVAL, "needs both id and secret");
	expect_bad_key(__LINE__, "id = 7\n", -EINVAL, "needs both id and secret");
	expect_bad_key(__LINE__, "secret = " SECRET_HEX "\n", -EINVAL, "needs both");
	expect_bad_key(__LINE__, "id = 0\nsecret = " SECRET_HEX "\n", -EINVAL, "1..65535");
	expect_bad_key(__LINE__, "id = 65536\nsecret = " SECRET_HEX "\n", -EINVAL, "1..65535");
	expect_bad_key(__LINE__, "id = seven\nsecret = " SECRET_HEX "\n", -EINVAL, "1..65535");
	expect_bad_key(__LINE__, "id = 7\nsecret = 0001\n", -EINVAL, "64 hex digits");
	expect_bad_key(__LINE__, "id = 7\nsecret = " SECRET_HEX "00\n", -EINVAL, "64 hex digits");
	expect_bad_key(__LINE__, "id = 7\nsecret = zz" SECRET_HEX "\n", -EINVAL, "64 hex");
	expect_bad_key(__LINE__, "id = 7\nsecret " SECRET_HEX "\n", -EINVAL, "without '='");
	expect_bad_key(__LINE__, "id = 7\nsalt = 1\nsecret = " SECRET_HEX "\n", -EINVAL,
		       "unknown name");
	memset(big, '#', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	expect_bad_key(__LINE__, big, -EINVAL, "longer than 1 KiB");
}

/* A small buffer truncates the message but never writes past cap. */
static void test_small_why(void)
{
	struct cluster_conf d;
	char why[16];

	memset(&d, 0, sizeof(d));
	memset(why, 'Z', sizeof(why));
	put("cluster.conf", KEY "colour = blue\n" OSD1);
	CHECK_EQ(cluster_conf_load(conf_path, &d, why, 8), -EINVAL);
	CHECK_EQ(strlen(why), 7);
	CHECK_EQ(why[8], 'Z');
	CHECK_EQ(why[15], 'Z');
	memset(why, 'Z', sizeof(why));
	CHECK_EQ(cluster_conf_load("/nonexistent/cluster.conf", &d, why, 8), -ENOENT);
	CHECK_EQ(strlen(why), 7);
	CHECK_EQ(why[8], 'Z');
	CHECK(d.map.osds == NULL);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	path_in(conf_path, "cluster.conf");
	put_key("cluster.key", 7);
	test_minimal();
	test_full();
	test_ipv6();
	test_sorted();
	test_longest_address();
	test_key_file_paths();
	test_bad_settings();
	test_no_osds();
	test_bad_osd_ids();
	test_bad_osd_options();
	test_bad_addresses();
	test_duplicate_id();
	test_long_lines();
	test_max_osds();
	test_unreadable();
	test_bad_keys();
	test_small_why();
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	CHECK_DONE();
}
