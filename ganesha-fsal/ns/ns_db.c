/* The store's RocksDB: options, open, and thin wrappers that turn RocksDB's
 * error strings into a logged message and -EIO. */
#include "ns_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byteorder.h"

#define BLOCK_CACHE_BYTES (64u << 20)
#define MULTI_MAX 4
#define MERGES_MAX 64

void db_say(struct ns_store *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->log)
		s->log(s->log_arg, msg);
	else
		fprintf(stderr, "pando-ns: %s\n", msg);
}

int db_err(struct ns_store *s, const char *what, char *err)
{
	db_say(s, "%s: %s", what, err);
	rocksdb_free(err);
	return -EIO;
}

/* ---- open / close ---------------------------------------------------- */

static void db_log(void *arg, const char *msg)
{
	db_say(arg, "%s", msg);
}

/* What differs from the object store's options, and why. */
static struct pando_rdb_config db_config(struct ns_store *s, bool create)
{
	return (struct pando_rdb_config){
		.create_if_missing = create,
		/* RocksDB would make the directory before finding it holds no
		 * database: ns_open answers -ENOENT for it instead. */
		.missing_is_enoent = true,
		/* Flush and compaction run beside Ganesha's own threads. */
		.max_background_jobs = 2,
		/* Every lookup, getattr and readdir reads here: a larger cache
		 * than the OSD's index. */
		.block_cache_bytes = BLOCK_CACHE_BYTES,
		/* Every create first looks for a name that is not there. */
		.bloom_full = true,
		/* A crash keeps a prefix of the batches, each whole: every
		 * invariant that holds between batches holds after recovery. */
		.point_in_time_recovery = true,
		.merge_operator = merge_operator(),
		/* Every operation merges into the same few counter keys: fold
		 * them on the way in, so a statfs never folds a memtable's worth.
		 * Exact under concurrency: RocksDB inserts batches that merge one
		 * by one. */
		.max_successive_merges = MERGES_MAX,
		/* Durability comes from syncing the WAL in batches (ns_sync.c). */
		.sync_writes = false,
		.log = db_log,
		.log_arg = s,
	};
}

/* The store holds every name and small files' data: its directory is the
 * owner's alone, made so (RocksDB would make it 0755) or tightened. */
static void private_dir(struct ns_store *s, const char *dir, bool create)
{
	struct stat st;

	if (create && mkdir(dir, 0700) == 0)
		return;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & 077))
		return;
	if (chmod(dir, st.st_mode & 0700) == 0)
		db_say(s, "%s: was mode %04o, now %04o", dir, st.st_mode & 07777,
		       st.st_mode & 0700);
}

int db_open(struct ns_store *s, const char *dir, bool create)
{
	struct pando_rdb_config c = db_config(s, create);
	char *err;
	int rc;

	private_dir(s, dir, create);
	rc = pando_rdb_open(dir, &c, &s->dbopts, &s->db, &err);

	if (rc == -EBUSY) {
		db_say(s, "%s: %s", dir, err);
		rocksdb_free(err);
	} else if (err) {
		rc = db_err(s, "open", err);
	}
	s->wopts = s->dbopts.write;
	s->ropts = s->dbopts.read;
	return rc;
}

void db_free(struct ns_store *s)
{
	pando_rdb_close(&s->db, &s->dbopts);
}

/* ---- get / write ----------------------------------------------------- */

/* *v is NULL when the key is absent; free it with rocksdb_free. */
int db_get(struct ns_store *s, const uint8_t *k, size_t klen, char **v, size_t *vlen)
{
	char *err = NULL;

	*v = rocksdb_get(s->db, s->ropts, (const char *)k, klen, vlen, &err);
	return err ? db_err(s, "get", err) : 0;
}

/* Up to MULTI_MAX keys from one consistent view; absent ones get NULL. */
int db_multi_get(struct ns_store *s, size_t n, const uint8_t *const *keys, const size_t *klens,
		 char **vals, size_t *vlens)
{
	char *errs[MULTI_MAX];
	int rc = 0;

	if (n > MULTI_MAX)
		return -EINVAL;
	rocksdb_multi_get(s->db, s->ropts, n, (const char *const *)keys, klens, vals, vlens, errs);
	for (size_t i = 0; i < n; i++) {
		if (errs[i])
			rc = db_err(s, "multi get", errs[i]);
	}
	if (rc) {
		for (size_t i = 0; i < n; i++)
			rocksdb_free(vals[i]);
	}
	return rc;
}

/* The opaque value of an id's key (maps, policies, junctions) in *blob,
 * malloc'd (the caller frees it); -ENOENT when absent. */
int db_get_blob(struct ns_store *s, uint8_t type, uint64_t id, void **blob, size_t *len)
{
	uint8_t k[ID_KEY_LEN];
	char *v;
	int rc = db_get(s, k, key_id(k, type, id), &v, len);

	if (rc)
		return rc;
	if (!v)
		return -ENOENT;
	*blob = malloc(*len ? *len : 1);
	if (*blob)
		memcpy(*blob, v, *len);
	rocksdb_free(v);
	return *blob ? 0 : -ENOMEM;
}

int db_list_ids(struct ns_store *s, uint8_t type, bool (*value_ok)(const uint8_t *v, size_t len),
		ns_ino_fn fn, void *arg)
{
	uint8_t prefix[1] = { type };
	struct db_iter i;
	int rc = 0;

	iter_open_prefix(s, &i, prefix, sizeof(prefix));
	for (; iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		if (klen != ID_KEY_LEN || (value_ok && !value_ok(v, vlen))) {
			db_say(s, "bad '%c' record: skipped", type);
			rc = -EIO;
			continue;
		}
		if (fn(arg, get_be64(k + 1)))
			break;
	}
	if (iter_close(s, &i))
		rc = -EIO;
	return rc;
}

/* A u64 value, 0 when absent. */
int db_get_u64(struct ns_store *s, const uint8_t *k, size_t klen, uint64_t *val)
{
	size_t vlen;
	char *v;
	int rc = db_get(s, k, klen, &v, &vlen);

	if (rc)
		return rc;
	*val = 0;
	if (v && vlen == 8)
		*val = get_be64((const uint8_t *)v);
	else if (v)
		rc = -EIO;
	rocksdb_free(v);
	return rc;
}

/* Writes the batch to this store's RocksDB alone (not synced) and says
 * what sequence number covers it: db_write without a journal, and
 * ns_apply's write. */
int db_write_local(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq)
{
	char *err = NULL;
	int rc = space_failed(s);

	if (rc)
		return rc;
	rocksdb_write(s->db, s->wopts, b, &err);
	if (err) {
		rc = space_write_failed(s, err);
		rocksdb_free(err);
		return rc;
	}
	*seq = rocksdb_get_latest_sequence_number(s->db);
	return 0;
}

/* Every change to the store is written here (not synced), so that the
 * journal, when there is one, sees them all. */
int db_write(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq)
{
	if (atomic_load_explicit(&s->applying, memory_order_relaxed))
		return -EROFS;
	if (s->journal.append)
		return journal_write(s, b, seq);
	return db_write_local(s, b, seq);
}

/* One key in a batch of its own, not synced: every change goes through
 * db_write. */
int db_put(struct ns_store *s, const uint8_t *k, size_t klen, const void *v, size_t vlen)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t seq;
	int rc;

	rocksdb_writebatch_put(b, (const char *)k, klen, v, vlen);
	rc = db_write(s, b, &seq);
	rocksdb_writebatch_destroy(b);
	return rc;
}

int db_delete(struct ns_store *s, const uint8_t *k, size_t klen)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t seq;
	int rc;

	rocksdb_writebatch_delete(b, (const char *)k, klen);
	rc = db_write(s, b, &seq);
	rocksdb_writebatch_destroy(b);
	return rc;
}

/* ---- iteration ------------------------------------------------------- */

void iter_open(struct ns_store *s, struct db_iter *i, const uint8_t *start, size_t slen,
	       const uint8_t *end, size_t elen)
{
	memcpy(i->end, end, elen);
	i->ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_iterate_upper_bound(i->ro, (const char *)i->end, elen);
	i->it = rocksdb_create_iterator(s->db, i->ro);
	rocksdb_iter_seek(i->it, (const char *)start, slen);
}

/* Over every key that starts with prefix. */
void iter_open_prefix(struct ns_store *s, struct db_iter *i, const uint8_t *prefix, size_t plen)
{
	uint8_t end[KEY_MAX];

	memcpy(end, prefix, plen);
	prefix_end(end, plen);
	iter_open(s, i, prefix, plen, end, plen);
}

bool iter_valid(struct db_iter *i)
{
	return rocksdb_iter_valid(i->it);
}

const uint8_t *iter_key(struct db_iter *i, size_t *len)
{
	return (const uint8_t *)rocksdb_iter_key(i->it, len);
}

const uint8_t *iter_value(struct db_iter *i, size_t *len)
{
	return (const uint8_t *)rocksdb_iter_value(i->it, len);
}

void iter_next(struct db_iter *i)
{
	rocksdb_iter_next(i->it);
}

/* Closes the iterator and says whether it stopped on an error. */
int iter_close(struct ns_store *s, struct db_iter *i)
{
	char *err = NULL;

	rocksdb_iter_get_error(i->it, &err);
	rocksdb_iter_destroy(i->it);
	rocksdb_readoptions_destroy(i->ro);
	return err ? db_err(s, "iterate", err) : 0;
}
