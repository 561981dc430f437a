/* Gateway I/O: a file's bytes on its component objects, under its storage
 * map (layout/), through the OSD control protocol.
 *
 * RAID-0, RAID-1 and RS(k,m) (objio_rs.c: parity computed here, rows
 * read-modify-written, lost units decoded).  Components on the OSDs in
 * `skip` (stale: they missed writes) are neither read nor written.  A write goes to every other
 * mirror of every stripe unit it touches.  A mirror that fails is handed
 * to the fault callback, which must record it durably as stale and
 * return 0; the write then succeeds degraded if every stripe unit reached
 * at least one mirror, and fails with -EIO otherwise (or if the callback
 * could not record).  A read takes each stripe unit from the first usable
 * mirror that answers, reporting each failure through the callback.
 * Errors about the request (-EFBIG, -EINVAL, -ENOSPC, -EDQUOT, -ERANGE)
 * fail the call as they are and mark nothing.
 *
 * Objects are sparse and keep file offsets (pando/stripe.h): a hole or a
 * short object reads as zeros up to the file size the caller gives. */
#ifndef PANDO_OBJIO_H
#define PANDO_OBJIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osd_conns.h"
#include "pando/storage_map.h"

/* Told about each component of file `owner` that failed: (group,
 * component), its OSD, the error, and whether a write missed it.  For a
 * write it must return 0 only once the component is durably recorded
 * stale. */
typedef int (*objio_fault_fn)(void *arg, uint64_t owner, uint32_t group, uint32_t component,
			      uint32_t osd_id, int err, bool write);

#define OBJIO_MAX_SKIP 16

struct objio {
	struct osd_conns *conns;
	uint64_t owner;       /* the file's inode id, stored on create */
	objio_fault_fn fault; /* NULL: every write failure is fatal */
	void *fault_arg;
	uint32_t skip[OBJIO_MAX_SKIP]; /* OSDs whose components are stale */
	size_t nskip;
	bool verf_changed; /* out: an OSD's write verifier changed
					 * (it restarted, or a sync failed there):
					 * unstable data may be lost */
};

/* Whether osd is in io's skip list. */
bool objio_skip_has(const struct objio *io, uint32_t osd);

/* The capability version objects are created with; a fence raises it. */
#define OBJIO_CAP_VERSION_NEW 1

/* Creates every component object of map (-EEXIST counts as done).  RS:
 * up to m components a group whose OSD fails are recorded stale through
 * the fault callback instead (the file is born degraded). */
int objio_create(struct objio *io, const struct pando_storage_map *map);
/* Removes every component object of map (-ENOENT counts as done).  Fails
 * if any OSD could not be reached: the caller keeps its intent and retries. */
int objio_remove(struct objio *io, const struct pando_storage_map *map);
/* Writes len bytes at off on every mirror.  stable: durable on the OSDs
 * before return. */
int objio_write(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		const void *buf, size_t len, bool stable);
/* Reads [off, off + len) clipped to size into buf; *n gets the bytes. */
int objio_read(struct objio *io, const struct pando_storage_map *map, uint64_t size, uint64_t off,
	       void *buf, size_t len, size_t *n);
/* Cuts every component object to size bytes: objects keep file offsets,
 * so this drops every byte of the file at or past size.  Durable. */
int objio_truncate(struct objio *io, const struct pando_storage_map *map, uint64_t size);
/* Makes every component object's data durable (NFS COMMIT); sets
 * verf_changed if an OSD restarted since this connection pool last wrote to it. */
int objio_flush(struct objio *io, const struct pando_storage_map *map);
/* RS only: every row's parity of the first size bytes recomputed from the
 * data units as they stand, durable on return; for rows a stopped
 * manager may have left half updated (the write hole).  -EIO when a data
 * unit cannot be read: that row cannot be made right now. */
int objio_rs_resync(struct objio *io, const struct pando_storage_map *map, uint64_t size);
/* The file bytes every current mirror holds, from its objects' lengths
 * (objects keep file offsets): the shortest mirror's longest component;
 * a mirror with a stale component does not count.  Asks each current
 * component once; fails if one cannot answer or no mirror is current. */
int objio_mirrored_length(struct objio *io, const struct pando_storage_map *map, uint64_t *size);

/* One component at a time (rebuild).  k names the OSD and the object. */
/* Creates the object, -EEXIST counting as done; index is the component's
 * place in the map (group * width + column), kept by the OSD. */
int objio_component_create(struct objio *io, uint64_t partition, const struct pando_component *k,
			   uint32_t index, uint32_t cap_version);
int objio_component_length(struct objio *io, uint64_t partition, const struct pando_component *k,
			   uint64_t *len);
/* Writes buf[len] at off of k's object, durable before return, in calls
 * of at most OSD_CTL_CLIENT_MAX_DATA bytes.  One copy of a mirrored
 * object: a caller that writes every copy at once (the manager's
 * journal) runs one of these per copy. */
int objio_component_write(struct objio *io, uint64_t partition, const struct pando_component *k,
			  uint64_t off, const void *buf, size_t len);
/* Copies [off, off + len) of src's object to the same offsets of dst's,
 * through buf (cap bytes), unstable; *copied stops short at src's end. */
int objio_component_copy(struct objio *io, uint64_t partition, const struct pando_component *src,
			 const struct pando_component *dst, uint64_t off, uint64_t len, void *buf,
			 size_t cap, uint64_t *copied);
/* Which of the extents (OSD_CTL_CSUM_EXTENT_BYTES) [first, first + count) of
 * src and dst differ, from the checksums their OSDs keep: differs[i] for
 * extent first + i, for *n <= min(count, OBJIO_DIFF_MAX) of them (go on
 * from first + *n).  -EOPNOTSUPP from an OSD without checksums. */
#define OBJIO_DIFF_MAX 1024u
int objio_component_diff(struct objio *io, uint64_t partition, const struct pando_component *src,
			 const struct pando_component *dst, uint64_t first, size_t count,
			 bool *differs, size_t *n);
/* Removes k's object; one already gone counts as removed. */
int objio_component_remove(struct objio *io, uint64_t partition, const struct pando_component *k);
/* Cuts (or extends) the object to len bytes and makes it all durable. */
int objio_component_settle(struct objio *io, uint64_t partition, const struct pando_component *k,
			   uint64_t len);

#endif
