/* What the gateway I/O files (objio.c, objio_rs.c, scrub_io.c) share:
 * one call on one OSD with its retries, the fault report, and one
 * component's bytes.  Private to this folder. */
#ifndef PANDO_OBJIO_INTERNAL_H
#define PANDO_OBJIO_INTERNAL_H

#include <errno.h>
#include <stdbool.h>

#include "objio.h"
#include "pando/stripe.h"

/* One call on one OSD through the connection pool, recording the result.  A call
 * that finds its connection broken is tried again, on each pooled
 * connection in turn and then a reconnected one: the OSD may only have
 * restarted (the library reconnects on a connection's next call), and
 * every call here is idempotent (writes at an offset, creates and removes
 * of named objects, flushes, reads). */
#define OSD_CALL(io, osd_id, rc, call)                                                  \
	do {                                                                            \
		int tries_ = osd_conns_per_osd((io)->conns) + 1;                    \
		for (int try_ = 0; try_ < tries_; try_++) {                             \
			struct osd_ctl_client *c_ = osd_conns_get((io)->conns, (osd_id), &(rc)); \
			if (!c_)                                                        \
				break;                                                  \
			(rc) = (call);                                                  \
			osd_conns_result((io)->conns, (osd_id), (rc));                    \
			if (!osd_conns_lost_connection(rc))                              \
				break;                                                  \
		}                                                                       \
	} while (0)

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
