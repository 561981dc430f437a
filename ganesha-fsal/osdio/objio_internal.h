/* What the gateway I/O files (objio.c, objio_rs.c, objio_rs_rebuild.c,
 * scrub_io.c) share: the calls on one OSD with their retries, the fault
 * report, and one component's bytes.  Private to this folder. */
#ifndef PANDO_OBJIO_INTERNAL_H
#define PANDO_OBJIO_INTERNAL_H

#include <errno.h>
#include <stdbool.h>

#include "objio.h"
#include "pando/stripe.h"

/* The control calls made on one OSD (objio_osd.c): each through io's
 * connection pool, its result recorded, made again over a lost
 * connection (osd_conns_call: every one of them is idempotent).  0 or
 * -errno, as the osd_ctl_ call of the same name; -ENOENT, -EHOSTDOWN or
 * what connect said when no connection could be had. */
int objio_osd_create(struct objio *io, uint32_t osd, uint64_t partition,
		     struct osd_ctl_create_item *it, int *res);
int objio_osd_partition_create(struct objio *io, uint32_t osd, uint64_t partition);
int objio_osd_remove(struct objio *io, uint32_t osd, uint64_t partition, uint64_t object, int *res);
int objio_osd_read(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id, uint64_t off,
		   void *buf, size_t len, size_t *n, bool *eof);
int objio_osd_write(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id, uint64_t off,
		    const void *buf, size_t len, enum osd_ctl_stable stable, uint8_t verf[8]);
/* The object's logical length (page 1). */
int objio_osd_length(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
		     uint64_t *len);
/* Sets the object's logical length, then flushes it. */
int objio_osd_truncate(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
		       uint64_t len);
int objio_osd_checksums(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
			uint64_t first, size_t count, bool verify, struct osd_ctl_extent_csum *out,
			size_t *n);

static inline bool objio_skipped(const struct objio *io, uint32_t osd)
{
	for (size_t i = 0; i < io->nskip; i++)
		if (io->skip[i] == osd)
			return true;
	return false;
}

/* Errors about the request itself (an offset past what the OSD can
 * store, a full OSD): every component would answer the same, so they
 * fail the request and say nothing about the component.  Writes are the
 * exception for a full OSD (objio_full). */
static inline bool objio_request_error(int rc)
{
	return rc == -EFBIG || rc == -EINVAL || rc == -ENOSPC || rc == -EDQUOT || rc == -ERANGE;
}

/* A write refused for want of room.  OSDs fill one at a time, so it is
 * the state of one component: a write another copy took stands, the
 * full one recorded stale as any copy that missed a write (the rebuild
 * catches it up once there is room); only a write no copy can take fails
 * with it. */
static inline bool objio_full(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT;
}

static inline int objio_fault(struct objio *io, uint32_t g, uint32_t c, uint32_t osd, int err,
			      bool write)
{
	return io->fault ? io->fault(io->fault_arg, io->owner, g, c, osd, err, write) : err;
}

/* Writes len bytes at object_offset of component (g, c).  0: written;
 * 1: the component is skipped, or failed and was recorded stale; a
 * request error as it is; -EIO: failed and not recorded. */
int objio_write_component(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			  uint32_t c, uint64_t object_offset, const void *src, uint64_t len,
			  bool stable);

/* Reads len bytes at object_offset of component (g, c), zeros past the
 * object's end or in its holes.  A failure other than a request error is
 * reported to the fault callback; a skipped component fails with -EIO. */
int objio_read_component(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			 uint32_t c, uint64_t object_offset, void *dst, uint64_t len);

/* RS: the rows of group g that hold some byte below size (parity objects
 * are packed, so this is their length in stripe units). */
uint64_t objio_rs_rows(const struct pando_storage_map *map, uint32_t g, uint64_t size);

/* The RS side of objio.h's calls (objio_rs.c). */
int objio_rs_write(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		   const void *buf, size_t len, bool stable);
int objio_rs_read(struct objio *io, const struct pando_storage_map *map, uint64_t off, void *buf,
		  size_t len);
int objio_rs_truncate(struct objio *io, const struct pando_storage_map *map, uint64_t size);

#endif
