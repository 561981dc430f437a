/* Stripe math: where each byte of a file lives under its storage map.
 *
 * Object offsets (README.md, "Stripe math"):
 *   - RAID-0 and RAID-1 use flexfiles' sparse mapping (RFC 8435 section
 *     7): the object offset IS the file offset, because stock clients
 *     write to the data servers at file offsets; a component object holds
 *     holes where other columns' and groups' units are.
 *   - RS(k,m) is systematic and keeps data where RAID-0 would: data
 *     chunk i of every row on component i at its file offset, so the k
 *     data components read as a plain striped layout.  Parity chunk i is
 *     on component k + i, packed: component row R's parity at object
 *     offset R x stripe unit.  Only the gateway and rebuild touch parity
 *     (no stock client computes it), so nothing outside Pando sees it.
 *
 * File bytes sit at offsets 0 .. PANDO_FILE_MAX - 1 (the OSD's largest
 * object offset); every function that can fail returns 0 or a negative
 * errno. */
#ifndef PANDO_STRIPE_H
#define PANDO_STRIPE_H

#include <stddef.h>
#include <stdint.h>

#include "pando/storage_map.h"

#define PANDO_FILE_MAX ((uint64_t)INT64_MAX)
#define PANDO_LENGTH_EOF UINT64_MAX /* NFSv4's all-ones length: to the end of the file */

enum pando_piece_role {
	PANDO_PIECE_DATA = 0,
	PANDO_PIECE_PARITY = 1,
};

/* One contiguous run of bytes inside one stripe unit of one component. */
struct pando_piece {
	uint32_t group;
	uint32_t component;   /* index in the group, see pando_map_component() */
	uint8_t role;         /* enum pando_piece_role */
	uint8_t copy;         /* RAID-1: which mirror; otherwise 0 */
	uint8_t chunk;        /* place in the stripe row: data 0..data-1, parity data.. */
	uint64_t file_offset; /* data: first file byte; parity: its stripe row's first */
	uint64_t object_offset;
	uint64_t length;
};

/* The data pieces of file range [offset, offset + length), in file order,
 * each stripe unit once per mirror (copy 0, 1, ...).  Fills at most cap
 * pieces and sets *count to the number the range needs: -ENOSPC when cap
 * is short.  -ERANGE when the range passes PANDO_FILE_MAX. */
int pando_stripe_data_pieces(const struct pando_storage_map *map, uint64_t offset, uint64_t length,
			     struct pando_piece *pieces, size_t cap, size_t *count);

/* RS only (none for other schemes): the parity pieces that a write of
 * [offset, offset + length) changes, row by row, parity 0..m-1.  A row
 * touched in one stripe unit changes only the same bytes of its parity
 * units; a row touched in several changes the whole parity units. */
int pando_stripe_parity_pieces(const struct pando_storage_map *map, uint64_t offset,
			       uint64_t length, struct pando_piece *pieces, size_t cap,
			       size_t *count);

/* The inverse: what lives at object_offset of component c of group g. */
struct pando_location {
	uint8_t role; /* enum pando_piece_role */
	uint8_t copy;
	uint8_t chunk;
	uint64_t file_offset; /* data: the file byte there; parity: its stripe row's first */
	uint64_t length;      /* bytes from object_offset to the end of its stripe unit */
};

/* -ENOENT: a hole (no byte of the file maps there); -EINVAL: no such
 * group or component; -ERANGE: past PANDO_FILE_MAX. */
int pando_stripe_locate(const struct pando_storage_map *map, uint32_t g, uint32_t c,
			uint64_t object_offset, struct pando_location *loc);

/* A flexfiles layout segment: a byte range and, for each mirror, the data
 * servers (components of one group) that serve it. */
struct pando_segment {
	uint64_t offset;
	uint64_t length;      /* PANDO_LENGTH_EOF: the rest of the file */
	uint64_t stripe_unit; /* ffl_stripe_unit: 0 with one data server per mirror */
	uint32_t group;
	uint32_t mirrors;
	uint32_t columns;                        /* data servers per mirror */
	uint32_t component[PANDO_MAP_MAX_WIDTH]; /* [mirror * columns + column] */
};

/* The segment with one data server per mirror that covers offset: what a
 * LAYOUTGET from a Linux client before 6.18 gets.  One column: its whole
 * visit (the whole file with one group); several: the stripe unit.
 * -EOPNOTSUPP for RS (clients cannot compute parity).  Every tested Linux
 * client misdirects mirror 0 when a mirrored file comes in several
 * segments (docs/architecture.md): hand mirrored maps out
 * this way only when the segment is the whole file (one column, one
 * group); the choice is the caller's. */
int pando_stripe_segment(const struct pando_storage_map *map, uint64_t offset,
			 struct pando_segment *seg);

/* The striped form (every column of a group, ffl_stripe_unit set when
 * there are several) covering offset: the whole file with one group,
 * otherwise its visit.  For Linux 6.18 and later.  For RS, the k data
 * components: a layout to READ with, never to write (a client writing
 * there would leave parity stale). */
int pando_stripe_striped(const struct pando_storage_map *map, uint64_t offset,
			 struct pando_segment *seg);

#endif
