/* Rebuild of one RS(k,m) component by decoding (objio_rs_rebuild.c): the
 * rebuild side of objio_rs.c, for the manager's rebuild (mds/rebuild.c) and
 * its tests. */
#ifndef PANDO_OBJIO_RS_REBUILD_H
#define PANDO_OBJIO_RS_REBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "objio.h"
#include "pando/storage_map.h"

/* The object length component c of group g has in a file of size bytes:
 * data components keep file offsets (up to the last byte of their last
 * unit below size), parity ones pack a unit per row of the group. */
uint64_t objio_rs_component_length(const struct pando_storage_map *map, uint32_t g, uint32_t c,
				   uint64_t size);

/* Writes to dst's object (unstable: settle it after) the bytes that
 * component c of group g holds in [off, off + len) of its object, each
 * decoded from the group's other components of the same stripe row.
 * Component c itself is never read (dst may be its own object, caught up
 * in place); components in io->skip, or that fail to answer, count as
 * lost: more than m lost with c fails with -EIO.  Components are read
 * from threads of their own, so io->fault must take calls from several
 * threads at once (the manager's does).  Rows starting at or
 * past size are left out, and so are data bytes past it.  buf holds
 * cap >= (k + m) x stripe unit bytes (-EINVAL otherwise): each batch of
 * rows it holds is read, decoded and written at once.  *done gets the
 * bytes written to dst. */
int objio_rs_rebuild_component(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			       uint32_t c, const struct pando_component *dst, uint64_t size,
			       uint64_t off, uint64_t len, void *buf, size_t cap, uint64_t *done);

#endif
