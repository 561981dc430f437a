/* The namespace store of the metadata manager: inodes, directory entries,
 * symlink targets, small-file data and storage maps in RocksDB, after
 * TableFS (seed 001).  No Ganesha types in here or below; the FSAL adapts
 * Ganesha's ops onto these calls.  The key schema is in ../README.md.
 *
 * Inodes are named by a 64-bit id that is never reused, plus a 32-bit
 * generation: (ino, gen) is what a file handle carries.  Calls that take a
 * bare ino expect one the caller already resolved (from a handle or a
 * lookup); if the inode has gone since, they answer -ESTALE.
 *
 * Every function returns 0 (or what it says) or a negative errno:
 *   -ESTALE        no inode with that id (removed), or another generation
 *   -ENOENT        no such name
 *   -EEXIST        the name is taken
 *   -EINVAL        bad argument: empty name, '/' in a name, "." or ".."
 *                  where a new name is needed, a directory moved under itself
 *   -ENAMETOOLONG  a name past NS_NAME_MAX, a target past NS_SYMLINK_MAX
 *   -ENOTDIR, -EISDIR, -ENOTEMPTY, -EMLINK, -EPERM: as POSIX says
 *   -EFBIG         the write or size would take inline data past the inline
 *                  threshold: move the file to objects (ns_map_set), retry
 *   -EREMOTE       the file's data lives in objects, not in the store
 *   -ENODATA       the file has no storage map (still inline)
 *   -EAGAIN        the inode changed since the caller read it (ns_map_set)
 *   -EIO           RocksDB failed, or a record is corrupt
 * The store is safe to use from many threads at once. */
#ifndef PANDO_NS_STORE_H
#define PANDO_NS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define NS_ROOT_INO 1
#define NS_NAME_MAX 255
#define NS_SYMLINK_MAX 4095
#define NS_LINK_MAX 65000
#define NS_INLINE_MAX_DEFAULT (64u << 10)
/* Readdir cookies start here: NFS gives 0 (start), 1 and 2 other meanings. */
#define NS_COOKIE_FIRST 3
#define NS_VERF_LEN 8

struct ns_store;

enum ns_type {
	NS_REG = 1,
	NS_DIR = 2,
	NS_LNK = 3,
	NS_CHR = 4,
	NS_BLK = 5,
	NS_FIFO = 6,
	NS_SOCK = 7,
};

/* The journal a standby metadata manager follows (issue 24): the store
 * hands it every batch it commits, in commit order, and waits for it
 * wherever it waits for its own log; what holds the batches (records on
 * OSD objects) is the caller's.  The standby applies them in the same
 * order (ns_apply), starting from a snapshot (ns_snapshot).
 *
 * A batch is RocksDB's write batch representation: a header of the first
 * sequence number it covers (u64) and its count of records (u32), both
 * little-endian, then the records, the last of which sets the store's
 * applied seq (ns_applied_seq) to the batch's seq, and to the journal's
 * term where it has one (ns_applied).  That seq, the one
 * append and sync are given, is the last sequence number the batch
 * covers (first + count - 1): each batch of a store starts right after
 * the one before it.
 *
 * A failure of either call fails the operation with its error, and the
 * store with it (ns_failed: changes refused until a restart, reads go on),
 * lest a later batch reach the journal past a lost one.  The failed batch
 * is already in RocksDB, where other threads may read it and a crash may
 * keep it, as after a crash between the two: the journal, not the
 * active's RocksDB, is then the namespace the standby must take over. */
struct ns_journal {
	/* Called for every batch, under the store's commit lock: copy the
	 * bytes (valid during the call only) and return, without blocking
	 * for long or calling back into the store.  0 or -errno. */
	int (*append)(void *arg, uint64_t seq, const void *batch, size_t len);
	/* Returns once every batch up to seq is durable in the journal, 0 or
	 * -errno.  Called after the store's own log is synced, by one thread
	 * at a time (group commit: one call covers the batches of many
	 * operations), with seq never going back.  NULL: append alone makes a
	 * batch durable. */
	int (*sync)(void *arg, uint64_t seq);
	void *arg;
	/* The leadership writing (the manager group's term), recorded with
	 * each batch's seq, so every store of the group says which term
	 * wrote the last batch it holds (ns_applied).  0: none. */
	uint64_t term;
};

struct ns_options {
	size_t inline_max; /* 0: NS_INLINE_MAX_DEFAULT */
	/* Namespace changes do not wait for the disk, nor for the journal's
	 * sync (batches are still appended; ns_sync and ns_close still
	 * sync).  For tests, bulk loads and standbys (whose journal holds
	 * what a crash loses): NFS requires changes stable before the reply. */
	bool nosync;
	/* Bytes that must stay free on the store's disk: below it, new names
	 * and inline data get -ENOSPC (removals still work).  0: no check. */
	uint64_t reserve_bytes;
	/* Where RocksDB's error messages go; NULL: stderr. */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
	/* NULL: no journal.  Copied at open; what it calls must work until
	 * ns_close returns (ns_close syncs it). */
	const struct ns_journal *journal;
};

struct ns_attr {
	uint64_t ino;
	uint32_t gen;
	enum ns_type type;
	uint32_t mode; /* permission bits only, 07777 */
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint64_t size; /* directories: number of entries */
	uint32_t rdev_major;
	uint32_t rdev_minor;
	uint64_t change;     /* moves on every change (NFSv4 change attr) */
	uint64_t parent;     /* directories: the one that holds it */
	uint32_t inline_len; /* bytes of data stored inline */
	bool objects;        /* data in OSD objects, see ns_map_get */
	bool has_verf;       /* made by an exclusive create: verf is its verifier */
	bool junction;       /* directories: a junction, see ns_junction_get */
	uint8_t verf[NS_VERF_LEN];
	struct timespec atime;
	struct timespec mtime;
	struct timespec ctime;
	struct timespec btime; /* creation */
};

/* What a new inode starts with. */
struct ns_new {
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint32_t rdev_major; /* ns_mknod of NS_CHR / NS_BLK */
	uint32_t rdev_minor;
};

enum ns_createmode {
	NS_UNCHECKED, /* an existing regular file is fine */
	NS_GUARDED,   /* an existing name is -EEXIST */
	NS_EXCLUSIVE, /* as GUARDED, but a retry with the verifier
				 * the file was created with succeeds */
};

enum ns_setattr_mask {
	NS_SET_MODE = 1u << 0,
	NS_SET_UID = 1u << 1,
	NS_SET_GID = 1u << 2,
	NS_SET_SIZE = 1u << 3,
	NS_SET_ATIME = 1u << 4, /* to sa->atime */
	NS_SET_MTIME = 1u << 5, /* to sa->mtime */
	NS_SET_ATIME_NOW = 1u << 6,
	NS_SET_MTIME_NOW = 1u << 7,
	/* With NS_SET_SIZE: only ever grow (LAYOUTCOMMIT's last write). */
	NS_SET_SIZE_GROW = 1u << 8,
	/* Durable at the next ns_sync rather than before return: the size and
	 * mtime an UNSTABLE write to objects leaves, which NFS makes stable
	 * only at COMMIT. */
	NS_SET_LAZY = 1u << 9,
	/* Only if the inode's change attribute is still sa->change, else
	 * -EAGAIN: a change computed from an earlier look at the file. */
	NS_SET_IF_CHANGE = 1u << 10,
	/* Clears the set-id bits a write by sa->writer clears
	 * (ns_setid_cleared), for writes whose bytes the store never sees
	 * (objects, pNFS).  Alone and with nothing to clear, it changes
	 * nothing.  A mode set in the same call is applied after it. */
	NS_SET_KILL_SETID = 1u << 11,
	/* With NS_SET_SIZE_GROW: past the store's quota too.  For the size
	 * the manager settles from what the OSDs hold (after a crash, a
	 * fence): bytes written through a layout granted within the quota,
	 * which a client may already have been told are safe. */
	NS_SET_PAST_QUOTA = 1u << 12,
};

struct ns_setattr {
	unsigned mask;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint64_t size;
	struct timespec atime;
	struct timespec mtime;
	uint64_t change;              /* NS_SET_IF_CHANGE */
	const struct ns_cred *writer; /* NS_SET_KILL_SETID */
};

struct ns_dirent {
	uint64_t cookie; /* resume after this entry with it */
	uint64_t ino;
	enum ns_type type;
	size_t namelen;
	char name[NS_NAME_MAX + 1];
};

/* Return non-zero to stop after this entry. */
typedef int (*ns_readdir_fn)(void *arg, const struct ns_dirent *de);

enum ns_intent_kind {
	NS_INTENT_REMOVE = 1, /* remove the objects the blob names */
};

struct ns_intent {
	uint64_t id;
	uint64_t ino; /* the file the objects belonged to */
	enum ns_intent_kind kind;
	const void *blob; /* a storage map, or the part of one orphaned */
	size_t len;
};

/* Return non-zero to stop. */
typedef int (*ns_intent_fn)(void *arg, const struct ns_intent *in);

struct ns_statfs {
	uint64_t inodes;
	uint64_t bytes;        /* sum of regular files' sizes */
	uint64_t inline_bytes; /* of which stored inline */
};

struct ns_cred {
	uint32_t uid;
	uint32_t gid;
	const uint32_t *groups; /* supplementary groups */
	size_t ngroups;
};

#define NS_MAY_EXEC 1u
#define NS_MAY_WRITE 2u
#define NS_MAY_READ 4u

struct ns_check_result {
	uint64_t inodes;
	uint64_t dirents;
	uint64_t bad_records;      /* undecodable or malformed keys/values */
	uint64_t dangling_dirents; /* name of an inode that is not there */
	uint64_t index_mismatches; /* name and cookie index disagree */
	uint64_t bad_links;        /* nlink, entry count or parent wrong */
	uint64_t orphans;          /* inodes no directory reaches */
	uint64_t stray_keys;       /* data, map or target of a wrong inode */
	uint64_t bad_counters;     /* statfs counters or next id wrong */
	uint64_t problems;         /* the sum of the above */
};

/* One line per problem found. */
typedef void (*ns_check_say_fn)(void *arg, const char *msg);

/* ns_store.c */
/* Creates the store in DIR with an empty root directory (0755, uid 0).
 * -EEXIST if DIR already holds one. */
int ns_format(const char *dir, const struct ns_options *opts);
/* -ENOENT if DIR holds no store; -EBUSY if another process has it open. */
int ns_open(const char *dir, const struct ns_options *opts, struct ns_store **out);
void ns_close(struct ns_store *s);
/* The file system's identity, fixed at format. */
void ns_uuid(const struct ns_store *s, uint8_t uuid[16]);
/* True once RocksDB refused a write: changes are refused until a restart
 * (ns_space.c); for health reports. */
bool ns_failed(struct ns_store *s);
size_t ns_inline_max(const struct ns_store *s);
int ns_statfs(struct ns_store *s, struct ns_statfs *st);
/* Makes every change so far durable (NFS COMMIT of inline data). */
int ns_sync(struct ns_store *s);

/* ns_attr.c */
int ns_getattr(struct ns_store *s, uint64_t ino, struct ns_attr *out);
/* As ns_getattr, for a file handle: -ESTALE unless gen matches too. */
int ns_getattr_handle(struct ns_store *s, uint64_t ino, uint32_t gen, struct ns_attr *out);
int ns_setattr(struct ns_store *s, uint64_t ino, const struct ns_setattr *sa, struct ns_attr *out);

/* ns_dir.c */
/* "." and ".." resolve too (".." of the root is the root). */
int ns_lookup(struct ns_store *s, uint64_t dir, const char *name, struct ns_attr *out);
int ns_lookup_cookie(struct ns_store *s, uint64_t dir, const char *name, uint64_t *cookie);
/* Entries after cookie (0: from the start), in cookie order.  *eof when
 * the directory had no more entries.  A cookie stays good while the
 * directory changes, even after its own entry is gone. */
int ns_readdir(struct ns_store *s, uint64_t dir, uint64_t cookie, ns_readdir_fn fn, void *arg,
	       bool *eof);

/* ns_create.c; out may be NULL everywhere. */
/* *existed (may be NULL) says the name was already there and nothing was
 * created: UNCHECKED on a regular file, EXCLUSIVE with the same verifier. */
int ns_create(struct ns_store *s, uint64_t dir, const char *name, const struct ns_new *in,
	      enum ns_createmode how, const uint8_t verf[NS_VERF_LEN], struct ns_attr *out,
	      bool *existed);
int ns_mkdir(struct ns_store *s, uint64_t dir, const char *name, const struct ns_new *in,
	     struct ns_attr *out);
int ns_mknod(struct ns_store *s, uint64_t dir, const char *name, enum ns_type type,
	     const struct ns_new *in, struct ns_attr *out);
int ns_symlink(struct ns_store *s, uint64_t dir, const char *name, const char *target,
	       const struct ns_new *in, struct ns_attr *out);
/* mkdir in the root of a junction with its blob (ns_junction.c), in one
 * batch.  -EINVAL: no blob, or one over NS_JUNCTION_MAX. */
int ns_mkjunction(struct ns_store *s, const char *name, const struct ns_new *in, const void *blob,
		  size_t len, struct ns_attr *out);

/* ns_link.c */
int ns_link(struct ns_store *s, uint64_t ino, uint64_t dir, const char *name, struct ns_attr *out);
int ns_unlink(struct ns_store *s, uint64_t dir, const char *name);
int ns_rmdir(struct ns_store *s, uint64_t dir, const char *name);

/* ns_rename.c */
int ns_rename(struct ns_store *s, uint64_t sdir, const char *sname, uint64_t ddir,
	      const char *dname);

/* ns_data.c */
/* Reads inline data; bytes past the stored ones up to the size are zeros. */
int ns_read(struct ns_store *s, uint64_t ino, uint64_t off, size_t len, void *buf, size_t *n,
	    bool *eof);
/* Writes inline data.  stable: durable before return (FILE_SYNC);
 * otherwise ns_sync makes it so.  writer: the set-id bits its write
 * clears go in the same batch (ns_setid_cleared); NULL clears none. */
int ns_write(struct ns_store *s, uint64_t ino, uint64_t off, const void *buf, size_t len,
	     bool stable, const struct ns_cred *writer, struct ns_attr *out);
/* The target, NUL-terminated; *len excludes the NUL.  -ERANGE if cap is
 * too small. */
int ns_readlink(struct ns_store *s, uint64_t ino, char *buf, size_t cap, size_t *len);

/* ns_map.c */
/* The storage map in a malloc'd buffer the caller frees. */
int ns_map_get(struct ns_store *s, uint64_t ino, void **map, size_t *len);
/* Sets a regular file's storage map, in one durable batch with:
 *  - an inline file: its inline data dropped, from now on object-backed;
 *  - orphans (may be NULL): a removal intent for the objects the old map
 *    had that the new one no longer has;
 *  - claim (0: none): the intent ns_intent_add recorded for the new
 *    objects before they were created, deleted now that the map owns them.
 * expect_change (0: any): -EAGAIN unless the inode's change attribute
 * still has this value, so inline data copied out was not written since. */
int ns_map_set(struct ns_store *s, uint64_t ino, uint64_t expect_change, const void *map,
	       size_t len, const void *orphans, size_t olen, uint64_t claim);

/* Reserves n (1..2^20) fresh ids for the caller's own use (the object ids
 * of a new storage map): never handed out again, by this call or to
 * inodes and intents.  Not synced on its own: the caller records the ids
 * in a durable intent (ns_intent_add, whose id is later) before it uses
 * them, and that batch carries the allocator past them. */
int ns_ids_reserve(struct ns_store *s, uint32_t n, uint64_t *first);

/* ns_damage.c: damage records.  A component a client or the gateway
 * found failing (an I/O error from its OSD) is recorded against the file,
 * durably, for repair to find; the records go with the file's map (last
 * unlink, truncate to zero).  Adding to an existing record counts it.
 * A record is stale once a write missed the component (sticky): its
 * bytes are out of date and nothing may read them until repair.  A
 * record that is not stale only says the component was reported failing:
 * its bytes may be good. */
struct ns_damage {
	uint64_t ino;
	uint32_t osd_id;
	bool stale;
	int32_t status; /* the last error reported (nfsstat4 or -errno) */
	uint32_t opnum; /* the operation it failed (nfs_opnum4), 0 unknown */
	uint32_t count; /* reports so far */
	struct timespec first;
	struct timespec last;
};
typedef int (*ns_damage_fn)(void *arg, const struct ns_damage *dr);
/* -ESTALE: no such file; -ENODATA: the file has no objects. */
int ns_damage_add(struct ns_store *s, uint64_t ino, uint32_t osd_id, int32_t status, uint32_t opnum,
		  bool stale);
/* The records of file ino (0: of every file), by file then OSD; fn
 * returns non-zero to stop. */
int ns_damage_list(struct ns_store *s, uint64_t ino, ns_damage_fn fn, void *arg);
/* Once repaired; a record that is not there is not an error. */
int ns_damage_clear(struct ns_store *s, uint64_t ino, uint32_t osd_id);

/* As ns_map_set without orphans, for an EMPTY file taking objects that
 * already exist (an intent names them: claim), and not synced: losing it
 * to a crash leaves the file empty and inline, and the intent removes the
 * objects.  Whatever later makes data durable in those objects (a synced
 * setattr, LAYOUTCOMMIT) is written after it in the same log, so it makes
 * this durable too. */
int ns_map_claim_empty(struct ns_store *s, uint64_t ino, uint64_t expect_change, const void *map,
		       size_t len, uint64_t claim);

/* ns_marks.c: files that have (or had, before a crash) write layouts
 * out.  A pNFS writer's bytes reach the OSDs without the manager, and
 * only its LAYOUTCOMMIT tells the manager the new size; a manager that
 * restarts cannot take a LAYOUTCOMMIT of the layouts it handed out
 * before.  So a file is recorded, durably, before its first write layout
 * goes out, and the record goes (unsynced) once every write layout of
 * the file has ended and its size is settled.  At start, the manager
 * fences and settles every file still recorded. */
typedef int (*ns_ino_fn)(void *arg, uint64_t ino);
/* Durable on return (group commit).  Allowed below the space reserve:
 * the record is what keeps committed bytes from being lost. */
int ns_wlayout_add(struct ns_store *s, uint64_t ino);
/* Not synced: losing it to a crash repeats a settle, which is harmless. */
int ns_wlayout_del(struct ns_store *s, uint64_t ino);
/* Every recorded file, by inode; fn returns non-zero to stop.  -EIO if a
 * malformed record was skipped (the others are still listed). */
int ns_wlayout_list(struct ns_store *s, ns_ino_fn fn, void *arg);

/* ns_marks.c: RS files whose rows the gateway is (or was, before a
 * crash) updating.  A row update writes data units, then parity units: a
 * manager killed in between leaves the row's parity disagreeing with its
 * data, and a later decode would return wrong bytes (the RAID write
 * hole).  So a file is recorded, durably, before its first row update
 * and the record goes (unsynced) once its updates are durable; at start
 * the manager recomputes the parity of every file still recorded.  Same
 * contract as the write-layout records above. */
int ns_write_hole_add(struct ns_store *s, uint64_t ino);
int ns_write_hole_del(struct ns_store *s, uint64_t ino);
int ns_write_hole_list(struct ns_store *s, ns_ino_fn fn, void *arg);

/* ns_policy.c: a storage policy per inode, an opaque blob (the layout
 * library's encoding).  A new inode takes its directory's blob in the
 * batch that makes it (create, mkdir, mknod, symlink), so a later change
 * to the directory's policy affects only what is made after; the blob
 * goes in the batch that frees its inode. */
#define NS_POLICY_MAX 4096
/* len 0 clears.  Durable on return.  -ESTALE: no such inode; -EINVAL: a
 * blob over NS_POLICY_MAX. */
int ns_policy_set(struct ns_store *s, uint64_t ino, const void *blob, size_t len);
/* *blob malloc'd, the caller frees it.  -ENOENT: the inode has none. */
int ns_policy_get(struct ns_store *s, uint64_t ino, void **blob, size_t *len);

/* ns_junction.c: a junction, a directory in the root that stands for a
 * volume another manager serves, holds an opaque blob (the manager's
 * encoding, mds/junction.h) from the batch that makes it
 * (ns_mkjunction) to the one that removes it; nothing can be made in it,
 * moved into it or linked into it (-EROFS), and it is neither renamed nor
 * renamed over (-EXDEV). */
#define NS_JUNCTION_MAX 2048
/* *blob malloc'd, the caller frees it.  -ENOENT: not a junction. */
int ns_junction_get(struct ns_store *s, uint64_t ino, void **blob, size_t *len);
/* fn for each junction's inode, by id; a non-zero return stops the walk.
 * -EIO if a malformed key was skipped. */
int ns_junction_list(struct ns_store *s, ns_ino_fn fn, void *arg);

/* ns_quota.c.  The store's quota: at most `bytes` of regular files'
 * sizes (ns_statfs's bytes) and `files` inodes (every type, the root's
 * too); 0: no limit.  Any operation whose batch would take the store past
 * it fails with -EDQUOT and changes nothing; what shrinks usage passes,
 * also over a quota lowered below it. */
struct ns_quota {
	uint64_t bytes;
	uint64_t files;
};
/* Both 0 clears it.  Durable on return. */
int ns_quota_set(struct ns_store *s, const struct ns_quota *q);
/* Zeros when none is set; -EBADMSG for an undecodable record. */
int ns_quota_get(struct ns_store *s, struct ns_quota *q);

/* ns_owners.c.  Every inode counts for its user and for its group, as it
 * counts for the store: one file, and its size if it is a regular file.
 * An owner's quota limits what it uses as the store's limits the store's:
 * the batch that would take any owner it grows past its quota fails with
 * -EDQUOT; a chown moves the inode's usage, so it too may fail. */
enum ns_owner_kind { NS_OWNER_USER = 'u', NS_OWNER_GROUP = 'g' };
struct ns_owner {
	enum ns_owner_kind kind;
	uint32_t id;
};
/* Both 0 clears it.  Durable on return.  -EINVAL: no such kind. */
int ns_owner_quota_set(struct ns_store *s, const struct ns_owner *o, const struct ns_quota *q);
/* The owner's quota (zeros: none) and what it uses. */
int ns_owner_quota_get(struct ns_store *s, const struct ns_owner *o, struct ns_quota *q,
		       struct ns_quota *used);
/* The bytes a file of uid and gid may still grow by: the least room the
 * store's quota and its user's and group's leave; UINT64_MAX under none. */
int ns_quota_room(struct ns_store *s, uint32_t uid, uint32_t gid, uint64_t *room);
typedef int (*ns_owner_quota_fn)(void *arg, const struct ns_owner *o, const struct ns_quota *q,
				 const struct ns_quota *used);
/* Each owner with a quota, groups then users, by id; a non-zero return
 * from fn stops the walk and is returned. */
int ns_owner_quota_list(struct ns_store *s, ns_owner_quota_fn fn, void *arg);

/* ns_intent.c.  Object removal the namespace owes: written in the batch
 * that orphans the objects (unlink of the last name, truncate to 0,
 * ns_map_set), finished by the FSAL's background worker, which calls
 * ns_intent_done once the objects are gone. */
int ns_intent_add(struct ns_store *s, uint64_t ino, const void *blob, size_t len, uint64_t *id);
/* Intents with id > after, oldest first. */
int ns_intent_list(struct ns_store *s, uint64_t after, ns_intent_fn fn, void *arg);
/* Not synced: losing it to a crash repeats a removal, which is harmless. */
int ns_intent_done(struct ns_store *s, uint64_t id);
/* 1 if intent id is still recorded, 0 if not, or -errno. */
int ns_intent_exists(struct ns_store *s, uint64_t id);

/* ns_access.c: POSIX permission checks, no store needed. */
/* 0 if c may do everything in want (NS_MAY_*) to a, else -EACCES. */
int ns_access(const struct ns_attr *a, const struct ns_cred *c, unsigned want);
/* 0 if c may remove or rename an entry for victim from dir as far as the
 * sticky bit goes, else -EPERM. */
int ns_sticky_allows(const struct ns_attr *dir, const struct ns_attr *victim,
		     const struct ns_cred *c);
/* The set-id bits (of 06000) a write by c must clear from a, as Linux
 * clears them (setattr_should_drop_suidgid, 6.2+): none on anything but
 * a regular file or for root (CAP_FSETID); else set-uid, and set-gid
 * where group execute is set or c is not in the file's group. */
uint32_t ns_setid_cleared(const struct ns_attr *a, const struct ns_cred *c);
/* 0 if c may read o's quota, as Linux's quotactl has it: root any, anyone
 * else their own user's and their groups'; else -EPERM. */
int ns_owner_quota_may_read(const struct ns_owner *o, const struct ns_cred *c);

/* ns_check.c: the consistency check pando-fsck builds on.  Walks the
 * whole store; run it on a quiet store.  Returns 0 (problems counted in
 * *res) or -errno when it could not walk. */
int ns_check(struct ns_store *s, ns_check_say_fn say, void *arg, struct ns_check_result *res);

/* ns_repair.c: what pando-fsck needs beyond ns_check.  Like ns_check, for
 * a quiet store: the caller holds it alone. */
/* Fixes every kind of problem ns_check counts, one line per fix through
 * say (may be NULL); *fixed counts the fixes by kind.  Entries of missing
 * inodes go, the readdir index is rebuilt from the entries (an index entry
 * whose entry is gone gives the name back), counts, parents and counters
 * are recomputed, inodes no path from the root reaches are linked into
 * /lost+found (made if absent) as "#<ino>", and stray data and targets are
 * deleted; a stray map becomes a removal intent, so its objects are
 * removed rather than leaked.  Durable on return.  -ENOTDIR if an orphan
 * needs /lost+found and that name is taken by something else. */
int ns_repair(struct ns_store *s, ns_check_say_fn say, void *arg, struct ns_check_result *fixed);

/* Every storage map ('M' key), in inode order; the blob is valid during
 * the call only.  Return non-zero to stop: ns_map_list returns it. */
typedef int (*ns_map_fn)(void *arg, uint64_t ino, const void *blob, size_t len);
int ns_map_list(struct ns_store *s, ns_map_fn fn, void *arg);
/* The same from the first inode above after: how a scrub resumes. */
int ns_map_list_from(struct ns_store *s, uint64_t after, ns_map_fn fn, void *arg);

/* The next id the store will hand out (inodes, intents, ns_ids_reserve). */
uint64_t ns_next_id(struct ns_store *s);
/* Makes the next id at least next, durably: for ids found in use outside
 * the store (object ids on the OSDs). */
int ns_ids_raise(struct ns_store *s, uint64_t next);

/* ns_apply.c, ns_snapshot.c: the standby's side of the journal.  Every
 * batch the journal carries ends by setting the store's applied seq to
 * its own seq, so every store of a group (the active and its standbys)
 * says which batch it holds last, and a standby assigns each batch the
 * sequence numbers the active did: one that takes over goes on where the
 * active was.  A standby's store starts as a snapshot of another store of
 * the group (ns_snapshot) and applies the batches after it in order,
 * each once; no other call writes to it meanwhile.  It is opened without
 * a journal, and may be opened with nosync: what a crash takes back, it
 * applies again from the journal (ns_sync before reporting a position
 * that lets the journal be trimmed).  To take over, it is closed and
 * opened again with a journal. */
/* Applies one batch as the active committed it; durable on return unless
 * the store is nosync.  From then until ns_close the store refuses every
 * other change (-EROFS).  The bytes are checked against the batch format
 * before RocksDB sees them (given a malformed batch, RocksDB logs it,
 * refuses every later write and then to open): -EINVAL, applying
 * nothing, for anything but a header and exactly count well-formed
 * records of the kinds the store writes (put, delete, range delete, a
 * merge into a counter or the next id), the last setting the applied seq
 * to the batch's seq.
 * The check is of structure: a flipped byte inside a key or value passes
 * it, so the journal checksums its records.  -EALREADY: the batch was
 * applied before; -ERANGE: it does not start right after the last one
 * (a batch is missing, or the active's store was changed without its
 * journal); -ENOENT: the store has no applied seq (start from
 * ns_snapshot); -EPERM: the store has a journal (it is an active). */
int ns_apply(struct ns_store *s, const void *batch, size_t len);
/* The seq of the last journaled batch the store holds: the last applied
 * on a standby, the last committed on an active; -ENOENT if the store has
 * never had a journal. */
int ns_applied_seq(struct ns_store *s, uint64_t *seq);
/* The same, and the term that wrote that batch (0 when its journal had
 * none). */
int ns_applied(struct ns_store *s, uint64_t *seq, uint64_t *term);
/* Makes DIR (which must not exist: -EEXIST) a copy of the store that a
 * standby opens and applies the batches after *seq to: every batch up to
 * *seq is in it and none after, and all of them are durable in the
 * journal before it returns; ns_applied_seq on the copy says *seq.  Of an
 * active (with its journal) or a standby; -ENOENT for a store that has
 * never had a journal, -EIO if the copy is not what it should be.  Hard
 * links where it can (DIR on the store's file system); writes wait only
 * while the links are made.  On failure, remove DIR. */
int ns_snapshot(struct ns_store *s, const char *dir, uint64_t *seq);

/* How far a walk over the whole store (ns_check, ns_repair, ns_map_list)
 * has come: every NS_PROGRESS_EVERY keys of one type ("inodes",
 * "entries", ...).  fn NULL: silence. */
#define NS_PROGRESS_EVERY 10000
typedef void (*ns_progress_fn)(void *arg, const char *what, uint64_t done);
void ns_set_progress(struct ns_store *s, ns_progress_fn fn, void *arg);

#endif
