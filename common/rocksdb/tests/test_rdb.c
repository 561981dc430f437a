/* pando_rdb_open / pando_rdb_close against real RocksDB in a temporary
 * directory: create, reopen, flush at close, and -errno for what cannot be
 * opened. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pando_rdb.h"

static char tmp[] = "/tmp/pando-rdb-test.XXXXXX";

static const struct pando_rdb_config create_cfg = {
	.create_if_missing = true,
	.block_cache_bytes = 1u << 20,
	.bloom_full = true,
};

static const struct pando_rdb_config open_cfg = {
	.missing_is_enoent = true,
	.block_cache_bytes = 1u << 20,
};

static int merge_operators_freed;

static void merge_free(void *state)
{
	(void)state;
	merge_operators_freed++;
}

static const char *merge_name(void *state)
{
	(void)state;
	return "test";
}

/* A merge operator that is never run: only its destruction is counted. */
static rocksdb_mergeoperator_t *counting_merge_operator(void)
{
	return rocksdb_mergeoperator_create(NULL, merge_free, NULL, NULL, NULL, merge_name);
}

static char *path_in_tmp(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	return path;
}

static int open_db(const char *path, const struct pando_rdb_config *c, struct pando_rdb_options *o,
		   rocksdb_t **db)
{
	char *err;
	int rc = pando_rdb_open(path, c, o, db, &err);

	rocksdb_free(err);
	return rc;
}

/* Puts key=value with the WAL on or off. */
static void put(rocksdb_t *db, const char *key, const char *value, bool wal)
{
	rocksdb_writeoptions_t *w = rocksdb_writeoptions_create();
	char *err = NULL;

	rocksdb_writeoptions_disable_WAL(w, !wal);
	rocksdb_put(db, w, key, strlen(key), value, strlen(value), &err);
	CHECK(err == NULL);
	rocksdb_free(err);
	rocksdb_writeoptions_destroy(w);
}

static bool has(rocksdb_t *db, const char *key, const char *value)
{
	rocksdb_readoptions_t *r = rocksdb_readoptions_create();
	char *err = NULL, *v;
	size_t vlen;
	bool same;

	v = rocksdb_get(db, r, key, strlen(key), &vlen, &err);
	same = !err && v && vlen == strlen(value) && memcmp(v, value, vlen) == 0;
	rocksdb_free(err);
	rocksdb_free(v);
	rocksdb_readoptions_destroy(r);
	return same;
}

static void test_open_creates_and_reopen_finds_what_was_written(void)
{
	const char *path = path_in_tmp("a");
	struct pando_rdb_options o;
	rocksdb_t *db;

	CHECK_EQ(open_db(path, &create_cfg, &o, &db), 0);
	CHECK(db && o.opts && o.table && o.cache && o.write && o.read);
	if (!db)
		return;
	put(db, "k", "v1", true);
	pando_rdb_close(&db, &o);
	CHECK(db == NULL && o.opts == NULL && o.table == NULL && o.cache == NULL);
	CHECK(o.write == NULL && o.read == NULL);
	CHECK_EQ(open_db(path, &open_cfg, &o, &db), 0);
	CHECK(db && has(db, "k", "v1"));
	pando_rdb_close(&db, &o);
}

static void test_close_flushes_writes_that_skipped_the_wal(void)
{
	const char *path = path_in_tmp("b");
	struct pando_rdb_options o;
	rocksdb_t *db;

	CHECK_EQ(open_db(path, &create_cfg, &o, &db), 0);
	if (!db)
		return;
	put(db, "only-in-memtable", "v2", false);
	pando_rdb_close(&db, &o);
	CHECK_EQ(open_db(path, &open_cfg, &o, &db), 0);
	CHECK(db && has(db, "only-in-memtable", "v2"));
	pando_rdb_close(&db, &o);
}

static void test_a_missing_database_is_enoent_and_no_directory_is_made(void)
{
	const char *path = path_in_tmp("never-made");
	struct pando_rdb_options o;
	struct stat st;
	rocksdb_t *db;
	struct pando_rdb_config with_merge = open_cfg;

	CHECK_EQ(open_db(path, &open_cfg, &o, &db), -ENOENT);
	CHECK(db == NULL && o.opts == NULL);
	CHECK_EQ(stat(path, &st), -1);
	/* The merge operator given is freed on that path too. */
	with_merge.merge_operator = counting_merge_operator();
	CHECK_EQ(open_db(path, &with_merge, &o, &db), -ENOENT);
	CHECK_EQ(merge_operators_freed, 1);
}

static void test_without_missing_is_enoent_a_missing_database_is_eio(void)
{
	struct pando_rdb_config cfg = open_cfg;
	struct pando_rdb_options o;
	rocksdb_t *db;

	cfg.missing_is_enoent = false;
	CHECK_EQ(open_db(path_in_tmp("c"), &cfg, &o, &db), -EIO);
	CHECK(db == NULL && o.opts == NULL && o.table == NULL && o.cache == NULL);
	CHECK(o.write == NULL && o.read == NULL);
}

static void test_a_path_that_cannot_be_a_directory_is_eio(void)
{
	const char *file = path_in_tmp("plain-file");
	char below[300];
	struct pando_rdb_options o;
	rocksdb_t *db;
	int fd = open(file, O_CREAT | O_WRONLY, 0600);

	CHECK(fd >= 0);
	close(fd);
	snprintf(below, sizeof(below), "%s/db", file);
	CHECK_EQ(open_db(below, &create_cfg, &o, &db), -EIO);
	CHECK(db == NULL);
}

static void test_a_database_held_open_is_ebusy_and_error_text_is_given(void)
{
	const char *path = path_in_tmp("d");
	struct pando_rdb_options o1, o2;
	rocksdb_t *db1, *db2;
	char *err;

	CHECK_EQ(open_db(path, &create_cfg, &o1, &db1), 0);
	CHECK_EQ(pando_rdb_open(path, &create_cfg, &o2, &db2, &err), -EBUSY);
	CHECK(db2 == NULL && err != NULL);
	rocksdb_free(err);
	pando_rdb_close(&db1, &o1);
	CHECK_EQ(open_db(path, &create_cfg, &o1, &db1), 0);
	pando_rdb_close(&db1, &o1);
}

static void test_close_of_nothing_is_harmless(void)
{
	struct pando_rdb_options o = { 0 };
	rocksdb_t *db = NULL;

	pando_rdb_close(&db, &o);
	pando_rdb_close(&db, &o);
	CHECK(db == NULL);
}

static int warnings;
static char last_warning[512];

static void count_warning(void *arg, const char *msg)
{
	(void)arg;
	warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

/* Appends garbage to every WAL file in dir: a torn tail for recovery. */
static int tear_wal_tails(const char *dir)
{
	static const char garbage[] = "\x01\x02\x03 torn record";
	DIR *d = opendir(dir);
	struct dirent *e;
	int torn = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[512];
		int fd;

		if (!strstr(e->d_name, ".log"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		fd = open(p, O_WRONLY | O_APPEND);
		if (fd >= 0 && write(fd, garbage, sizeof(garbage)) == (ssize_t)sizeof(garbage))
			torn++;
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return torn;
}

/* An info LOG beside the database aborted the daemon after its disk
 * filled up (pando_rdb_logger.cc); RocksDB says what it has to through
 * the caller's callback instead. */
static void test_rocksdb_warnings_reach_the_callback_and_no_LOG_file_is_written(void)
{
	const char *path = path_in_tmp("logged");
	struct pando_rdb_config cfg = create_cfg;
	struct pando_rdb_options o;
	char log_file[300];
	rocksdb_t *db;

	cfg.point_in_time_recovery = true;
	cfg.log = count_warning;
	CHECK_EQ(open_db(path, &cfg, &o, &db), 0);
	if (!db)
		return;
	put(db, "k", "v1", true);
	pando_rdb_close(&db, &o);
	CHECK(tear_wal_tails(path) >= 1);
	CHECK_EQ(open_db(path, &cfg, &o, &db), 0);
	CHECK(db && has(db, "k", "v1"));
	pando_rdb_close(&db, &o);
	CHECK(warnings >= 1);
	CHECK(strncmp(last_warning, "rocksdb: ", 9) == 0);
	snprintf(log_file, sizeof(log_file), "%s/LOG", path);
	CHECK(access(log_file, F_OK) != 0);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_open_creates_and_reopen_finds_what_was_written();
	test_close_flushes_writes_that_skipped_the_wal();
	test_a_missing_database_is_enoent_and_no_directory_is_made();
	test_without_missing_is_enoent_a_missing_database_is_eio();
	test_a_path_that_cannot_be_a_directory_is_eio();
	test_a_database_held_open_is_ebusy_and_error_text_is_given();
	test_close_of_nothing_is_harmless();
	test_rocksdb_warnings_reach_the_callback_and_no_LOG_file_is_written();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	CHECK_DONE();
}
