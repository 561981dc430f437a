/* The store as a whole: format, open, close, identity, statfs.
 *
 *   ns_keys.c    keys and record layouts (the schema)
 *   ns_db.c      RocksDB options and wrappers     ns_merge.c  counters, ids
 *   ns_txn.c     transactions: locks, batch       ns_sync.c   group commit
 *   ns_inode.c   inode birth and death            ns_dir.c    entries, lookup, readdir
 *   ns_create.c  create, mkdir, mknod, symlink    ns_link.c   link, unlink, rmdir
 *   ns_rename.c  rename                           ns_attr.c   getattr, setattr
 *   ns_data.c    inline data, symlink targets     ns_map.c    storage maps
 *   ns_intent.c  object removal intents           ns_access.c permission checks
 *   ns_space.c   room on the disk, a failed store ns_check.c  consistency check (fsck)
 *   ns_journal.c the journal a standby follows   ns_apply.c  a standby applying it
 *   ns_snapshot.c the copy a new standby starts from */
#include "ns_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "byteorder.h"

static struct ns_store *store_alloc(const struct ns_options *opts)
{
	struct ns_store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->inline_max = NS_INLINE_MAX_DEFAULT;
	s->dir_fd = -1;
	if (opts) {
		if (opts->inline_max)
			s->inline_max = opts->inline_max;
		s->nosync = opts->nosync;
		s->reserve = opts->reserve_bytes;
		s->log = opts->log;
		s->log_arg = opts->log_arg;
		if (opts->journal)
			s->journal = *opts->journal;
	}
	for (int i = 0; i < LOCK_STRIPES; i++)
		pthread_mutex_init(&s->stripes[i], NULL);
	pthread_mutex_init(&s->rename_lock, NULL);
	pthread_mutex_init(&s->commit_lock, NULL);
	pthread_mutex_init(&s->quota_lock, NULL);
	pthread_mutex_init(&s->sync_lock, NULL);
	pthread_cond_init(&s->sync_done, NULL);
	return s;
}

static void store_free(struct ns_store *s)
{
	db_free(s);
	space_close(s);
	for (int i = 0; i < LOCK_STRIPES; i++)
		pthread_mutex_destroy(&s->stripes[i]);
	pthread_mutex_destroy(&s->rename_lock);
	pthread_mutex_destroy(&s->commit_lock);
	pthread_mutex_destroy(&s->quota_lock);
	pthread_mutex_destroy(&s->sync_lock);
	pthread_cond_destroy(&s->sync_done);
	free(s);
}

static int seed_generations(struct ns_store *s)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		return -EIO;
	atomic_init(&s->gen_seed, seed);
	return 0;
}

/* ---- format ---------------------------------------------------------- */

/* The superblock and the root directory in one batch: a crash leaves
 * either a whole store or none. */
static int write_root(struct ns_store *s)
{
	struct ns_new in = { .mode = 0755 };
	uint8_t k = K_SUPER, v[SUPER_REC_LEN], counter[2];
	struct ns_inode *root;
	struct txn t;
	int rc;

	if (getrandom(s->uuid, sizeof(s->uuid), 0) != sizeof(s->uuid))
		return -EIO;
	s->uuid[6] = (s->uuid[6] & 0x0f) | 0x40; /* RFC 4122 version 4 */
	s->uuid[8] = (s->uuid[8] & 0x3f) | 0x80;
	atomic_init(&s->next_id, NS_ROOT_INO);
	txn_begin(&t, s);
	root = inode_new(&t, NS_DIR, &in);
	root->parent = root->ino;
	super_encode(s->uuid, &t.now, v);
	rocksdb_writebatch_put(t.b, (const char *)&k, 1, (const char *)v, sizeof(v));
	/* The owners' counters are kept from the root's batch on (ns_owners.c). */
	put_be64(v, 1);
	rocksdb_writebatch_put(t.b, (const char *)counter, key_counter(counter, C_OWNERS),
			       (const char *)v, 8);
	rc = txn_commit(&t, true);
	/* A format is durable whatever the options say. */
	return rc ? rc : ns_sync(s);
}

int ns_format(const char *dir, const struct ns_options *opts)
{
	struct ns_store *s = store_alloc(opts);
	uint8_t k = K_SUPER;
	size_t vlen;
	char *v = NULL;
	int rc;

	if (!s)
		return -ENOMEM;
	rc = db_open(s, dir, true);
	if (!rc)
		rc = db_get(s, &k, 1, &v, &vlen);
	if (!rc && v)
		rc = -EEXIST;
	rocksdb_free(v);
	if (!rc)
		rc = seed_generations(s);
	if (!rc)
		rc = write_root(s);
	store_free(s);
	return rc;
}

/* ---- open / close ---------------------------------------------------- */

static int read_super(struct ns_store *s)
{
	uint8_t k = K_SUPER;
	size_t vlen;
	char *v;
	int rc = db_get(s, &k, 1, &v, &vlen);

	if (rc)
		return rc;
	if (!v)
		return -ENOENT;
	rc = super_decode((const uint8_t *)v, vlen, s->uuid);
	rocksdb_free(v);
	if (rc)
		db_say(s, "unknown superblock (format version %u?)", vlen ? (unsigned)v[0] : 0u);
	return rc;
}

static int read_next_id(struct ns_store *s)
{
	uint8_t k = K_NEXT;
	uint64_t next;
	int rc = db_get_u64(s, &k, 1, &next);

	if (!rc && next <= NS_ROOT_INO) {
		db_say(s, "next id %llu is below the root's", (unsigned long long)next);
		rc = -EIO;
	}
	if (!rc)
		atomic_init(&s->next_id, next);
	return rc;
}

int ns_open(const char *dir, const struct ns_options *opts, struct ns_store **out)
{
	struct ns_store *s = store_alloc(opts);
	int rc;

	if (!s)
		return -ENOMEM;
	rc = db_open(s, dir, false);
	if (!rc)
		rc = space_open(s, dir);
	if (!rc)
		rc = read_super(s);
	if (!rc)
		rc = read_next_id(s);
	if (!rc)
		rc = seed_generations(s);
	if (!rc)
		rc = owners_ready(s);
	if (rc) {
		store_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void ns_close(struct ns_store *s)
{
	if (!s)
		return;
	ns_sync(s);
	store_free(s);
}

/* ---- whole-store queries --------------------------------------------- */

void ns_uuid(const struct ns_store *s, uint8_t uuid[16])
{
	memcpy(uuid, s->uuid, 16);
}

size_t ns_inline_max(const struct ns_store *s)
{
	return s->inline_max;
}

int ns_statfs(struct ns_store *s, struct ns_statfs *st)
{
	uint8_t k[2];
	int rc = db_get_u64(s, k, key_counter(k, C_INODES), &st->inodes);

	if (!rc)
		rc = db_get_u64(s, k, key_counter(k, C_BYTES), &st->bytes);
	if (!rc)
		rc = db_get_u64(s, k, key_counter(k, C_INLINE), &st->inline_bytes);
	return rc;
}
