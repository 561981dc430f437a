/* Opening and closing a RocksDB database the same way in every component
 * (the OSD's object index, the metadata manager's namespace store).
 *
 * The caller fills a struct pando_rdb_config with the tuning that differs
 * between its stores; what every store does alike (RocksDB's messages
 * through the caller's log, bloom bits, -EBUSY for a database that another
 * process holds) is here.  Every call returns 0 or -errno. */
#ifndef PANDO_RDB_H
#define PANDO_RDB_H

#include <stdbool.h>
#include <stddef.h>

#include <rocksdb/c.h>

/* One line RocksDB has to say (a warning or worse), without a newline. */
typedef void pando_rdb_log_fn(void *arg, const char *msg);

struct pando_rdb_config {
	bool create_if_missing;
	/* Without create_if_missing, answer -ENOENT for a directory that holds
	 * no database, before RocksDB makes the directory and fails with -EIO. */
	bool missing_is_enoent;
	int max_open_files;      /* 0: RocksDB's default (no limit) */
	int max_background_jobs; /* 0: RocksDB's default */
	size_t block_cache_bytes;
	bool bloom_full;             /* whole-table filter, else per block */
	bool point_in_time_recovery; /* WAL recovery keeps whole batches */
	/* Owned by the options from open on, even when open fails. */
	rocksdb_mergeoperator_t *merge_operator;
	int max_successive_merges; /* 0: RocksDB's default */
	bool sync_writes;          /* every write durable when it returns */
	/* Where RocksDB's warnings and errors go, at most 10 lines per 5 s;
	 * NULL: nowhere.  RocksDB writes no info LOG file of its own. */
	pando_rdb_log_fn *log;
	void *log_arg;
};

/* What RocksDB reads for as long as the database is open.  read and write
 * are the options for every get and write; a store may keep copies of the
 * two pointers, which pando_rdb_close frees. */
struct pando_rdb_options {
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *table;
	rocksdb_cache_t *cache;
	rocksdb_writeoptions_t *write;
	rocksdb_readoptions_t *read;
};

/* Opens the database in directory path.  On failure *db is NULL, o holds
 * nothing, and *err, when not NULL, is RocksDB's message for the caller to
 * log and free with rocksdb_free: -EBUSY when another process holds the
 * database, -ENOENT (see missing_is_enoent), else -EIO. */
int pando_rdb_open(const char *path, const struct pando_rdb_config *c, struct pando_rdb_options *o,
		   rocksdb_t **db, char **err);

/* Closes db (NULL is fine), flushing what is not yet in a table file when
 * the WAL was off for it, then frees the options; both end up NULL. */
void pando_rdb_close(rocksdb_t **db, struct pando_rdb_options *o);

#endif
