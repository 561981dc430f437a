/* Client library for the OSD control protocol (proto/osd_ctl.x), for the
 * metadata manager (linked into ganesha.nfsd), the gateway, rebuild and
 * pando-osd-tool.
 *
 * One struct osd_ctl_client is one TCP connection to one target.  It is
 * safe to share between threads: calls on it are serialised (one call in
 * flight per connection; open several clients for parallelism).  There is
 * no global state, nothing exits or aborts, and SIGPIPE is never raised.
 *
 * Every call is signed (AUTH_PANDO) with the target's control key, derived
 * from the cluster key for the OSD id the client was opened for, over its
 * header and arguments, with a nonce of its own; every reply's verifier,
 * a MAC over its results, is checked, so an answer from a target that
 * does not hold the key, or one changed on its way, is refused.  Every
 * function returns 0 or a negative errno:
 *
 *   target status        -ENOENT -EIO -EACCES -EEXIST -EINVAL -EFBIG
 *                        -ENOSPC -ENOTEMPTY; -EREMOTEIO for SERVERFAULT
 *   authentication       -EACCES: the target denied our credential
 *                        (another key, another OSD id, clock skew over
 *                        300 s, or a replay); -EIO also when a MAC could
 *                        not be computed here
 *   procedure            -EOPNOTSUPP: the target does not know it (an
 *                        older pando-osd); the connection stays open
 *   transport            -ETIMEDOUT (no reply within the timeout),
 *                        -ECONNRESET (connection lost), -EPROTO (a reply
 *                        that is malformed, for another call, has a wrong
 *                        verifier (its results changed, or another key),
 *                        or is an RPC-level error), or what
 *                        connect() failed with (-ECONNREFUSED, ...)
 *   local                -EINVAL (bad argument), -ENOMEM
 *
 * After a transport error the connection is closed and the next call opens
 * a new one.  A failed call is not retried: the caller decides whether the
 * operation was idempotent.
 */
#ifndef PANDO_OSD_CTL_CLIENT_H
#define PANDO_OSD_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pando/cluster_key.h"

/* The protocol's bounds (osd_ctl.x), checked against it at build time. */
#define OSD_CTL_CLIENT_MAX_DATA (1u << 20) /* READ/WRITE bytes per call */
#define OSD_CTL_CLIENT_MAX_BATCH 4096u     /* objects per create/remove/list */
#define OSD_CTL_CLIENT_MAX_ATTRS 256u      /* attributes per get/set call */
#define OSD_CTL_CLIENT_MAX_ATTR_LEN 1024u
#define OSD_CTL_UUID_LEN 16
#define OSD_CTL_CLIENT_MAX_CSUMS 1024u      /* extents per CHECKSUMS answer */
#define OSD_CTL_CLIENT_MAX_CSUMS_VERIFY 64u /* ... with verify (4 MiB read) */
#define OSD_CTL_CSUM_SHIFT 16
#define OSD_CTL_CSUM_EXTENT_BYTES (1u << OSD_CTL_CSUM_SHIFT) /* 64 KiB */

enum osd_ctl_stable {
	OSD_CTL_UNSTABLE = 0,  /* page cache; osd_ctl_flush() makes it durable */
	OSD_CTL_DATA_SYNC = 1, /* durable before the reply */
	OSD_CTL_FILE_SYNC = 2,
};

struct osd_ctl_client;

struct osd_ctl_obj_id {
	uint64_t partition;
	uint64_t object;
};

struct osd_ctl_statfs {
	uint8_t uuid[OSD_CTL_UUID_LEN];
	uint32_t osd_id;
	uint32_t key_id;
	uint64_t total_bytes;
	uint64_t free_bytes;
	uint64_t partitions;
	uint64_t objects;
	uint64_t created_ns;
};

/* The target's I/O counters since it started (STATS; what each counts
 * is in osd_ctl.x and README.md). */
struct osd_ctl_stats {
	uint64_t started_ns;
	uint64_t nfs_read_ops;
	uint64_t nfs_read_bytes;
	uint64_t nfs_write_ops;
	uint64_t nfs_write_bytes;
	uint64_t nfs_write_unstable;
	uint64_t nfs_write_data_sync;
	uint64_t nfs_write_file_sync;
	uint64_t nfs_commit_ops;
	uint64_t nfs_err_rejected;
	uint64_t nfs_err_io;
	uint64_t nfs_err_other;
	uint64_t ctl_read_ops;
	uint64_t ctl_read_bytes;
	uint64_t ctl_write_ops;
	uint64_t ctl_write_bytes;
};

/* What a verify found about one extent. */
enum osd_ctl_csum_verify {
	OSD_CTL_CSUM_UNCHECKED = 0,  /* verify not asked */
	OSD_CTL_CSUM_OK = 1,         /* the bytes on disk match crc */
	OSD_CTL_CSUM_MISMATCH = 2,   /* they do not: the extent is bad here */
	OSD_CTL_CSUM_UNREADABLE = 3, /* the target could not read them */
};

/* One extent's checksum: CRC32C of object bytes [i * 64 KiB, (i + 1) *
 * 64 KiB), zeros past the end and in holes. */
struct osd_ctl_extent_csum {
	uint32_t crc; /* stored; that of zeros when not stored */
	bool stored;  /* false: never written */
	enum osd_ctl_csum_verify verify;
};

struct osd_ctl_create_item {
	uint64_t object; /* 0: the target picks; set to the id created */
	uint64_t owner_file;
	uint32_t component;
	uint32_t cap_version;
};

struct osd_ctl_attr_key {
	uint32_t page;
	uint32_t number;
};

/* Page 1 values are big-endian integers of their natural width (README). */
struct osd_ctl_attr {
	uint32_t page;
	uint32_t number;
	uint32_t len; /* 0: unset (get) / delete (set, user pages) */
	uint8_t value[OSD_CTL_CLIENT_MAX_ATTR_LEN];
};

/* Connects to "HOST:PORT" ("[V6ADDR]:PORT" for IPv6), the control port of
 * target osd_id: calls are signed with that target's control key (derived
 * from key's current key), which no other target accepts.  timeout_ms
 * bounds the connect and then every call (send and reply together).  NULL
 * with *err set on failure. */
struct osd_ctl_client *osd_ctl_connect(const char *host_port, const struct cluster_key *key,
				       uint32_t osd_id, int timeout_ms, int *err);
/* Closes the connection and frees the client; no call may be in flight. */
void osd_ctl_close(struct osd_ctl_client *c);

/* NULL with AUTH_PANDO: reachability and proof that both sides hold the key. */
int osd_ctl_null(struct osd_ctl_client *c);
int osd_ctl_statfs(struct osd_ctl_client *c, struct osd_ctl_statfs *out);
/* -EOPNOTSUPP from a target older than the counters. */
int osd_ctl_stats(struct osd_ctl_client *c, struct osd_ctl_stats *out);
/* Removes every partition and object; uuid must be the target's (statfs). */
int osd_ctl_format(struct osd_ctl_client *c, const uint8_t uuid[OSD_CTL_UUID_LEN]);

int osd_ctl_partition_create(struct osd_ctl_client *c, uint64_t partition);
/* -ENOTEMPTY while the partition holds objects. */
int osd_ctl_partition_remove(struct osd_ctl_client *c, uint64_t partition);

/* Creates n (<= OSD_CTL_CLIENT_MAX_BATCH) objects in one durable batch.
 * results[i] gets 0 or -errno per item (-EEXIST for a taken id), and
 * items[i].object the id created.  Returns -errno only if the batch as a
 * whole failed (no such partition, transport). */
int osd_ctl_objects_create(struct osd_ctl_client *c, uint64_t partition,
			   struct osd_ctl_create_item *items, size_t n, int *results);
int osd_ctl_objects_remove(struct osd_ctl_client *c, uint64_t partition, const uint64_t *objects,
			   size_t n, int *results);

/* Reads up to len bytes at off into buf, at most OSD_CTL_CLIENT_MAX_DATA
 * per call (longer requests are cut to it).  *n gets the bytes read and
 * *eof whether they reach the object's end; holes read as zeros. */
int osd_ctl_read(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t off, void *buf,
		 size_t len, size_t *n, bool *eof);
/* Writes all of buf (len <= OSD_CTL_CLIENT_MAX_DATA, else -EINVAL).  verf
 * (may be NULL) gets the target's write verifier: if it changes between
 * UNSTABLE writes and their flush, the target restarted and unflushed
 * data must be written again. */
int osd_ctl_write(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t off,
		  const void *buf, size_t len, enum osd_ctl_stable stable, uint8_t verf[8]);

/* Gets nkeys attributes (nkeys 0: all of page 1, then the user attributes)
 * into attrs[0..max); *n gets how many.  -EPROTO if the target sends
 * more than max. */
int osd_ctl_getattr(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		    const struct osd_ctl_attr_key *keys, size_t nkeys, struct osd_ctl_attr *attrs,
		    size_t max, size_t *n);
/* Sets n attributes in order; on failure *failed_index (may be NULL) names
 * the first that failed, and those before it took effect. */
int osd_ctl_setattr(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		    const struct osd_ctl_attr *attrs, size_t n, size_t *failed_index);

/* Ids greater than after, ascending, at most max (<= OSD_CTL_CLIENT_MAX_BATCH):
 * partitions when partition is 0, else that partition's objects. */
int osd_ctl_list(struct osd_ctl_client *c, uint64_t partition, uint64_t after, uint64_t *ids,
		 size_t max, size_t *n, bool *eof);
/* Makes an object's data durable; id NULL flushes the whole target. */
int osd_ctl_flush(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id);
/* Fences handles minted with any other version, read or write: the
 * object's version and read floor both become `version`.  *old (may be
 * NULL) gets the version replaced. */
int osd_ctl_set_cap_version(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
			    uint32_t version, uint32_t *old);
/* Revokes the write handles minted before and keeps the read handles: the
 * object's version rises to `version`, its read floor stays.  A version
 * not above the current one changes nothing (and succeeds).  *old (may be
 * NULL) gets the version before.  A target older than REVOKE_WRITERS:
 * -EOPNOTSUPP. */
int osd_ctl_revoke_writers(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
			   uint32_t version, uint32_t *old);

/* The extent checksums of an object from extent `first` on, at most count
 * (<= OSD_CTL_CLIENT_MAX_CSUMS, or OSD_CTL_CLIENT_MAX_CSUMS_VERIFY with
 * verify, else -EINVAL) into out; *n gets how many the target answered
 * (it may answer fewer: go on from first + *n), *length (may be NULL) the
 * object's length.  With verify the target reads the extents back and
 * says per extent whether they still match.  -EFBIG: first is past the
 * largest object; -EOPNOTSUPP: a target older than checksums. */
int osd_ctl_checksums(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t first,
		      size_t count, bool verify, struct osd_ctl_extent_csum *out, size_t *n,
		      uint64_t *length);

#endif
