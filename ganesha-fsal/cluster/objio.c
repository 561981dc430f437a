/* Gateway I/O over the OSD control protocol (objio.h). */
#include "objio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pando/stripe.h"

#define PIECES_ON_STACK 64

static const struct pando_component *comp_of(const struct pando_storage_map *map, uint32_t g,
					     uint32_t c)
{
	return pando_map_component(map, g, c);
}

static void fault(struct objio *io, uint32_t g, uint32_t c, uint32_t osd, int err)
{
	if (io->fault)
		io->fault(io->fault_arg, g, c, osd, err);
}

/* Runs fn on each piece of [off, off + len); pieces come from the layout
 * library, one per stripe unit and mirror. */
typedef int (*piece_fn)(struct objio *io, const struct pando_storage_map *map,
			const struct pando_piece *pc, void *arg);

static int for_pieces(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		      uint64_t len, piece_fn fn, void *arg)
{
	struct pando_piece stack[PIECES_ON_STACK], *pcs = stack;
	size_t count = 0;
	int rc;

	if (map->shape.raid == PANDO_RS)
		return -EOPNOTSUPP;
	if (len == 0)
		return 0;
	rc = pando_stripe_data_pieces(map, off, len, pcs, PIECES_ON_STACK, &count);
	if (rc == -ENOSPC) {
		pcs = calloc(count, sizeof(*pcs));
		if (!pcs)
			return -ENOMEM;
		rc = pando_stripe_data_pieces(map, off, len, pcs, count, &count);
	}
	for (size_t i = 0; !rc && i < count; i++)
		rc = fn(io, map, &pcs[i], arg);
	if (pcs != stack)
		free(pcs);
	return rc;
}

/* One call on one OSD through the pool, recording the result. */
#define OSD_CALL(io, osd_id, rc, call)                                          \
	do {                                                                    \
		struct osd_ctl_client *c_ = osd_pool_get((io)->pool, (osd_id), &(rc)); \
		if (c_) {                                                       \
			(rc) = (call);                                          \
			osd_pool_result((io)->pool, (osd_id), (rc));            \
		}                                                               \
	} while (0)

int objio_create(struct objio *io, const struct pando_storage_map *map)
{
	uint32_t width = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			struct osd_ctl_create_item it = {
				.object = k->object_id, .owner_file = io->owner,
				.component = g * width + c, .cap_version = 1,
			};
			int res = 0, rc;

			OSD_CALL(io, k->osd_id, rc,
				 osd_ctl_objects_create(c_, map->partition_id, &it, 1, &res));
			if (rc == -ENOENT) {
				/* The partition is new to this OSD. */
				OSD_CALL(io, k->osd_id, rc,
					 osd_ctl_partition_create(c_, map->partition_id));
				if (!rc || rc == -EEXIST)
					OSD_CALL(io, k->osd_id, rc,
						 osd_ctl_objects_create(c_, map->partition_id, &it, 1,
									&res));
			}
			if (!rc && res != -EEXIST)
				rc = res;
			if (rc) {
				fault(io, g, c, k->osd_id, rc);
				return rc;
			}
		}
	}
	return 0;
}

int objio_remove(struct objio *io, const struct pando_storage_map *map)
{
	uint32_t width = pando_map_width(map);
	int first = 0;

	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			int res = 0, rc;

			OSD_CALL(io, k->osd_id, rc,
				 osd_ctl_objects_remove(c_, map->partition_id, &k->object_id, 1,
							&res));
			if (!rc && res != -ENOENT)
				rc = res;
			if (rc == -ENOENT)
				rc = 0;
			if (rc && !first)
				first = rc;
		}
	}
	return first;
}

struct write_arg {
	const uint8_t *buf;
	uint64_t off;
	bool stable;
};

static int write_piece(struct objio *io, const struct pando_storage_map *map,
		       const struct pando_piece *pc, void *arg)
{
	struct write_arg *w = arg;
	const struct pando_component *k = comp_of(map, pc->group, pc->component);
	struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
	const uint8_t *src = w->buf + (pc->file_offset - w->off);
	uint8_t v[8];
	int rc;

	OSD_CALL(io, k->osd_id, rc,
		 osd_ctl_write(c_, &id, pc->object_offset, src, pc->length,
			       w->stable ? OSD_CTL_DATA_SYNC : OSD_CTL_UNSTABLE, v));
	if (rc) {
		fault(io, pc->group, pc->component, k->osd_id, rc);
		return -EIO;
	}
	if (osd_pool_note_verf(io->pool, k->osd_id, v))
		io->verf_changed = true;
	return 0;
}

int objio_write(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		const void *buf, size_t len, bool stable)
{
	struct write_arg w = { buf, off, stable };

	return for_pieces(io, map, off, len, write_piece, &w);
}

struct read_arg {
	uint8_t *buf;
	uint64_t off;
};

/* Reads one stripe unit's run from the mirror `copy`. */
static int read_copy(struct objio *io, const struct pando_storage_map *map,
		     const struct pando_piece *pc, uint32_t copy, uint8_t *dst)
{
	uint32_t data = map->shape.data;
	uint32_t comp = copy * data + pc->component % data;
	const struct pando_component *k = comp_of(map, pc->group, comp);
	struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
	size_t done = 0;
	int rc = 0;

	while (done < pc->length) {
		size_t n = 0;
		bool eof = false;

		OSD_CALL(io, k->osd_id, rc,
			 osd_ctl_read(c_, &id, pc->object_offset + done, dst + done,
				      pc->length - done, &n, &eof));
		if (rc) {
			fault(io, pc->group, comp, k->osd_id, rc);
			return rc;
		}
		done += n;
		if (eof || n == 0)
			break;
	}
	memset(dst + done, 0, pc->length - done);
	return 0;
}

static int read_piece(struct objio *io, const struct pando_storage_map *map,
		      const struct pando_piece *pc, void *arg)
{
	struct read_arg *r = arg;
	uint8_t *dst = r->buf + (pc->file_offset - r->off);
	uint32_t copies = map->shape.raid == PANDO_RAID1 ? map->shape.copies : 1;
	int rc = -EIO;

	if (pc->copy != 0)
		return 0;
	for (uint32_t copy = 0; copy < copies; copy++)
		if (!(rc = read_copy(io, map, pc, copy, dst)))
			return 0;
	return -EIO;
}

int objio_read(struct objio *io, const struct pando_storage_map *map, uint64_t size,
	       uint64_t off, void *buf, size_t len, size_t *n)
{
	struct read_arg r = { buf, off };
	int rc;

	*n = 0;
	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	rc = for_pieces(io, map, off, len, read_piece, &r);
	if (!rc)
		*n = len;
	return rc;
}

int objio_truncate(struct objio *io, const struct pando_storage_map *map, uint64_t size)
{
	uint32_t width = pando_map_width(map);
	struct osd_ctl_attr len = { .page = 1, .number = 1, .len = 8 };

	if (map->shape.raid == PANDO_RS)
		return -EOPNOTSUPP;
	for (int i = 0; i < 8; i++)
		len.value[i] = (uint8_t)(size >> (56 - 8 * i));
	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
			int rc;

			OSD_CALL(io, k->osd_id, rc, osd_ctl_setattr(c_, &id, &len, 1, NULL));
			if (!rc)
				OSD_CALL(io, k->osd_id, rc, osd_ctl_flush(c_, &id));
			if (rc) {
				fault(io, g, c, k->osd_id, rc);
				return -EIO;
			}
		}
	}
	return 0;
}

int objio_flush(struct objio *io, const struct pando_storage_map *map)
{
	uint32_t width = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
			int rc;

			OSD_CALL(io, k->osd_id, rc, osd_ctl_flush(c_, &id));
			if (rc) {
				fault(io, g, c, k->osd_id, rc);
				return -EIO;
			}
		}
	}
	return 0;
}
