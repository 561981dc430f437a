/* Private to the namespace store's own files (and its tests): what lies
 * behind struct ns_store, the key and record codecs, and the transaction
 * every mutating operation runs in. */
#ifndef PANDO_NS_INTERNAL_H
#define PANDO_NS_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rocksdb/c.h>

#include "ns_store.h"
#include "pando_rdb.h"

/* Key types, the first byte of every key; see ns_keys.c for the layout. */
enum {
	K_APPLIED = 'A',
	K_COUNTER = 'C',
	K_DIRENT = 'D',
	K_DATA = 'F',
	K_INODE = 'I',
	K_SYMLINK = 'L',
	K_MAP = 'M',
	K_NEXT = 'N',
	K_DAMAGE = 'P',
	K_INDEX = 'R',
	K_SUPER = 'S',
	K_ROWS = 'U',
	K_WLAYOUT = 'W',
	K_INTENT = 'X',
	K_POLICY = 'Y',
	K_JUNCTION = 'J',
	K_QUOTA = 'Q',
};

/* Second byte of a 'C' key.  C_OWNERS alone marks the owner counters
 * (ns_owners.c) kept; after it, an owner's kind, id and C_INODES or
 * C_BYTES. */
enum { C_INODES = 'i', C_BYTES = 'b', C_INLINE = 'l', C_OWNERS = 'o' };
#define OWNER_COUNTER_KEY_LEN 8
#define OWNER_QUOTA_KEY_LEN 6

#define KEY_MAX (1 + 8 + NS_NAME_MAX)
#define ID_KEY_LEN 9
#define INDEX_KEY_LEN 17
#define INODE_REC_LEN 136
#define INODE_REC_VERSION 1
#define DIRENT_REC_LEN 16
#define INDEX_REC_HDR 9
#define INTENT_REC_HDR 10
#define INTENT_REC_VERSION 1
#define SUPER_REC_LEN 29
#define FORMAT_VERSION 1

/* Inode record flags. */
#define IF_OBJECTS 0x1u  /* data in objects; 'M' holds the map */
#define IF_VERF 0x2u     /* made by an exclusive create */
#define IF_JUNCTION 0x4u /* a junction: 'J' holds its blob (ns_junction.c) */

#define LOCK_STRIPES 1024
#define TXN_INODES 4

/* An inode record, decoded. */
struct ns_inode {
	uint64_t ino;
	uint8_t type;
	uint16_t flags;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint32_t nlink;
	uint32_t gen;
	uint64_t size;
	uint64_t rdev; /* major << 32 | minor */
	uint64_t change;
	uint64_t parent;     /* directories */
	uint64_t next_seq;   /* directories: next readdir cookie */
	uint64_t nentries;   /* directories */
	uint32_t inline_len; /* regular files: length of the 'F' value */
	uint8_t verf[NS_VERF_LEN];
	struct timespec atime;
	struct timespec mtime;
	struct timespec ctime;
	struct timespec btime;
};

/* A 'D' value: the entry's inode and its readdir cookie. */
struct dirent_rec {
	uint64_t ino;
	uint64_t seq;
};

struct ns_store {
	rocksdb_t *db;
	struct pando_rdb_options dbopts;
	rocksdb_writeoptions_t *wopts; /* dbopts.write, never synced: see ns_sync.c */
	rocksdb_readoptions_t *ropts;  /* dbopts.read */
	size_t inline_max;
	bool nosync;
	void (*log)(void *arg, const char *msg);
	void *log_arg;
	uint8_t uuid[16];

	_Atomic uint64_t next_id; /* inode and intent ids */
	_Atomic uint64_t gen_seed;

	/* Inode locks, striped by id; taken in stripe order.  rename_lock
	 * comes first and keeps directory parents still during a
	 * cross-directory rename's loop check. */
	pthread_mutex_t stripes[LOCK_STRIPES];
	pthread_mutex_t rename_lock;

	/* The journal (ns_journal.c), append NULL when none.  A batch's
	 * RocksDB write and its append happen under commit_lock, so the
	 * journal gets the batches in RocksDB's order; journaled_seq is the
	 * last one appended. */
	struct ns_journal journal;
	pthread_mutex_t commit_lock;
	_Atomic uint64_t journaled_seq;
	/* Taken before commit_lock: a quota's check and the write it allows.
	 * quota caches the 'Q' key while quota_known; applying a batch,
	 * which may hold one, clears it. */
	pthread_mutex_t quota_lock;
	struct ns_quota quota;
	bool owner_quotas; /* any owner's quota is set ('Q' keys after the store's) */
	_Atomic bool quota_known;

	/* A standby (ns_apply.c): once it applied a batch, nothing else
	 * writes.  applied_seq (under commit_lock) caches the 'A' key: the
	 * last journaled batch the store holds. */
	_Atomic bool applying;
	bool applied_known;
	uint64_t applied_seq;
	uint64_t applied_term; /* of the batch at applied_seq; 0: none said */

	/* Group commit: one WAL sync at a time covers every write before it. */
	pthread_mutex_t sync_lock;
	pthread_cond_t sync_done;
	bool syncing;
	uint64_t synced_seq;

	/* Room on the disk (ns_space.c). */
	int dir_fd;
	uint64_t reserve;
	_Atomic uint64_t space_sampled;
	_Atomic uint64_t space_free;
	_Atomic bool space_low;
	_Atomic int failed; /* -errno: RocksDB or the journal refused, no more changes */

	/* Told how far a whole-store walk (ns_check, ns_repair) has come. */
	ns_progress_fn progress;
	void *progress_arg;
};

/* One inode a transaction read or made.  raw is the record as read, so
 * commit writes only what changed. */
struct txn_slot {
	struct ns_inode rec;
	uint8_t raw[INODE_REC_LEN];
	uint64_t old_size;
	uint32_t old_inline;
	uint32_t old_uid, old_gid;
	bool fresh;
};

/* What a batch adds to the usage of the store and of each owner it
 * touches (at most a user and a group before and after, per inode). */
#define TXN_OWNERS (TXN_INODES * 4)
struct owner_delta {
	struct ns_owner o;
	int64_t inodes;
	int64_t bytes;
};
struct usage_delta {
	int64_t inodes;
	int64_t bytes;
	int64_t inline_bytes;
	struct owner_delta owner[TXN_OWNERS];
	int nowners;
};

/* A mutating operation: inode locks, the inodes it loaded, one write
 * batch.  Commit writes changed inodes, deletes those left with no link,
 * and adds the counter deltas, all in the batch. */
struct txn {
	struct ns_store *s;
	rocksdb_writebatch_t *b;
	unsigned stripes[TXN_INODES];
	int nstripes;
	struct txn_slot slot[TXN_INODES];
	int nslots;
	uint64_t top_id;
	struct timespec now;
	bool past_quota; /* the batch is not held to the quota (NS_SET_PAST_QUOTA) */
};

/* An iterator over [start, end) with its own copy of the bound, which
 * RocksDB only points to. */
struct db_iter {
	rocksdb_readoptions_t *ro;
	rocksdb_iterator_t *it;
	uint8_t end[KEY_MAX];
};

/* ns_keys.c */
size_t key_id(uint8_t *k, uint8_t type, uint64_t id);
size_t key_dirent(uint8_t *k, uint64_t dir, const char *name, size_t len);
size_t key_index(uint8_t *k, uint64_t dir, uint64_t seq);
size_t key_counter(uint8_t *k, uint8_t which);
size_t key_owner_counter(uint8_t *k, const struct ns_owner *o, uint8_t which);
size_t key_owner_quota(uint8_t *k, const struct ns_owner *o);
/* The owner a key of either kind names; false if it names none. */
bool owner_of_key(const uint8_t *k, size_t klen, struct ns_owner *o);
void prefix_end(uint8_t *k, size_t len);
void inode_encode(const struct ns_inode *r, uint8_t *v);
int inode_decode(uint64_t ino, const uint8_t *v, size_t len, struct ns_inode *r);
void dirent_encode(const struct dirent_rec *d, uint8_t *v);
int dirent_decode(const uint8_t *v, size_t len, struct dirent_rec *d);
size_t index_encode(uint64_t ino, uint8_t type, const char *name, size_t len, uint8_t *v);
int index_decode(const uint8_t *v, size_t vlen, uint64_t *ino, uint8_t *type, const char **name,
		 size_t *len);
void intent_encode_hdr(uint64_t ino, uint8_t kind, uint8_t *v);
int intent_decode(uint64_t id, const uint8_t *v, size_t len, struct ns_intent *in);
void super_encode(const uint8_t *uuid, const struct timespec *created, uint8_t *v);
int super_decode(const uint8_t *v, size_t len, uint8_t *uuid);

/* ns_db.c */
void db_say(struct ns_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int db_err(struct ns_store *s, const char *what, char *err);
int db_open(struct ns_store *s, const char *dir, bool create);
void db_free(struct ns_store *s);
int db_get(struct ns_store *s, const uint8_t *k, size_t klen, char **v, size_t *vlen);
int db_multi_get(struct ns_store *s, size_t n, const uint8_t *const *keys, const size_t *klens,
		 char **vals, size_t *vlens);
int db_get_blob(struct ns_store *s, uint8_t type, uint64_t id, void **blob, size_t *len);
/* fn for the id of each key of `type` (one byte and an id), in id order; a
 * key of another length, or whose value value_ok (may be NULL) refuses, is
 * skipped and logged, and makes the result -EIO. */
int db_list_ids(struct ns_store *s, uint8_t type, bool (*value_ok)(const uint8_t *v, size_t len),
		ns_ino_fn fn, void *arg);
int db_get_u64(struct ns_store *s, const uint8_t *k, size_t klen, uint64_t *val);
int db_write(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq);
int db_write_local(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq);
int db_put(struct ns_store *s, const uint8_t *k, size_t klen, const void *v, size_t vlen);
int db_delete(struct ns_store *s, const uint8_t *k, size_t klen);
void iter_open(struct ns_store *s, struct db_iter *i, const uint8_t *start, size_t slen,
	       const uint8_t *end, size_t elen);
void iter_open_prefix(struct ns_store *s, struct db_iter *i, const uint8_t *prefix, size_t plen);
bool iter_valid(struct db_iter *i);
const uint8_t *iter_key(struct db_iter *i, size_t *len);
const uint8_t *iter_value(struct db_iter *i, size_t *len);
void iter_next(struct db_iter *i);
int iter_close(struct ns_store *s, struct db_iter *i);

/* ns_quota.c: db_write, unless the batch (adding d) would take the store
 * or an owner past its quota: -EDQUOT, nothing written. */
int quota_write(struct ns_store *s, rocksdb_writebatch_t *b, const struct usage_delta *d,
		uint64_t *seq);
/* The store's quota, cached, and s->owner_quotas; under quota_lock. */
int quota_cached(struct ns_store *s, struct ns_quota *q);
/* A quota record: u8 version (1), u64 bytes, u64 files, big-endian. */
#define QUOTA_REC_LEN 17
void quota_record_encode(const struct ns_quota *q, uint8_t *v);
/* The quota record at k (the store's or an owner's): zeros when there
 * is none, -EBADMSG when it does not decode. */
int quota_record_read(struct ns_store *s, const uint8_t *k, size_t klen, struct ns_quota *q);

/* ns_owners.c */
/* Adds what the inode (as it was, as it is) adds to its owners. */
void owners_count(struct usage_delta *d, const struct txn_slot *sl, bool gone);
/* The deltas' merge operands into b. */
void owners_stage(rocksdb_writebatch_t *b, const struct usage_delta *d);
/* -EDQUOT if any owner d grows passes its quota; under quota_lock. */
int owners_within(struct ns_store *s, const struct usage_delta *d);
/* Whether an owner's quota is set; under quota_lock (cached with the
 * store's). */
int owners_any_quota(struct ns_store *s, bool *any);
/* At open: counts every owner's usage if the store never did. */
int owners_ready(struct ns_store *s);

/* Every owner's usage as a walk of the inodes counts it. */
struct owner_sum {
	struct ns_owner o;
	uint64_t inodes;
	uint64_t bytes;
	bool used;
};
struct owner_sums {
	struct owner_sum *v; /* open addressing, cap a power of 2 */
	size_t n, cap;
};
int owner_sums_add(struct owner_sums *t, const struct ns_inode *r);
const struct owner_sum *owner_sums_find(const struct owner_sums *t, const struct ns_owner *o);
void owner_sums_free(struct owner_sums *t);
/* The batch that makes the store's owner counters t's (and marks them
 * kept): a range delete of the old ones, then a put per owner. */
void owner_sums_stage(rocksdb_writebatch_t *b, const struct owner_sums *t);
/* That batch, written and synced. */
int owner_sums_write(struct ns_store *s, const struct owner_sums *t);
/* Says each owner counter that t disagrees with, and a store that does
 * not keep them; *nbad: how many. */
typedef void (*owner_bad_fn)(void *arg, const char *msg);
int owner_sums_compare(struct ns_store *s, const struct owner_sums *t, owner_bad_fn bad, void *arg,
		       uint64_t *nbad);

/* ns_merge.c */
rocksdb_mergeoperator_t *merge_operator(void);
void merge_add(rocksdb_writebatch_t *b, uint8_t which, int64_t delta);
void merge_add_key(rocksdb_writebatch_t *b, const uint8_t *k, size_t klen, int64_t delta);
void merge_next_id(rocksdb_writebatch_t *b, uint64_t next);

/* ns_sync.c */
int sync_upto(struct ns_store *s, uint64_t seq);
/* The seq every change so far is covered by: the last batch appended to
 * the journal when there is one, else RocksDB's. */
uint64_t committed_seq(struct ns_store *s);

/* ns_journal.c */
/* db_write with a journal: the write and the append under commit_lock. */
int journal_write(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq);
/* After the WAL sync: the journal's, up to seq.  0 without a journal. */
int journal_sync(struct ns_store *s, uint64_t seq);
/* Journals a batch of nothing but the applied seq; *seq is its seq. */
int journal_mark(struct ns_store *s, uint64_t *seq);

/* ns_apply.c */
/* The applied seq into s->applied_seq, under commit_lock; -ENOENT if the
 * store has none. */
int applied_load(struct ns_store *s);
void applied_put(rocksdb_writebatch_t *b, uint64_t seq, uint64_t term);
/* Checks a batch's bytes (ns_apply says what); its first and last seq. */
int batch_check(const void *batch, size_t len, uint64_t *first, uint64_t *last, uint64_t *term);

/* ns_space.c */
int space_open(struct ns_store *s, const char *dir);
void space_close(struct ns_store *s);
/* -ENOSPC while less than the reserve is free; space_failed() once the
 * store failed. */
int space_for_growth(struct ns_store *s);
/* Marks the store failed after RocksDB refused a write; -ENOSPC or -EIO. */
int space_write_failed(struct ns_store *s, const char *err);
/* 0, or why the store takes no more changes: -EIO, or the journal's
 * -ESHUTDOWN (its manager is no longer sure that it leads), which every
 * later change gets too. */
int space_failed(struct ns_store *s);

/* ns_damage.c: 'P' ino(8) osd(4) keys; the value layout in ns_damage.c's
 * header comment. */
#define DAMAGE_KEY_LEN 13
#define DAMAGE_REC_LEN 30
#define DAMAGE_REC_VERSION 1
void damage_drop_all(struct txn *t, uint64_t ino);
int damage_decode(const uint8_t *k, size_t klen, const uint8_t *v, size_t vlen,
		  struct ns_damage *out);

/* ns_policy.c: the directory's policy blob, if any, to the new inode; the
 * inode's blob goes with it. */
int policy_inherit(struct txn *t, uint64_t dir, uint64_t ino);
void policy_drop(struct txn *t, uint64_t ino);

/* ns_junction.c: a new directory's blob and flag; txn_dir for a
 * directory that is to take a new entry (-EROFS for a junction); the
 * inode's blob goes with it. */
void junction_put(struct txn *t, struct ns_inode *r, const void *blob, size_t len);
int txn_dir_open(struct txn *t, uint64_t ino, struct ns_inode **out);
void junction_drop(struct txn *t, const struct ns_inode *r);

/* ns_txn.c */
void txn_begin(struct txn *t, struct ns_store *s);
void txn_lock(struct txn *t, const uint64_t *inos, int n);
int txn_inode(struct txn *t, uint64_t ino, struct ns_inode **out);
/* txn_inode for a directory: -ENOTDIR when it is something else. */
int txn_dir(struct txn *t, uint64_t ino, struct ns_inode **out);
struct ns_inode *txn_fresh_inode(struct txn *t);
/* n consecutive fresh ids, the allocator moved past them at commit. */
uint64_t txn_reserve_ids(struct txn *t, uint32_t n);
void txn_touch(struct txn *t, struct ns_inode *r);
void txn_touch_data(struct txn *t, struct ns_inode *r);
int txn_intent(struct txn *t, uint64_t ino, const void *blob, size_t len, uint64_t *id);
int txn_commit(struct txn *t, bool durable);
void txn_abort(struct txn *t);

/* ns_inode.c */
int inode_load(struct ns_store *s, uint64_t ino, struct ns_inode *r);
void inode_to_attr(const struct ns_inode *r, struct ns_attr *a);
void inode_unlink(struct txn *t, struct ns_inode *r);
struct ns_inode *inode_new(struct txn *t, uint8_t type, const struct ns_new *in);
int inode_release_map(struct txn *t, struct ns_inode *r);
int inode_drop(struct txn *t, struct ns_inode *r, uint32_t old_inline);

/* ns_data.c */
int data_truncate(struct txn *t, struct ns_inode *r, uint64_t size);

/* ns_access.c: clears what ns_setid_cleared says; true if it did. */
bool inode_kill_setid(struct ns_inode *r, const struct ns_cred *c);

/* ns_dir.c */
int name_check(const char *name, size_t *len);
int dirent_get(struct ns_store *s, uint64_t dir, const char *name, size_t len,
	       struct dirent_rec *d);
int dirent_absent(struct ns_store *s, uint64_t dir, const char *name, size_t len);
int dirent_find(struct ns_store *s, uint64_t dir, const char *name, size_t len,
		struct dirent_rec *d);
void dirent_add(struct txn *t, struct ns_inode *dir, const char *name, size_t len,
		const struct ns_inode *child);
void dirent_del(struct txn *t, struct ns_inode *dir, const char *name, size_t len,
		const struct dirent_rec *d, uint8_t child_type);
void dirent_put(struct txn *t, uint64_t dir, const char *name, size_t len,
		const struct dirent_rec *d, uint8_t child_type);

/* ns_check.c */
/* Whether r should have a key of this type ('F', 'L', 'M', 'P' or 'Y'). */
bool inode_owns_key(const struct ns_inode *r, uint8_t type);

/* ns_progress.c */
/* Counts the n-th key of a walk over one key type, for the progress hook. */
void walk_progress(struct ns_store *s, uint8_t type, uint64_t n);

#endif
