/* pando_rdb_open and pando_rdb_close: see pando_rdb.h. */
#include "pando_rdb.h"
#include "pando_rdb_logger.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* About 1% false positives: every create first probes for an absent key. */
#define BLOOM_BITS_PER_KEY 10

static void set_table(const struct pando_rdb_config *c, struct pando_rdb_options *o)
{
	rocksdb_filterpolicy_t *bloom =
		c->bloom_full ? rocksdb_filterpolicy_create_bloom_full(BLOOM_BITS_PER_KEY)
			      : rocksdb_filterpolicy_create_bloom(BLOOM_BITS_PER_KEY);

	o->cache = rocksdb_cache_create_lru(c->block_cache_bytes);
	o->table = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(o->table, o->cache);
	/* The table options own the policy from here on. */
	rocksdb_block_based_options_set_filter_policy(o->table, bloom);
	rocksdb_options_set_block_based_table_factory(o->opts, o->table);
}

/* An info LOG file on the store's own disk would abort the daemon once
 * that disk is full (pando_rdb_logger.cc): RocksDB talks to our log. */
static int set_logger(const struct pando_rdb_config *c, struct pando_rdb_options *o)
{
	rocksdb_logger_t *logger = pando_rdb_logger_new(c->log, c->log_arg);

	if (!logger)
		return -ENOMEM;
	rocksdb_options_set_info_log(o->opts, logger);
	pando_rdb_logger_free(logger);
	return 0;
}

static int set_options(const struct pando_rdb_config *c, struct pando_rdb_options *o)
{
	o->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(o->opts, c->create_if_missing);
	if (c->max_open_files)
		rocksdb_options_set_max_open_files(o->opts, c->max_open_files);
	if (c->max_background_jobs)
		rocksdb_options_set_max_background_jobs(o->opts, c->max_background_jobs);
	if (c->point_in_time_recovery)
		rocksdb_options_set_wal_recovery_mode(o->opts, rocksdb_point_in_time_recovery);
	if (c->merge_operator)
		rocksdb_options_set_merge_operator(o->opts, c->merge_operator);
	if (c->max_successive_merges)
		rocksdb_options_set_max_successive_merges(o->opts, c->max_successive_merges);
	set_table(c, o);
	o->write = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(o->write, c->sync_writes);
	o->read = rocksdb_readoptions_create();
	return set_logger(c, o);
}

static bool has_database(const char *path)
{
	char current[PATH_MAX];

	if (snprintf(current, sizeof(current), "%s/CURRENT", path) >= (int)sizeof(current))
		return false;
	return access(current, F_OK) == 0;
}

int pando_rdb_open(const char *path, const struct pando_rdb_config *c, struct pando_rdb_options *o,
		   rocksdb_t **db, char **err)
{
	*db = NULL;
	*err = NULL;
	memset(o, 0, sizeof(*o));
	if (!c->create_if_missing && c->missing_is_enoent && !has_database(path)) {
		if (c->merge_operator)
			rocksdb_mergeoperator_destroy(c->merge_operator);
		return -ENOENT;
	}
	if (set_options(c, o) < 0) {
		pando_rdb_close(db, o);
		return -ENOMEM;
	}
	*db = rocksdb_open(o->opts, path, err);
	if (!*err)
		return 0;
	*db = NULL;
	pando_rdb_close(db, o);
	/* RocksDB says "lock hold by current process" or "While lock file". */
	return strstr(*err, "lock") ? -EBUSY : -EIO;
}

void pando_rdb_close(rocksdb_t **db, struct pando_rdb_options *o)
{
	if (*db)
		rocksdb_close(*db);
	*db = NULL;
	if (o->opts)
		rocksdb_options_destroy(o->opts);
	if (o->table)
		rocksdb_block_based_options_destroy(o->table);
	if (o->cache)
		rocksdb_cache_destroy(o->cache);
	if (o->write)
		rocksdb_writeoptions_destroy(o->write);
	if (o->read)
		rocksdb_readoptions_destroy(o->read);
	memset(o, 0, sizeof(*o));
}
