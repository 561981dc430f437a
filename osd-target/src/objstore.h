/* The object store: partitions and objects with 64-bit ids, object data in
 * sharded files, the index and attributes in RocksDB.  No RPC in here.
 *
 * Every function returns 0 or a negative errno:
 *   -ENOENT    no such partition / object
 *   -EEXIST    already exists
 *   -ENOTEMPTY partition still holds objects
 *   -EINVAL    bad id (0 is reserved), bad attribute, bad length
 *   -EFBIG     offset or length past the largest object
 *   -ENOSPC    the target is full
 *   -EIO       anything the disk or RocksDB refused
 * The store is safe to use from many threads at once. */
#ifndef PANDO_OBJSTORE_H
#define PANDO_OBJSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OBJSTORE_MAX_OFFSET ((uint64_t)INT64_MAX)
#define OBJSTORE_ATTR_PAGE_INFO 1u
#define OBJSTORE_ATTR_PAGE_USER_MIN 0x10000u
#define OBJSTORE_ATTR_MAX_LEN 1024u

enum objstore_info_attr {
	OBJ_ATTR_LENGTH = 1,
	OBJ_ATTR_MTIME = 2,
	OBJ_ATTR_CTIME = 3,
	OBJ_ATTR_CREATED = 4,
	OBJ_ATTR_OWNER = 5,
	OBJ_ATTR_COMPONENT = 6,
	OBJ_ATTR_CAP_VERSION = 7,
	OBJ_ATTR_USED = 8,
	OBJ_ATTR_READ_FLOOR = 9,
};

struct objstore;
struct obj_ref;

struct obj_id {
	uint64_t partition;
	uint64_t object;
};

struct objstore_superblock {
	uint8_t uuid[16];
	uint32_t osd_id;
	uint32_t key_id;
	uint64_t created_ns;
};

struct objstore_stat {
	uint64_t total_bytes;
	uint64_t free_bytes;
	uint64_t partitions;
	uint64_t objects;
};

/* The "object info" attribute page. */
struct obj_info {
	uint64_t length;
	uint64_t used_bytes;
	uint64_t mtime_ns;
	uint64_t ctime_ns;
	uint64_t created_ns;
	uint64_t owner_file;
	uint32_t component;
	uint32_t cap_version;
	uint32_t read_floor;
};

struct obj_create_req {
	uint64_t object; /* 0: the store picks the next free id */
	uint64_t owner_file;
	uint32_t component;
	uint32_t cap_version; /* also the read floor */
};

enum obj_stable {
	OBJ_UNSTABLE = 0,  /* page cache only */
	OBJ_DATA_SYNC = 1, /* data (and size) durable before return */
	OBJ_FILE_SYNC = 2,
};

/* Creates DIR (if missing) and writes a fresh superblock and empty index.
 * Fails with -EEXIST if DIR already holds a superblock. */
int objstore_format(const char *dir, uint32_t osd_id, uint32_t key_id);
int objstore_open(const char *dir, struct objstore **out);
/* Syncs everything and frees the store; no obj_ref may be outstanding. */
void objstore_close(struct objstore *s);
const struct objstore_superblock *objstore_superblock(const struct objstore *s);
/* Records that the directory now belongs to cluster key key_id (after a
 * key rotation); the superblock is replaced atomically.  0 or -errno. */
int objstore_set_key_id(struct objstore *s, uint32_t key_id);
int objstore_statfs(struct objstore *s, struct objstore_stat *st);
/* Removes every partition and object, keeps the superblock identity. */
int objstore_wipe(struct objstore *s);

int objstore_partition_create(struct objstore *s, uint64_t partition);
int objstore_partition_remove(struct objstore *s, uint64_t partition);
/* Partitions with id > after, ascending, at most max; *eof when no more. */
int objstore_partition_list(struct objstore *s, uint64_t after, uint64_t *ids, size_t max,
			    size_t *n, bool *eof);

/* Creates n objects in one durable batch.  results[i] gets 0 or -errno;
 * reqs[i].object is filled in when the store picked the id.  Returns
 * -errno only when nothing could be attempted (bad partition, I/O). */
int objstore_object_create(struct objstore *s, uint64_t partition, struct obj_create_req *reqs,
			   size_t n, int *results);
int objstore_object_remove(struct objstore *s, uint64_t partition, const uint64_t *objects,
			   size_t n, int *results);
int objstore_object_list(struct objstore *s, uint64_t partition, uint64_t after, uint64_t *ids,
			 size_t max, size_t *n, bool *eof);

/* Open-object references: a cached descriptor plus the object's capability
 * versions, shared by all requests on the object.  Every get must be paired
 * with a put.  A removed object's outstanding refs answer -ENOENT. */
int objstore_get(struct objstore *s, const struct obj_id *id, struct obj_ref **out);
void objstore_put(struct objstore *s, struct obj_ref *ref);

/* An object has a current capability version (cur) and a read floor: a
 * read-write handle is good at cur only, a read handle from the floor to
 * cur.  The two are read together, as they were last set. */
void obj_ref_cap_versions(const struct obj_ref *ref, uint32_t *floor, uint32_t *cur);
/* A request through a capability holds the object's versions from its
 * check to its end (one hold per thread at a time), so that
 * objstore_set_cap_version and objstore_revoke_writers, which wait for
 * the holds, answer only once every request they overtook is done: after
 * either, nothing under a version it revoked lands. */
void obj_ref_cap_hold(struct obj_ref *ref);
void obj_ref_cap_release(struct obj_ref *ref);
/* Reads up to len bytes at off; *n is what was read, *eof when off + *n
 * reaches the logical length. */
int obj_ref_read(struct obj_ref *ref, uint64_t off, size_t len, void *buf, size_t *n, bool *eof);
/* The bytes a read of len at off would return (0 past the end, or when
 * the length cannot be had): what the disk model charges for a read. */
uint64_t obj_ref_readable(struct obj_ref *ref, uint64_t off, uint64_t len);
int obj_ref_write(struct obj_ref *ref, uint64_t off, const void *buf, size_t len,
		  enum obj_stable stable);
int obj_ref_sync(struct obj_ref *ref);
/* How many syncs of object data or checksums have failed since open.
 * Linux reports a writeback error once and drops the pages it could not
 * write, so the next sync succeeds over the loss: only this count says. */
uint64_t objstore_sync_failures(const struct objstore *s);

/* Extent checksums, for scrub.  Every object keeps a CRC32C per extent of
 * OBJ_CSUM_EXTENT bytes: extent i covers data bytes [i * 64 KiB,
 * (i + 1) * 64 KiB), zeros past the object's end and in holes.  Writes,
 * truncation and removal keep them; an extent never written has none
 * stored and stands for zeros. */
#define OBJ_CSUM_SHIFT 16
#define OBJ_CSUM_EXTENT (1u << OBJ_CSUM_SHIFT)
#define OBJ_CSUM_MAX_EXTENT (OBJSTORE_MAX_OFFSET >> OBJ_CSUM_SHIFT)

enum obj_csum_verify {
	OBJ_CSUM_UNCHECKED = 0,  /* not asked to verify */
	OBJ_CSUM_OK = 1,         /* the bytes on disk match the stored CRC */
	OBJ_CSUM_MISMATCH = 2,   /* they do not */
	OBJ_CSUM_UNREADABLE = 3, /* reading them failed */
};

struct obj_csum {
	uint32_t crc; /* stored, or that of zeros when none is */
	bool stored;
	enum obj_csum_verify verify;
};

/* The checksums of extents [first, first + count); with verify, the
 * extents are read back and compared.  *length gets the object's length.
 * -EFBIG when an extent starts past the largest object. */
int obj_ref_checksums(struct obj_ref *ref, uint64_t first, size_t count, bool verify,
		      struct obj_csum *out, uint64_t *length);
/* CRC32C of an extent's worth of zeros: what a hole's checksum is. */
uint32_t objstore_zero_crc(const struct objstore *s);
int obj_ref_info(struct obj_ref *ref, struct obj_info *info);

/* Attribute access by (page, number); see README.md for the pages.
 * Page 1 values are big-endian integers of their natural width. */
int objstore_attr_get(struct objstore *s, const struct obj_id *id, uint32_t page, uint32_t number,
		      void *buf, size_t cap, size_t *len);
/* len 0 on a user page deletes the attribute. */
int objstore_attr_set(struct objstore *s, const struct obj_id *id, uint32_t page, uint32_t number,
		      const void *val, size_t len);
/* Lists the user attributes of an object: pages/numbers ascending. */
int objstore_attr_list(struct objstore *s, const struct obj_id *id, uint32_t *pages,
		       uint32_t *numbers, size_t max, size_t *n);

/* A fence: sets cur and the read floor to version, so every handle
 * minted with another, read or write, is refused.  *old (may be NULL)
 * gets cur before. */
int objstore_set_cap_version(struct objstore *s, const struct obj_id *id, uint32_t version,
			     uint32_t *old);
/* Raises cur to version and leaves the floor: the write handles minted
 * before are refused, the read handles stay good.  A version not above
 * cur changes nothing.  *old (may be NULL) gets cur before. */
int objstore_revoke_writers(struct objstore *s, const struct obj_id *id, uint32_t version,
			    uint32_t *old);
/* Makes the object's data, or with id NULL every object's, durable. */
int objstore_flush(struct objstore *s, const struct obj_id *id);

#endif
