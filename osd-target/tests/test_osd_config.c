/* pando-osd configuration parsing: file syntax, values, required keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "osd_config.h"

static int load_text(struct osd_config *cfg, const char *text, char *err, size_t cap)
{
	char path[] = "/tmp/pando-config-XXXXXX";
	int fd = mkstemp(path);
	int rc;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -99;
	close(fd);
	osd_config_defaults(cfg);
	rc = osd_config_load(cfg, path, err, cap);
	unlink(path);
	return rc;
}

/* The disk model's caps: bytes per second, K/M/G powers of 1024. */
static void test_bandwidth(void)
{
	static const char *const bad[] = { "-1", "4MB",  "4T", "1.5M",         " 4M", "M",
					   "",   "0x10", "+4", "20000000000G", "4 M" };
	struct osd_config cfg;
	uint64_t v = 7;
	char err[256];

	CHECK_EQ(load_text(&cfg, "osd_id = 1\n", err, sizeof(err)), 0);
	CHECK_EQ(cfg.read_bandwidth, 0); /* absent: unlimited */
	CHECK_EQ(cfg.write_bandwidth, 0);
	CHECK_EQ(load_text(&cfg, "write_bandwidth = 4M\nread_bandwidth = 512K\n", err, sizeof(err)),
		 0);
	CHECK_EQ(cfg.write_bandwidth, 4ull << 20);
	CHECK_EQ(cfg.read_bandwidth, 512ull << 10);
	CHECK_EQ(load_text(&cfg, "read_bandwidth = 2G\nwrite_bandwidth = 0\n", err, sizeof(err)),
		 0);
	CHECK_EQ(cfg.read_bandwidth, 2ull << 30);
	CHECK_EQ(cfg.write_bandwidth, 0);
	CHECK_EQ(osd_config_parse_bytes("1000", &v), 0);
	CHECK_EQ(v, 1000);
	CHECK_EQ(osd_config_parse_bytes("3k", &v), 0);
	CHECK_EQ(v, 3072);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(osd_config_parse_bytes(bad[i], &v) < 0);
		osd_config_defaults(&cfg);
		CHECK(osd_config_set(&cfg, "write_bandwidth", bad[i], err, sizeof(err)) < 0);
		CHECK(strstr(err, "write_bandwidth") != NULL);
		CHECK(strstr(err, "K, M or G") != NULL);
	}
	CHECK(load_text(&cfg, "\nread_bandwidth = 10 MB/s\n", err, sizeof(err)) < 0);
	CHECK(strstr(err, ":2: bad value '10 MB/s' for read_bandwidth") != NULL);
}

/* etcd over TLS with a user: the CA, the user and its password file. */
static void test_etcd_credentials(void)
{
	struct osd_config cfg;
	char err[256];

	CHECK_EQ(load_text(&cfg,
			   "osd_id = 3\ndata_dir = /d\nkey_file = /k\n"
			   "etcd = https://127.0.0.1:2379\netcd_ca = /etc/pando/etcd-ca.crt\n"
			   "etcd_user = osd.3\netcd_password_file = /etc/pando/osd.3.etcd\n",
			   err, sizeof(err)),
		 0);
	CHECK(!strcmp(cfg.etcd_ca, "/etc/pando/etcd-ca.crt"));
	CHECK(!strcmp(cfg.etcd_user, "osd.3"));
	CHECK(!strcmp(cfg.etcd_password_file, "/etc/pando/osd.3.etcd"));
	CHECK_EQ(osd_config_check(&cfg, err, sizeof(err)), 0);
	/* One without the other cannot work. */
	CHECK_EQ(osd_config_set(&cfg, "etcd_password_file", "", err, sizeof(err)), 0);
	CHECK(osd_config_check(&cfg, err, sizeof(err)) < 0);
	CHECK(strstr(err, "etcd_user and etcd_password_file go together") != NULL);
	CHECK_EQ(osd_config_set(&cfg, "etcd_user", "", err, sizeof(err)), 0);
	CHECK_EQ(osd_config_set(&cfg, "etcd_password_file", "/p", err, sizeof(err)), 0);
	CHECK(osd_config_check(&cfg, err, sizeof(err)) < 0);
}

int main(void)
{
	struct osd_config cfg;
	char err[256];

	CHECK_EQ(load_text(&cfg,
			   "# a target\nosd_id = 4\n  data_dir=/srv/osd4 # inline\n"
			   "key_file = /k\nthreads = 3\nlog_level = debug\n",
			   err, sizeof(err)),
		 0);
	CHECK_EQ(cfg.osd_id, 4);
	CHECK(strcmp(cfg.data_dir, "/srv/osd4") == 0);
	CHECK_EQ(cfg.threads, 3);
	CHECK_EQ(cfg.log_level, LOG_DEBUG);
	CHECK(strcmp(cfg.nfs_listen, "127.0.0.1:20491") == 0);
	CHECK_EQ(osd_config_check(&cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.stats_interval, 60);
	CHECK_EQ(load_text(&cfg, "stats_interval = 2\n", err, sizeof(err)), 0);
	CHECK_EQ(cfg.stats_interval, 2);
	CHECK(load_text(&cfg, "stats_interval = 0\n", err, sizeof(err)) < 0);
	CHECK(load_text(&cfg, "stats_interval = 86401\n", err, sizeof(err)) < 0);

	CHECK(load_text(&cfg, "osd_id = -1\n", err, sizeof(err)) < 0);
	CHECK(strstr(err, ":1:") != NULL);
	CHECK(load_text(&cfg, "threads = 0\n", err, sizeof(err)) < 0);
	CHECK(load_text(&cfg, "threads = 12abc\n", err, sizeof(err)) < 0);
	CHECK(load_text(&cfg, "colour = blue\n", err, sizeof(err)) < 0);
	CHECK(strstr(err, "colour") != NULL);
	CHECK(load_text(&cfg, "osd_id\n", err, sizeof(err)) < 0);
	CHECK(load_text(&cfg, "log_level = loud\n", err, sizeof(err)) < 0);

	test_bandwidth();
	test_etcd_credentials();

	CHECK_EQ(load_text(&cfg, "data_dir = /d\nkey_file = /k\n", err, sizeof(err)), 0);
	CHECK(osd_config_check(&cfg, err, sizeof(err)) < 0);
	CHECK(strstr(err, "osd_id") != NULL);
	osd_config_defaults(&cfg);
	CHECK(osd_config_load(&cfg, "/nonexistent/pando.conf", err, sizeof(err)) < 0);
	CHECK_DONE();
}
