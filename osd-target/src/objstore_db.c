/* The object store's RocksDB index.
 *
 * Keys, integers big-endian so that iteration runs in id order:
 *
 *   'P' partition(8)                               partition record
 *   'O' partition(8) object(8)                     object record
 *   'A' partition(8) object(8) page(4) number(4)   user attribute value
 *   'N' partition(8)                               next id to hand out (u64)
 *   'R'                                            "running": present while
 *                                                  the store is open, so a
 *                                                  crash is seen at next open
 *
 * Partition record, 9 bytes: u8 version (1), u64 created_ns.
 *
 * Object record, 37 bytes:
 *    0  u8   version (2)
 *    1  u64  created_ns
 *    9  u64  ctime_ns      last change of an attribute kept in RocksDB
 *                          (owner, component, capability versions, user pages)
 *   17  u64  owner_file
 *   25  u32  component
 *   29  u32  cap_version   current: read-write handles must carry it
 *   33  u32  read_floor    read handles carry a version in [floor, current]
 * Version 1 (33 bytes, written before the read floor) is still read, with
 * the floor at cap_version: its handles keep the meaning they had.
 *
 * Length and mtime are not in the record: the data file's size and mtime are
 * the one source of truth, made durable by the fdatasync that makes the data
 * durable. */
#include "objstore_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "log.h"

/* ---- keys and records ------------------------------------------------ */

size_t key_part(uint8_t *k, uint8_t type, uint64_t partition)
{
	k[0] = type;
	put_be64(k + 1, partition);
	return 9;
}

size_t key_obj(uint8_t *k, uint64_t partition, uint64_t object)
{
	key_part(k, K_OBJ, partition);
	put_be64(k + 9, object);
	return 17;
}

size_t key_attr(uint8_t *k, const struct obj_id *id, uint32_t page, uint32_t number)
{
	key_part(k, K_ATTR, id->partition);
	put_be64(k + 9, id->object);
	put_be32(k + 17, page);
	put_be32(k + 21, number);
	return KEY_MAX;
}

/* The smallest key above every key starting with prefix k[0..len). */
void prefix_end(uint8_t *k, size_t len)
{
	while (len > 0 && k[len - 1] == 0xff)
		k[--len] = 0;
	k[len - 1]++;
}

void rec_encode(const struct obj_rec *r, uint8_t *v)
{
	v[0] = OBJ_REC_VERSION;
	put_be64(v + 1, r->created_ns);
	put_be64(v + 9, r->ctime_ns);
	put_be64(v + 17, r->owner_file);
	put_be32(v + 25, r->component);
	put_be32(v + 29, r->cap_version);
	put_be32(v + 33, r->read_floor);
}

static int rec_decode(const uint8_t *v, size_t len, struct obj_rec *r)
{
	bool v1 = len == OBJ_REC_V1_LEN && v[0] == 1;

	if (!v1 && (len != OBJ_REC_LEN || v[0] != OBJ_REC_VERSION))
		return -EIO;
	r->created_ns = get_be64(v + 1);
	r->ctime_ns = get_be64(v + 9);
	r->owner_file = get_be64(v + 17);
	r->component = get_be32(v + 25);
	r->cap_version = get_be32(v + 29);
	r->read_floor = v1 ? r->cap_version : get_be32(v + 33);
	return 0;
}

int rec_load(struct objstore *s, const struct obj_id *id, struct obj_rec *r)
{
	uint8_t k[KEY_MAX];
	size_t klen = key_obj(k, id->partition, id->object), vlen;
	char *v;
	int rc = db_get(s, k, klen, &v, &vlen);

	if (rc)
		return rc;
	if (!v)
		return -ENOENT;
	rc = rec_decode((const uint8_t *)v, vlen, r);
	rocksdb_free(v);
	if (rc)
		log_error("objstore: bad record for %" PRIx64 ".%" PRIx64, id->partition,
			  id->object);
	return rc;
}

int part_exists(struct objstore *s, uint64_t partition)
{
	uint8_t k[KEY_MAX];
	int rc = db_exists(s, k, key_part(k, K_PART, partition));

	return rc < 0 ? rc : rc ? 0 : -ENOENT;
}

/* ---- get / put / delete ---------------------------------------------- */

int db_err(const char *what, char *err)
{
	log_error("objstore: %s: %s", what, err);
	rocksdb_free(err);
	return -EIO;
}

/* *val is NULL when the key is absent; free it with rocksdb_free. */
int db_get(struct objstore *s, const uint8_t *k, size_t klen, char **val, size_t *vlen)
{
	char *err = NULL;

	*val = rocksdb_get(s->db, s->ropts, (const char *)k, klen, vlen, &err);
	return err ? db_err("get", err) : 0;
}

/* 1 if present, 0 if absent, or -EIO. */
int db_exists(struct objstore *s, const uint8_t *k, size_t klen)
{
	size_t vlen;
	char *v;
	int rc = db_get(s, k, klen, &v, &vlen);

	if (rc)
		return rc;
	rocksdb_free(v);
	return v != NULL;
}

int db_write(struct objstore *s, rocksdb_writebatch_t *b)
{
	char *err = NULL;

	rocksdb_write(s->db, s->wsync, b, &err);
	return err ? db_err("write", err) : 0;
}

int db_put(struct objstore *s, const uint8_t *k, size_t klen, const void *v, size_t vlen)
{
	char *err = NULL;

	rocksdb_put(s->db, s->wsync, (const char *)k, klen, v, vlen, &err);
	return err ? db_err("put", err) : 0;
}

int db_delete(struct objstore *s, const uint8_t *k, size_t klen)
{
	char *err = NULL;

	rocksdb_delete(s->db, s->wsync, (const char *)k, klen, &err);
	return err ? db_err("delete", err) : 0;
}

/* ---- iteration ------------------------------------------------------- */

void iter_open(struct objstore *s, struct db_iter *i, const uint8_t *start, size_t slen,
	       const uint8_t *end, size_t elen)
{
	memcpy(i->end, end, elen);
	i->ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_iterate_upper_bound(i->ro, (const char *)i->end, elen);
	i->it = rocksdb_create_iterator(s->db, i->ro);
	rocksdb_iter_seek(i->it, (const char *)start, slen);
}

/* Over the user attributes of one object. */
void iter_open_attrs(struct objstore *s, struct db_iter *i, const struct obj_id *id)
{
	uint8_t start[KEY_MAX], end[KEY_MAX];

	key_attr(start, id, 0, 0);
	memcpy(end, start, 17);
	prefix_end(end, 17);
	iter_open(s, i, start, KEY_MAX, end, 17);
}

bool iter_valid(struct db_iter *i)
{
	return rocksdb_iter_valid(i->it);
}

const uint8_t *iter_key(struct db_iter *i, size_t *len)
{
	return (const uint8_t *)rocksdb_iter_key(i->it, len);
}

/* Closes the iterator and says whether it stopped on an error. */
int iter_close(struct db_iter *i)
{
	char *err = NULL;

	rocksdb_iter_get_error(i->it, &err);
	rocksdb_iter_destroy(i->it);
	rocksdb_readoptions_destroy(i->ro);
	return err ? db_err("iterate", err) : 0;
}

/* Counts the keys of one type, e.g. every 'O' key. */
int db_count(struct objstore *s, uint8_t type, uint64_t *count)
{
	uint8_t start = type, end = type + 1;
	struct db_iter i;

	*count = 0;
	for (iter_open(s, &i, &start, 1, &end, 1); iter_valid(&i); rocksdb_iter_next(i.it))
		(*count)++;
	return iter_close(&i);
}

/* Lists the ids in the 8 bytes after a prefix of plen bytes, strictly above
 * after, for keys below the prefix's end. */
int db_list_ids(struct objstore *s, const uint8_t *prefix, size_t plen, uint64_t after,
		uint64_t *ids, size_t max, size_t *n, bool *eof)
{
	uint8_t start[KEY_MAX], end[KEY_MAX];
	struct db_iter i;

	*n = 0;
	*eof = true;
	if (after == UINT64_MAX)
		return 0;
	memcpy(start, prefix, plen);
	put_be64(start + plen, after + 1);
	memcpy(end, prefix, plen);
	prefix_end(end, plen);
	iter_open(s, &i, start, plen + 8, end, plen);
	for (; iter_valid(&i) && *n < max; rocksdb_iter_next(i.it)) {
		size_t klen;
		const uint8_t *k = iter_key(&i, &klen);

		if (klen == plen + 8)
			ids[(*n)++] = get_be64(k + plen);
	}
	*eof = !iter_valid(&i);
	return iter_close(&i);
}

/* ---- open / close ---------------------------------------------------- */

static void db_log(void *arg, const char *msg)
{
	log_warn("objstore: %s", msg);
}

/* What differs from the namespace store's options, and why. */
static struct pando_rdb_config db_config(bool create)
{
	return (struct pando_rdb_config){
		.create_if_missing = create,
		/* Object data files need the descriptors more than table files do. */
		.max_open_files = 256,
		/* A 33-byte record per object: the hot ones fit in a small cache. */
		.block_cache_bytes = 8u << 20,
		/* Creates probe for ids that do not exist yet; the per-block filter
		 * is what stores made so far were written with. */
		.bloom_full = false,
		/* A record must be durable before the reply that reports it;
		 * object data is synced by its own fdatasync. */
		.sync_writes = true,
		.log = db_log,
	};
}

static int db_open_at(const char *dir, bool create, rocksdb_t **db, struct pando_rdb_options *o)
{
	struct pando_rdb_config c = db_config(create);
	char *path, *err;
	int rc;

	if (asprintf(&path, "%s/db", dir) < 0)
		return -ENOMEM;
	rc = pando_rdb_open(path, &c, o, db, &err);
	free(path);
	if (rc == -EBUSY && !create) {
		/* Another process holds the store. */
		log_error("objstore: %s: %s", dir, err);
		rocksdb_free(err);
	} else if (err) {
		rc = db_err(create ? "create db" : "open db", err);
	}
	return rc;
}

int db_create(const char *dir)
{
	struct pando_rdb_options o = { 0 };
	rocksdb_t *db = NULL;
	int rc = db_open_at(dir, true, &db, &o);

	pando_rdb_close(&db, &o);
	return rc;
}

int db_open(struct objstore *s, const char *dir)
{
	int rc = db_open_at(dir, false, &s->db, &s->dbopts);

	s->wsync = s->dbopts.write;
	s->ropts = s->dbopts.read;
	return rc;
}

void db_free(struct objstore *s)
{
	pando_rdb_close(&s->db, &s->dbopts);
}
