/* The object store as a whole: open, close, crash recovery, statfs, wipe
 * and flush.  See README.md "Object store on disk" for the layout.
 *
 *   objstore_super.c      the directory: superblock, shards, file names
 *   objstore_db.c         the RocksDB index: keys, records, iteration
 *   objstore_cache.c      open-object references and their cache
 *   objstore_io.c         data I/O through a reference
 *   objstore_partition.c  partitions
 *   objstore_object.c     object create, remove, list
 *   objstore_attr.c       attributes
 *
 * Crash safety: a record never exists without its data file.  Creation makes
 * the files durable before the synced batch; removal deletes the records
 * before the files.  The window in between leaves orphan files, which open
 * sweeps when the 'R' key says the last run did not close. */
#include "objstore_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "log.h"

/* ---- recovery -------------------------------------------------------- */

/* Deletes the data files of one shard that have no record: what a crash
 * between file and record changes leaves behind. */
static int sweep_shard(struct objstore *s, unsigned shard)
{
	DIR *d = shard_open(s, shard);
	struct dirent *de;
	struct obj_id id;
	int rc = 0;

	if (!d)
		return -EIO;
	while (!rc && (de = readdir(d))) {
		uint8_t k[KEY_MAX];

		if (!obj_name_parse(de->d_name, &id) && !csum_name_parse(de->d_name, &id))
			continue;
		rc = db_exists(s, k, key_obj(k, id.partition, id.object));
		if (rc == 0) {
			log_warn("objstore: removing orphan objects/%02x/%s", shard, de->d_name);
			unlinkat(dirfd(d), de->d_name, 0);
		}
		rc = rc < 0 ? rc : 0;
	}
	closedir(d);
	return rc;
}

static int sweep_orphans(struct objstore *s)
{
	int rc = 0;

	for (unsigned i = 0; !rc && i < SHARDS; i++)
		rc = sweep_shard(s, i);
	return rc;
}

/* A crash is the only source of orphans, so only a store that was not
 * closed is swept. */
static int recover(struct objstore *s)
{
	uint8_t k = K_RUNNING;
	int rc = db_exists(s, &k, 1);

	if (rc > 0) {
		log_warn("objstore: store was not closed cleanly, checking data files");
		rc = sweep_orphans(s);
	}
	return rc ? rc : db_put(s, &k, 1, "", 0);
}

/* ---- open / close ---------------------------------------------------- */

static int load_counts(struct objstore *s)
{
	uint64_t parts, objs;
	int rc = db_count(s, K_PART, &parts);

	if (!rc)
		rc = db_count(s, K_OBJ, &objs);
	if (rc)
		return rc;
	atomic_init(&s->npartitions, parts);
	atomic_init(&s->nobjects, objs);
	return 0;
}

static void store_free(struct objstore *s)
{
	db_free(s);
	if (s->objfd >= 0)
		close(s->objfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	pthread_mutex_destroy(&s->meta_lock);
	pthread_mutex_destroy(&s->cache_lock);
	free(s);
}

int objstore_open(const char *dir, struct objstore **out)
{
	struct objstore *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->objfd = -1;
	pthread_mutex_init(&s->meta_lock, NULL);
	pthread_mutex_init(&s->cache_lock, NULL);
	cache_init(s);
	csum_init(s);
	s->dirfd = open_dir(dir);
	rc = s->dirfd < 0 ? s->dirfd : sb_read(s->dirfd, &s->sb);
	if (!rc) {
		s->objfd = openat(s->dirfd, "objects", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = s->objfd < 0 ? errno_io(errno) : 0;
	}
	if (!rc)
		rc = db_open(s, dir);
	if (!rc)
		rc = recover(s);
	if (!rc)
		rc = load_counts(s);
	if (rc) {
		store_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void objstore_close(struct objstore *s)
{
	uint8_t k = K_RUNNING;
	char *err = NULL;

	if (!s)
		return;
	cache_forget_all(s);
	/* Unlinks must be durable before the store calls itself clean. */
	if (syncfs(s->objfd) < 0)
		log_error("objstore: syncfs: %s", strerror(errno));
	else
		db_delete(s, &k, 1);
	rocksdb_flush_wal(s->db, 1, &err);
	if (err)
		db_err("flush wal", err);
	store_free(s);
}

/* ---- whole-store operations ------------------------------------------ */

const struct objstore_superblock *objstore_superblock(const struct objstore *s)
{
	return &s->sb;
}

int objstore_statfs(struct objstore *s, struct objstore_stat *st)
{
	struct statvfs vfs;

	if (fstatvfs(s->dirfd, &vfs) < 0) {
		log_error("objstore: statvfs: %s", strerror(errno));
		return -EIO;
	}
	st->total_bytes = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	st->free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	st->partitions = atomic_load(&s->npartitions);
	st->objects = atomic_load(&s->nobjects);
	return 0;
}

uint64_t objstore_sync_failures(const struct objstore *s)
{
	return atomic_load(&s->sync_failures);
}

int objstore_flush(struct objstore *s, const struct obj_id *id)
{
	struct obj_ref *ref;
	int rc;

	/* One syncfs rather than an fdatasync per object ever written. */
	if (!id) {
		if (syncfs(s->objfd) == 0)
			return 0;
		atomic_fetch_add(&s->sync_failures, 1);
		log_error("objstore: syncfs: %s", strerror(errno));
		return -EIO;
	}
	rc = objstore_get(s, id, &ref);
	if (rc)
		return rc;
	rc = obj_ref_sync(ref);
	objstore_put(s, ref);
	return rc;
}

static int wipe_shard(struct objstore *s, unsigned shard)
{
	DIR *d = shard_open(s, shard);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return -EIO;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT) {
			log_error("objstore: unlink objects/%02x/%s: %s", shard, de->d_name,
				  strerror(errno));
			rc = -EIO;
		}
	}
	closedir(d);
	return rc;
}

/* Records first, then files, as in object removal. */
int objstore_wipe(struct objstore *s)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	/* [A, B) holds the attributes, [N, Q) the counters, objects and
	 * partitions. */
	static const char ranges[] = { K_ATTR, K_ATTR + 1, K_NEXT, K_PART + 1 };
	int rc;

	rocksdb_writebatch_delete_range(b, &ranges[0], 1, &ranges[1], 1);
	rocksdb_writebatch_delete_range(b, &ranges[2], 1, &ranges[3], 1);
	pthread_mutex_lock(&s->meta_lock);
	rc = db_write(s, b);
	if (!rc) {
		cache_forget_all(s);
		atomic_store(&s->npartitions, 0);
		atomic_store(&s->nobjects, 0);
		for (unsigned i = 0; i < SHARDS; i++)
			if (wipe_shard(s, i))
				rc = -EIO;
	}
	pthread_mutex_unlock(&s->meta_lock);
	rocksdb_writebatch_destroy(b);
	return rc;
}
