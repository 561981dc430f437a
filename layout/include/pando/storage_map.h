/* A file's storage map: its RAID scheme, its stripe geometry, and the
 * component objects (OSD id, object id) of each of its groups.
 *
 * Geometry (see README.md for pictures):
 *   - a group has `width` components: RAID-0 `data` columns; RAID-1
 *     `copies` x `data` (mirror-major: component = copy * data + column);
 *     RS(k,m) k data columns then m parity chunks (components k..k+m-1);
 *   - file data is cut into stripe units; `data` consecutive units form a
 *     stripe row; `visit_rows` rows fill one group's "visit" (about 1 GB)
 *     before the file moves on to the next group, wrapping round after the
 *     last (two-level striping);
 *   - `spares` lists OSDs this file leaves free: the first place to put a
 *     rebuilt component (the distributed spare).
 *
 * Every function that can fail returns 0 or a negative errno. */
#ifndef PANDO_STORAGE_MAP_H
#define PANDO_STORAGE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pando_raid {
	PANDO_RAID0 = 0, /* striping only */
	PANDO_RAID1 = 1, /* 2 or 3 copies of every stripe unit */
	PANDO_RS = 2,    /* Reed-Solomon RS(k,m) over GF(2^8) */
};

#define PANDO_MAP_MAX_WIDTH 64u /* components in one group */
/* Object ids with this bit are the metadata manager's journal segments
 * and its group's snapshots (ganesha-fsal/mds/journal.h,
 * group_snapshot.h): no file's map names one, and the namespace store's
 * allocator never reaches it. */
#define PANDO_JOURNAL_OBJECT_BIT (1ull << 63)
#define PANDO_MAP_MAX_GROUPS 1024u
#define PANDO_MAP_MAX_SPARES 16u
#define PANDO_MAP_MIN_STRIPE_UNIT 512u
#define PANDO_MAP_MAX_STRIPE_UNIT (1u << 30)

struct pando_map_shape {
	uint8_t raid;         /* enum pando_raid */
	uint8_t copies;       /* RAID-1: 2 or 3; otherwise 1 */
	uint8_t data;         /* data columns of a group (RS: k) */
	uint8_t parity;       /* RS: m; otherwise 0 */
	uint32_t stripe_unit; /* bytes; a multiple of 512 */
	uint32_t visit_rows;  /* stripe rows per visit of a group */
};

struct pando_component {
	uint32_t osd_id;
	uint64_t object_id; /* never 0 (the OSD reserves it) */
};

struct pando_storage_map {
	struct pando_map_shape shape;
	uint32_t groups;
	uint32_t spare_count;
	uint64_t seed;                /* what placement drew this map from */
	uint64_t partition_id;        /* OSD partition of every component */
	struct pando_component *comp; /* groups x width, group-major */
	uint32_t *spares;             /* spare_count OSD ids */
};

/* Components per group for a shape (0 when the shape is malformed). */
uint32_t pando_shape_width(const struct pando_map_shape *shape);

/* Checks a shape: scheme, copies, k/m, stripe unit, visit, width limit. */
int pando_shape_validate(const struct pando_map_shape *shape);

/* File bytes held by one visit of a group: visit_rows x data x stripe_unit. */
uint64_t pando_shape_visit_bytes(const struct pando_map_shape *shape);

/* Allocates a map with zeroed components (comp and spares in one block). */
int pando_map_new(const struct pando_map_shape *shape, uint32_t groups, uint32_t spare_count,
		  struct pando_storage_map **out);
void pando_map_free(struct pando_storage_map *map);
int pando_map_copy(const struct pando_storage_map *map, struct pando_storage_map **out);

static inline uint32_t pando_map_width(const struct pando_storage_map *map)
{
	return pando_shape_width(&map->shape);
}

/* Component c of group g; the caller keeps g < groups and c < width. */
static inline struct pando_component *pando_map_component(const struct pando_storage_map *map,
							  uint32_t g, uint32_t c)
{
	return &map->comp[(size_t)g * pando_map_width(map) + c];
}

/* Whole-map check: shape, ids non-zero, no OSD twice in a group, spares
 * distinct and outside every group. */
int pando_map_validate(const struct pando_storage_map *map);

/* Whether the file can still be read with the components lost[] says
 * (groups x width, like comp) gone: RAID-1 needs a copy of every column
 * of every group, RS(k,m) k of every group's k + m, RAID-0 everything. */
bool pando_map_survives(const struct pando_storage_map *map, const bool *lost);

/* Puts a rebuilt component in place (new OSD, new object) and drops that
 * OSD from the spare list if it was there. */
int pando_map_replace_component(struct pando_storage_map *map, uint32_t g, uint32_t c,
				uint32_t osd_id, uint64_t object_id);

/* Serialised form (versioned; the byte layout is in README.md).
 * encode: writes at most cap bytes and sets *len to the full size, so a
 * call with cap 0 sizes the buffer; -ENOSPC when cap is short.
 * decode: -EBADMSG for anything malformed or truncated, -ENOTSUP for an
 * unknown version, -ENOMEM. */
#define PANDO_MAP_FORMAT_VERSION 1u
int pando_map_encode(const struct pando_storage_map *map, uint8_t *buf, size_t cap, size_t *len);
int pando_map_decode(const uint8_t *buf, size_t len, struct pando_storage_map **out);

#endif
