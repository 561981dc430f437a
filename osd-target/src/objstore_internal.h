/* Private to the object store's own files: what lies behind the opaque
 * handles of objstore.h, and the helpers those files share. */
#ifndef PANDO_OBJSTORE_INTERNAL_H
#define PANDO_OBJSTORE_INTERNAL_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rocksdb/c.h>

#include "objstore.h"
#include "pando_rdb.h"

#define SHARDS 256
#define OBJ_PATH_LEN 37                  /* "XX/" 16 hex "." 16 hex NUL */
#define CSUM_PATH_LEN (OBJ_PATH_LEN + 2) /* the same and ".c": checksums */
#define CACHE_BUCKETS 8192

/* Key types and record sizes: see objstore_db.c for the layout. */
enum { K_PART = 'P', K_OBJ = 'O', K_ATTR = 'A', K_NEXT = 'N', K_RUNNING = 'R' };
#define KEY_MAX 25
#define PART_REC_LEN 9
#define PART_REC_VERSION 1
#define OBJ_REC_LEN 37
#define OBJ_REC_VERSION 2
#define OBJ_REC_V1_LEN 33 /* before the read floor: still read */

struct obj_rec {
	uint64_t created_ns;
	uint64_t ctime_ns;
	uint64_t owner_file;
	uint32_t component;
	uint32_t cap_version;
	uint32_t read_floor;
};

struct lru {
	struct lru *prev, *next;
};

struct obj_ref {
	struct lru lru;        /* first: idle list, only while refs == 0 */
	struct obj_ref *hnext; /* hash chain, then free list */
	struct objstore *s;
	struct obj_id id;
	int fd;
	int cfd;       /* checksum file; -1 until needed (csum_lock) */
	unsigned refs; /* under cache_lock */
	atomic_bool removed;
	/* Read floor << 32 | current version: one word, so that a check
	 * never sees the floor of one change with the version of another. */
	_Atomic uint64_t cap_versions;
	/* Read-held by a handle's request from its version check to its end,
	 * write-held by SET_CAP_VERSION and REVOKE_WRITERS: they drain the
	 * requests they overtook (obj_ref_cap_hold).  Writer-preferring. */
	pthread_rwlock_t cap_lock;
	/* Held across a data change and the update of its extent checksums,
	 * and across a verify's read, so that checksums follow the data in
	 * the order the changes reached the file (objstore_csum.c). */
	pthread_mutex_t csum_lock;
};

struct objstore {
	struct objstore_superblock sb;
	int dirfd;
	int objfd;
	rocksdb_t *db;
	struct pando_rdb_options dbopts;
	rocksdb_writeoptions_t *wsync; /* dbopts.write, synced */
	rocksdb_readoptions_t *ropts;  /* dbopts.read */

	/* Index changes check, then write: one at a time. */
	pthread_mutex_t meta_lock;
	_Atomic uint64_t npartitions;
	_Atomic uint64_t nobjects;

	/* Open-object cache.  cache_gen moves whenever a record the cache
	 * mirrors changes, so a loader that raced with it starts again.
	 * Lock order: meta_lock, then cache_lock. */
	pthread_mutex_t cache_lock;
	struct obj_ref *buckets[CACHE_BUCKETS];
	struct lru idle; /* next: most recently used */
	size_t nidle;
	size_t idle_max;
	uint64_t cache_gen;

	uint32_t zero_crc; /* of an extent of zeros: a hole's */
	/* fdatasync and syncfs of object data and checksums that failed:
	 * each may have dropped acknowledged UNSTABLE bytes (the write
	 * verifier moves on, osd.h). */
	_Atomic uint64_t sync_failures;
	/* A checksum file was made in the shard since its directory was last
	 * synced: the next csum_sync of any object there syncs it. */
	atomic_bool csum_names_unsynced[SHARDS];
};

/* An iterator over [start, end).  Each has its own read options because
 * they carry the bound, and its own copy of the bound because RocksDB
 * keeps only a pointer to it. */
struct db_iter {
	rocksdb_readoptions_t *ro;
	rocksdb_iterator_t *it;
	uint8_t end[KEY_MAX];
};

static inline uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

/* Callers tell a full disk and a too-large file apart from a broken one. */
static inline int errno_io(int e)
{
	if (e == ENOSPC || e == EDQUOT)
		return -ENOSPC;
	if (e == EFBIG)
		return -EFBIG;
	return -EIO;
}

/* objstore_db.c */
size_t key_part(uint8_t *k, uint8_t type, uint64_t partition);
size_t key_obj(uint8_t *k, uint64_t partition, uint64_t object);
size_t key_attr(uint8_t *k, const struct obj_id *id, uint32_t page, uint32_t number);
void prefix_end(uint8_t *k, size_t len);
void rec_encode(const struct obj_rec *r, uint8_t *v);
int rec_load(struct objstore *s, const struct obj_id *id, struct obj_rec *r);
int part_exists(struct objstore *s, uint64_t partition);
int db_err(const char *what, char *err);
int db_get(struct objstore *s, const uint8_t *k, size_t klen, char **val, size_t *vlen);
int db_exists(struct objstore *s, const uint8_t *k, size_t klen);
int db_write(struct objstore *s, rocksdb_writebatch_t *b);
int db_put(struct objstore *s, const uint8_t *k, size_t klen, const void *v, size_t vlen);
int db_delete(struct objstore *s, const uint8_t *k, size_t klen);
void iter_open(struct objstore *s, struct db_iter *i, const uint8_t *start, size_t slen,
	       const uint8_t *end, size_t elen);
void iter_open_attrs(struct objstore *s, struct db_iter *i, const struct obj_id *id);

bool iter_valid(struct db_iter *i);
const uint8_t *iter_key(struct db_iter *i, size_t *len);
int iter_close(struct db_iter *i);
int db_count(struct objstore *s, uint8_t type, uint64_t *count);
int db_list_ids(struct objstore *s, const uint8_t *prefix, size_t plen, uint64_t after,
		uint64_t *ids, size_t max, size_t *n, bool *eof);
int db_create(const char *dir);
int db_open(struct objstore *s, const char *dir);
void db_free(struct objstore *s);

/* objstore_super.c */
uint64_t id_hash(uint64_t partition, uint64_t object);
unsigned obj_shard(const struct obj_id *id);
void obj_path(char *buf, const struct obj_id *id);
bool obj_name_parse(const char *name, struct obj_id *id);
int open_dir(const char *dir);
int fsync_at(int dirfd, const char *name);
DIR *shard_open(struct objstore *s, unsigned shard);
int sb_read(int dirfd, struct objstore_superblock *sb);

/* objstore_cache.c */
void cache_init(struct objstore *s);
void cache_forget(struct objstore *s, const struct obj_id *id);
void cache_forget_all(struct objstore *s);
void cache_set_caps(struct objstore *s, const struct obj_id *id, uint32_t floor, uint32_t cur);
static inline uint64_t cap_versions_pack(uint32_t floor, uint32_t cur)
{
	return (uint64_t)floor << 32 | cur;
}

/* objstore_io.c */
int ref_truncate(struct obj_ref *ref, uint64_t length);

/* objstore_csum.c; the first two with ref->csum_lock held, after the
 * change reached the data file. */
int csum_after_write(struct obj_ref *ref, uint64_t off, const void *buf, size_t len);
int csum_after_truncate(struct obj_ref *ref, uint64_t length);
/* Makes the checksums written so far durable. */
int csum_sync(struct obj_ref *ref);
/* Removes an object's checksum file (with the object, or an orphan's). */
void csum_unlink(struct objstore *s, const struct obj_id *id);
/* "XX/PPPP.OOOO.c": the checksum file of an object. */
void csum_path(char *buf, const struct obj_id *id);
/* A checksum file's name ("PPPP.OOOO.c") parsed. */
bool csum_name_parse(const char *name, struct obj_id *id);
void csum_init(struct objstore *s);

#endif
