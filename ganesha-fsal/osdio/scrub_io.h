/* Scrub of one file's components: the extent checksums every OSD keeps
 * (64 KiB extents, CRC32C; osd-target/README.md "Extent checksums") read
 * back and verified against the disk on every mirror, compared across
 * mirrors, and a bad extent rewritten from a good mirror.
 *
 * RAID-1: for each column of each group, every mirror is asked for its
 * checksums; the extents some mirror has written are then verified on
 * every mirror (the OSD reads them back).  On a mirror, an extent is
 *   - MISMATCH: its bytes do not match its own stored CRC (rot, a bad
 *     write behind the OSD's back);
 *   - UNREADABLE: the OSD could not read it;
 *   - DIVERGED: it verifies, but its CRC differs from the source's (a
 *     write this mirror missed).
 * The source of an extent is the first mirror, in copy order, whose
 * extent verifies and whose OSD is not in io->skip (components recorded
 * stale are never copied from).  Every problem of the extent is repaired
 * from it (osd_ctl_read, then a DATA_SYNC osd_ctl_write of the extent's
 * bytes below the file size, then verified again) unless there is no
 * source or a mirror not in io->skip diverges from it (two current
 * mirrors disagree: nothing tells which is right): then each problem of
 * the extent is unrepairable and nothing is changed.
 * RAID-0 (one copy): verify only; every problem is unrepairable.
 * RS: -EOPNOTSUPP.
 *
 * A mirror whose OSD does not answer, or which lacks its object, is not
 * checked for the extents asked (UNREACHABLE, counted apart): rebuild,
 * not scrub, deals with lost components.
 *
 * The caller keeps writers away from the file for the duration (or
 * accepts that an extent written meanwhile may be reported). */
#ifndef PANDO_SCRUB_IO_H
#define PANDO_SCRUB_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "objio.h"

#define OBJIO_SCRUB_EXTENT (64u << 10)

enum objio_scrub_what {
	OBJIO_SCRUB_MISMATCH = 1,
	OBJIO_SCRUB_UNREADABLE = 2,
	OBJIO_SCRUB_DIVERGED = 3,
	OBJIO_SCRUB_UNREACHABLE = 4, /* extents [extent, extent + count) not checked */
};

enum objio_scrub_outcome {
	OBJIO_SCRUB_REPAIRED = 1,      /* rewritten from the source; verifies now */
	OBJIO_SCRUB_UNREPAIRABLE = 2,  /* no source, current mirrors disagree, RAID-0 */
	OBJIO_SCRUB_REPAIR_FAILED = 3, /* the copy failed (err) or did not verify */
	OBJIO_SCRUB_NOT_CHECKED = 4,   /* UNREACHABLE */
};

struct objio_scrub_problem {
	uint32_t group;
	uint32_t column;
	uint32_t copy; /* the mirror: component copy * data + column */
	uint32_t osd_id;
	uint64_t object_id;
	uint64_t extent;     /* file bytes [extent * 64 KiB, + 64 KiB) */
	uint64_t count;      /* extents: 1 but for UNREACHABLE */
	uint32_t source_osd; /* REPAIRED: the mirror copied from; else 0 */
	enum objio_scrub_what what;
	enum objio_scrub_outcome outcome;
	int err; /* -errno: UNREACHABLE, REPAIR_FAILED; else 0 */
};

/* Told about each problem once, after its repair was tried. */
typedef void (*objio_scrub_report_fn)(void *arg, const struct objio_scrub_problem *p);
/* Told the bytes the OSDs read for each batch of verifies (at most 4 MiB
 * per mirror), after it: the caller may sleep to keep a bandwidth, or
 * return -errno to stop the scrub (objio_scrub returns it). */
typedef int (*objio_scrub_pace_fn)(void *arg, uint64_t bytes);

struct objio_scrub_result {
	/* in, may be NULL */
	objio_scrub_report_fn report;
	void *report_arg;
	objio_scrub_pace_fn pace;
	void *pace_arg;
	/* out, zeroed by objio_scrub; mismatches = repaired + unrepairable
	 * + repair_failed */
	uint64_t extents_checked; /* (column, extent) pairs compared */
	uint64_t bytes_read;      /* by the OSDs' verifies and the repairs */
	uint64_t mismatches;      /* (mirror, extent) problems found */
	uint64_t repaired;
	uint64_t unrepairable;
	uint64_t repair_failed;
	uint64_t unreachable; /* (mirror, extent) pairs not checked */
};

/* Scrubs the file's bytes [0, size) on every component of map.  0 when
 * the scrub ran, whatever it found (see res); -EOPNOTSUPP for RS, -ENOMEM,
 * or what res->pace returned. */
int objio_scrub(struct objio *io, const struct pando_storage_map *map, uint64_t size,
		struct objio_scrub_result *res);

#endif
