/* Creating, removing and listing objects.  The order of file and record
 * changes here is what keeps a crash safe: see objstore.c. */
#include "objstore_internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byteorder.h"
#include "log.h"

/* ---- data files ------------------------------------------------------ */

/* Creates the empty data file.  The caller holds meta_lock and saw no
 * record, so a file already there is an orphan of a crash. */
static int data_create(struct objstore *s, const struct obj_id *id)
{
	char path[OBJ_PATH_LEN];
	int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
	int fd;

	obj_path(path, id);
	fd = openat(s->objfd, path, flags, 0600);
	if (fd < 0 && errno == EEXIST) {
		log_warn("objstore: replacing orphan objects/%s", path);
		unlinkat(s->objfd, path, 0);
		fd = openat(s->objfd, path, flags, 0600);
	}
	/* Checksums an earlier object of this id left (a crash between the
	 * removal of its record and of its files): not this one's. */
	csum_unlink(s, id);
	if (fd < 0) {
		log_error("objstore: create objects/%s: %s", path, strerror(errno));
		return errno_io(errno);
	}
	return fd;
}

static void data_unlink(struct objstore *s, const struct obj_id *id)
{
	char path[OBJ_PATH_LEN];

	obj_path(path, id);
	if (unlinkat(s->objfd, path, 0) < 0 && errno != ENOENT)
		log_error("objstore: unlink objects/%s: %s", path, strerror(errno));
}

/* ---- batches --------------------------------------------------------- */

/* 1 if the key is in the batch or the index, 0 if not, or -EIO: a batch
 * must see its own earlier creates and removes. */
static int batch_exists(struct objstore *s, rocksdb_writebatch_wi_t *wb, const uint8_t *k,
			size_t klen)
{
	char *err = NULL, *v;
	size_t vlen;

	v = rocksdb_writebatch_wi_get_from_batch_and_db(wb, s->db, s->ropts, (const char *)k, klen,
							&vlen, &err);
	if (err)
		return db_err("get", err);
	rocksdb_free(v);
	return v != NULL;
}

static int batch_write(struct objstore *s, rocksdb_writebatch_wi_t *wb)
{
	char *err = NULL;

	rocksdb_write_writebatch_wi(s->db, s->wsync, wb, &err);
	return err ? db_err("write", err) : 0;
}

/* ---- create ---------------------------------------------------------- */

struct create_batch {
	struct objstore *s;
	uint64_t partition;
	uint64_t next; /* next id for requests with object 0 */
	uint64_t now;
	rocksdb_writebatch_wi_t *wb;
	int *fds; /* per request; -1 when none created */
	bool shard_dirty[SHARDS];
};

static int batch_has(struct create_batch *c, uint64_t object)
{
	uint8_t k[KEY_MAX];

	return batch_exists(c->s, c->wb, k, key_obj(k, c->partition, object));
}

static int create_one(struct create_batch *c, struct obj_create_req *req, size_t idx,
		      uint64_t object)
{
	struct obj_id id = { c->partition, object };
	struct obj_rec r = {
		.created_ns = c->now,
		.ctime_ns = c->now,
		.owner_file = req->owner_file,
		.component = req->component,
		.cap_version = req->cap_version,
		.read_floor = req->cap_version,
	};
	uint8_t k[KEY_MAX], v[OBJ_REC_LEN];
	int fd;

	fd = data_create(c->s, &id);
	if (fd < 0)
		return fd;
	c->fds[idx] = fd;
	c->shard_dirty[obj_shard(&id)] = true;
	rec_encode(&r, v);
	rocksdb_writebatch_wi_put(c->wb, (const char *)k, key_obj(k, c->partition, object),
				  (const char *)v, sizeof(v));
	return 0;
}

static int create_explicit(struct create_batch *c, struct obj_create_req *req, size_t idx)
{
	int rc = batch_has(c, req->object);

	if (rc)
		return rc < 0 ? rc : -EEXIST;
	return create_one(c, req, idx, req->object);
}

static int create_auto(struct create_batch *c, struct obj_create_req *req, size_t idx)
{
	int rc;

	do {
		if (c->next == 0)
			return -ENOSPC;
		rc = batch_has(c, c->next++);
	} while (rc > 0);
	return rc ? rc : create_one(c, req, idx, c->next - 1);
}

static int next_load(struct create_batch *c)
{
	uint8_t k[KEY_MAX];
	size_t vlen;
	char *v;
	int rc = db_get(c->s, k, key_part(k, K_NEXT, c->partition), &v, &vlen);

	if (rc)
		return rc;
	c->next = 1;
	if (v && vlen == 8) {
		c->next = get_be64((const uint8_t *)v);
	} else if (v) {
		log_error("objstore: bad next-id record for partition %" PRIx64, c->partition);
		rc = -EIO;
	}
	rocksdb_free(v);
	return rc;
}

/* Explicit ids are placed first, so that the ids the store picks go
 * around them rather than take them away. */
static void create_place(struct create_batch *c, struct obj_create_req *reqs, size_t n,
			 int *results, uint64_t *ids)
{
	for (size_t i = 0; i < n; i++) {
		if (reqs[i].object) {
			ids[i] = reqs[i].object;
			results[i] = create_explicit(c, &reqs[i], i);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!reqs[i].object) {
			results[i] = create_auto(c, &reqs[i], i);
			ids[i] = c->next - 1;
		}
	}
}

/* Makes the new files and their directory entries durable before the
 * records that point at them.  A file that fails leaves the batch. */
static int create_sync(struct create_batch *c, const uint64_t *ids, size_t n, int *results)
{
	char name[4];
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (c->fds[i] < 0)
			continue;
		if (fsync(c->fds[i]) < 0) {
			struct obj_id id = { c->partition, ids[i] };
			uint8_t k[KEY_MAX];

			log_error("objstore: fsync new object: %s", strerror(errno));
			results[i] = -EIO;
			rocksdb_writebatch_wi_delete(c->wb, (const char *)k,
						     key_obj(k, id.partition, id.object));
			data_unlink(c->s, &id);
		}
		close(c->fds[i]);
	}
	for (unsigned i = 0; !rc && i < SHARDS; i++) {
		if (!c->shard_dirty[i])
			continue;
		snprintf(name, sizeof(name), "%02x", i);
		rc = fsync_at(c->s->objfd, name);
	}
	return rc;
}

static int create_commit(struct create_batch *c, uint64_t first_next)
{
	if (c->next != first_next) {
		uint8_t k[KEY_MAX], v[8];

		put_be64(v, c->next);
		rocksdb_writebatch_wi_put(c->wb, (const char *)k, key_part(k, K_NEXT, c->partition),
					  (const char *)v, sizeof(v));
	}
	return batch_write(c->s, c->wb);
}

static int create_run(struct create_batch *c, struct obj_create_req *reqs, size_t n, int *results,
		      uint64_t *ids)
{
	uint64_t first_next = c->next, made = 0;
	int rc;

	create_place(c, reqs, n, results, ids);
	rc = create_sync(c, ids, n, results);
	if (!rc)
		rc = create_commit(c, first_next);
	for (size_t i = 0; i < n; i++) {
		struct obj_id id = { c->partition, ids[i] };

		if (results[i])
			continue;
		if (rc) {
			data_unlink(c->s, &id);
			results[i] = rc;
		} else {
			reqs[i].object = ids[i];
			made++;
		}
	}
	atomic_fetch_add(&c->s->nobjects, made);
	return rc;
}

int objstore_object_create(struct objstore *s, uint64_t partition, struct obj_create_req *reqs,
			   size_t n, int *results)
{
	struct create_batch *c = calloc(1, sizeof(*c));
	uint64_t *ids = calloc(n + 1, sizeof(*ids));
	int *fds = calloc(n + 1, sizeof(*fds));
	int rc = -ENOMEM;

	if (!c || !ids || !fds)
		goto out;
	rc = -EINVAL;
	if (!partition)
		goto out;
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	*c = (struct create_batch){ .s = s, .partition = partition, .now = now_ns(), .fds = fds };
	pthread_mutex_lock(&s->meta_lock);
	rc = part_exists(s, partition);
	if (!rc)
		rc = next_load(c);
	if (!rc) {
		c->wb = rocksdb_writebatch_wi_create(0, 1);
		rc = create_run(c, reqs, n, results, ids);
		rocksdb_writebatch_wi_destroy(c->wb);
	}
	pthread_mutex_unlock(&s->meta_lock);
out:
	free(c);
	free(ids);
	free(fds);
	return rc;
}

/* ---- remove ---------------------------------------------------------- */

/* Queues the deletion of an object's record and user attributes. */
static int remove_one(struct objstore *s, rocksdb_writebatch_wi_t *wb, const struct obj_id *id)
{
	uint8_t k[KEY_MAX];
	size_t klen = key_obj(k, id->partition, id->object);
	struct db_iter i;
	int rc;

	if (!id->object)
		return -EINVAL;
	rc = batch_exists(s, wb, k, klen);
	if (rc <= 0)
		return rc ? rc : -ENOENT;
	rocksdb_writebatch_wi_delete(wb, (const char *)k, klen);
	for (iter_open_attrs(s, &i, id); iter_valid(&i); rocksdb_iter_next(i.it)) {
		size_t len;
		const uint8_t *ak = iter_key(&i, &len);

		rocksdb_writebatch_wi_delete(wb, (const char *)ak, len);
	}
	return iter_close(&i);
}

static int remove_run(struct objstore *s, uint64_t partition, const uint64_t *objects, size_t n,
		      int *results)
{
	rocksdb_writebatch_wi_t *wb = rocksdb_writebatch_wi_create(0, 1);
	uint64_t gone = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		struct obj_id id = { partition, objects[i] };

		results[i] = remove_one(s, wb, &id);
	}
	rc = batch_write(s, wb);
	rocksdb_writebatch_wi_destroy(wb);
	if (rc)
		return rc;
	/* The records are gone: from here on a crash leaves only orphans. */
	for (size_t i = 0; i < n; i++) {
		struct obj_id id = { partition, objects[i] };

		if (results[i])
			continue;
		/* After it no write is still at the files (cache_forget). */
		cache_forget(s, &id);
		data_unlink(s, &id);
		csum_unlink(s, &id);
		gone++;
	}
	atomic_fetch_sub(&s->nobjects, gone);
	return 0;
}

int objstore_object_remove(struct objstore *s, uint64_t partition, const uint64_t *objects,
			   size_t n, int *results)
{
	int rc;

	if (!partition)
		return -EINVAL;
	pthread_mutex_lock(&s->meta_lock);
	rc = part_exists(s, partition);
	if (!rc)
		rc = remove_run(s, partition, objects, n, results);
	pthread_mutex_unlock(&s->meta_lock);
	return rc;
}

/* ---- list ------------------------------------------------------------ */

int objstore_object_list(struct objstore *s, uint64_t partition, uint64_t after, uint64_t *ids,
			 size_t max, size_t *n, bool *eof)
{
	uint8_t prefix[KEY_MAX];
	int rc;

	if (!partition)
		return -EINVAL;
	rc = part_exists(s, partition);
	if (rc)
		return rc;
	return db_list_ids(s, prefix, key_part(prefix, K_OBJ, partition), after, ids, max, n, eof);
}
