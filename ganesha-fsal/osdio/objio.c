/* Gateway I/O over the OSD control protocol (objio.h). */
#include "objio.h"
#include "objio_internal.h"

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

/* The pieces of [off, off + len), one per stripe unit and mirror, from
 * the layout library: in *pcs (stack when it fits, else malloc'd). */
static int get_pieces(const struct pando_storage_map *map, uint64_t off, uint64_t len,
		      struct pando_piece *stack, struct pando_piece **pcs, size_t *count)
{
	int rc;

	*pcs = stack;
	*count = 0;
	if (map->shape.raid == PANDO_RS)
		return -EOPNOTSUPP;
	if (len == 0)
		return 0;
	rc = pando_stripe_data_pieces(map, off, len, stack, PIECES_ON_STACK, count);
	if (rc == -ENOSPC) {
		*pcs = calloc(*count, sizeof(**pcs));
		if (!*pcs)
			return -ENOMEM;
		rc = pando_stripe_data_pieces(map, off, len, *pcs, *count, count);
	}
	return rc;
}

static void put_pieces(struct pando_piece *stack, struct pando_piece *pcs)
{
	if (pcs != stack)
		free(pcs);
}

int objio_component_create(struct objio *io, uint64_t partition, const struct pando_component *k,
			   uint32_t index, uint32_t cap_version)
{
	struct osd_ctl_create_item it = {
		.object = k->object_id,
		.owner_file = io->owner,
		.component = index,
		.cap_version = cap_version,
	};
	int res = 0, rc;

	rc = objio_osd_create(io, k->osd_id, partition, &it, &res);
	if (rc == -ENOENT) {
		/* The partition is new to this OSD. */
		rc = objio_osd_partition_create(io, k->osd_id, partition);
		if (!rc || rc == -EEXIST)
			rc = objio_osd_create(io, k->osd_id, partition, &it, &res);
	}
	if (!rc && res != -EEXIST)
		rc = res;
	return rc;
}

bool objio_skip_has(const struct objio *io, uint32_t osd)
{
	return objio_skipped(io, osd);
}

/* An RS file may be born degraded: a component whose OSD cannot make
 * it is recorded stale (the fault callback), as a write that missed it
 * would be, while at most m of a group are; rebuild makes it later. */
static bool born_degraded(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			  uint32_t c, int rc, uint32_t *lost)
{
	const struct pando_component *k = comp_of(map, g, c);

	if (map->shape.raid != PANDO_RS || objio_request_error(rc) || !io->fault ||
	    *lost == map->shape.parity)
		return false;
	if (objio_fault(io, g, c, k->osd_id, rc, true))
		return false;
	(*lost)++;
	return true;
}

int objio_create(struct objio *io, const struct pando_storage_map *map)
{
	uint32_t width = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++) {
		uint32_t lost = 0;

		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			int rc = objio_component_create(io, map->partition_id, k, g * width + c,
							OBJIO_CAP_VERSION_NEW);

			if (rc && !born_degraded(io, map, g, c, rc, &lost)) {
				objio_fault(io, g, c, k->osd_id, rc, false);
				return rc;
			}
		}
	}
	return 0;
}

int objio_component_remove(struct objio *io, uint64_t partition, const struct pando_component *k)
{
	int res = 0;
	int rc = objio_osd_remove(io, k->osd_id, partition, k->object_id, &res);

	if (!rc && res != -ENOENT)
		rc = res;
	return rc == -ENOENT ? 0 : rc;
}

int objio_remove(struct objio *io, const struct pando_storage_map *map)
{
	uint32_t width = pando_map_width(map);
	int first = 0;

	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			int rc = objio_component_remove(io, map->partition_id, comp_of(map, g, c));

			if (rc && !first)
				first = rc;
		}
	}
	return first;
}

int objio_write_component(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			  uint32_t c, uint64_t object_offset, const void *src, uint64_t len,
			  bool stable)
{
	const struct pando_component *k = comp_of(map, g, c);
	struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
	uint8_t v[8];
	int rc;

	if (objio_skipped(io, k->osd_id))
		return 1;
	rc = objio_osd_write(io, k->osd_id, &id, object_offset, src, len,
			     stable ? OSD_CTL_DATA_SYNC : OSD_CTL_UNSTABLE, v);
	if (rc && objio_request_error(rc))
		return rc;
	if (rc)
		return objio_fault(io, g, c, k->osd_id, rc, true) ? -EIO : 1;
	if (osd_conns_note_verf(io->conns, k->osd_id, v))
		io->verf_changed = true;
	return 0;
}

static int write_piece(struct objio *io, const struct pando_storage_map *map,
		       const struct pando_piece *pc, const uint8_t *src, bool stable)
{
	return objio_write_component(io, map, pc->group, pc->component, pc->object_offset, src,
				     pc->length, stable);
}

/* Whether some mirror took piece i's stripe unit (pieces of one unit
 * share a file offset). */
static bool unit_written(const struct pando_piece *pcs, const int *res, size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++)
		if (res[j] == 0 && pcs[j].file_offset == pcs[i].file_offset)
			return true;
	return false;
}

static bool every_unit_written(const struct pando_piece *pcs, const int *res, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!unit_written(pcs, res, n, i))
			return false;
	return true;
}

/* The pieces a full OSD refused (objio_full): recorded stale where
 * another mirror took the unit; a unit no mirror took fails the write
 * with the OSD's error, its pieces unrecorded (no copy is behind).  0,
 * that error, or -EIO when a record could not be made. */
static int settle_full(struct objio *io, const struct pando_storage_map *map,
		       const struct pando_piece *pcs, int *res, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (!objio_full(res[i]))
			continue;
		if (!unit_written(pcs, res, n, i)) {
			rc = res[i];
			continue;
		}
		if (objio_fault(io, pcs[i].group, pcs[i].component,
				comp_of(map, pcs[i].group, pcs[i].component)->osd_id, res[i], true))
			return -EIO;
		res[i] = 1;
	}
	return rc;
}

int objio_write(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		const void *buf, size_t len, bool stable)
{
	struct pando_piece stack[PIECES_ON_STACK], *pcs;
	int res_stack[PIECES_ON_STACK], *res = res_stack;
	size_t n;
	int rc;

	if (map->shape.raid == PANDO_RS)
		return objio_rs_write(io, map, off, buf, len, stable);
	rc = get_pieces(map, off, len, stack, &pcs, &n);

	if (!rc && n > PIECES_ON_STACK && !(res = calloc(n, sizeof(*res))))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		res[i] = write_piece(io, map, &pcs[i],
				     (const uint8_t *)buf + (pcs[i].file_offset - off), stable);
		if (res[i] < 0 && !objio_full(res[i]))
			rc = res[i];
	}
	if (!rc)
		rc = settle_full(io, map, pcs, res, n);
	if (!rc && !every_unit_written(pcs, res, n))
		rc = -EIO;
	if (res != res_stack)
		free(res);
	put_pieces(stack, pcs);
	return rc;
}

int objio_read_component(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			 uint32_t c, uint64_t object_offset, void *dst, uint64_t len)
{
	const struct pando_component *k = comp_of(map, g, c);
	struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
	uint8_t *out = dst;
	size_t done = 0;
	int rc = 0;

	if (objio_skipped(io, k->osd_id))
		return -EIO;
	while (done < len) {
		size_t n = 0;
		bool eof = false;

		rc = objio_osd_read(io, k->osd_id, &id, object_offset + done, out + done,
				    len - done, &n, &eof);
		if (rc) {
			if (!objio_request_error(rc))
				objio_fault(io, g, c, k->osd_id, rc, false);
			return rc;
		}
		done += n;
		if (eof || n == 0)
			break;
	}
	memset(out + done, 0, len - done);
	return 0;
}

/* The first mirror of the piece's stripe unit that answers. */
static int read_piece(struct objio *io, const struct pando_storage_map *map,
		      const struct pando_piece *pc, uint8_t *dst)
{
	uint32_t copies = map->shape.raid == PANDO_RAID1 ? map->shape.copies : 1;
	uint32_t data = map->shape.data;

	for (uint32_t copy = 0; copy < copies; copy++) {
		int rc = objio_read_component(io, map, pc->group,
					      copy * data + pc->component % data, pc->object_offset,
					      dst, pc->length);

		if (rc == 0 || objio_request_error(rc))
			return rc;
	}
	return -EIO;
}

int objio_read(struct objio *io, const struct pando_storage_map *map, uint64_t size, uint64_t off,
	       void *buf, size_t len, size_t *n)
{
	struct pando_piece stack[PIECES_ON_STACK], *pcs;
	size_t count;
	int rc;

	*n = 0;
	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	if (map->shape.raid == PANDO_RS) {
		rc = objio_rs_read(io, map, off, buf, len);
		*n = rc ? 0 : len;
		return rc;
	}
	rc = get_pieces(map, off, len, stack, &pcs, &count);
	for (size_t i = 0; !rc && i < count; i++)
		if (pcs[i].copy == 0)
			rc = read_piece(io, map, &pcs[i],
					(uint8_t *)buf + (pcs[i].file_offset - off));
	put_pieces(stack, pcs);
	if (!rc)
		*n = len;
	return rc;
}

/* Whether a group whose components answered as done[] still holds its
 * data: every column on some mirror, or for RS any k components. */
static bool group_holds(const struct pando_storage_map *map, const uint8_t *done)
{
	uint32_t width = pando_map_width(map), data = map->shape.data, n = 0;

	if (map->shape.raid == PANDO_RS) {
		for (uint32_t c = 0; c < width; c++)
			n += done[c];
		return n >= data;
	}
	for (uint32_t col = 0; col < data; col++) {
		bool any = false;

		for (uint32_t c = col; c < width; c += data)
			any |= done[c] != 0;
		if (!any)
			return false;
	}
	return true;
}

/* Runs one call on every usable component of the map; a component that
 * fails must be recorded stale, and each group must keep its data on the
 * components that succeeded.  size: a truncate's new size (a flush has
 * none). */
typedef int (*comp_call)(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
			 uint64_t size);

static int on_every_component(struct objio *io, const struct pando_storage_map *map, comp_call call,
			      uint64_t size)
{
	uint32_t width = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++) {
		uint8_t done[PANDO_MAP_MAX_WIDTH] = { 0 };

		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
			int rc;

			if (objio_skipped(io, k->osd_id))
				continue;
			rc = call(io, k->osd_id, &id, size);
			if (rc && objio_request_error(rc))
				return rc;
			if (rc && objio_fault(io, g, c, k->osd_id, rc, true))
				return -EIO;
			if (!rc)
				done[c] = 1;
		}
		if (!group_holds(map, done))
			return -EIO;
	}
	return 0;
}

int objio_truncate(struct objio *io, const struct pando_storage_map *map, uint64_t size)
{
	if (map->shape.raid == PANDO_RS)
		return objio_rs_truncate(io, map, size);
	return on_every_component(io, map, objio_osd_truncate, size);
}

/* A zero-length DATA_SYNC write: the object's data and extent checksums
 * made durable, and the OSD's write verifier, to learn whether it
 * restarted since the unstable writes this flush is for. */
static int flush_call(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
		      uint64_t size)
{
	static const uint8_t none[1];
	uint8_t v[8];
	int rc = objio_osd_write(io, osd, id, 0, none, 0, OSD_CTL_DATA_SYNC, v);

	if (!rc && osd_conns_note_verf(io->conns, osd, v))
		io->verf_changed = true;
	return rc;
}

int objio_flush(struct objio *io, const struct pando_storage_map *map)
{
	return on_every_component(io, map, flush_call, 0);
}

int objio_mirrored_length(struct objio *io, const struct pando_storage_map *map, uint64_t *size)
{
	uint32_t width = pando_map_width(map), data = map->shape.data;
	uint64_t longest[PANDO_MAP_MAX_WIDTH] = { 0 };
	bool stale[PANDO_MAP_MAX_WIDTH] = { false };

	if (map->shape.raid == PANDO_RS)
		return -EOPNOTSUPP;
	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *k = comp_of(map, g, c);
			struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
			uint64_t len = 0;
			int rc;

			if (objio_skipped(io, k->osd_id)) {
				stale[c / data] = true;
				continue;
			}
			rc = objio_osd_length(io, k->osd_id, &id, &len);
			if (rc)
				return rc;
			if (len > longest[c / data])
				longest[c / data] = len;
		}
	}
	*size = UINT64_MAX;
	for (uint32_t copy = 0; copy < width / data; copy++)
		if (!stale[copy] && longest[copy] < *size)
			*size = longest[copy];
	return *size == UINT64_MAX ? -EIO : 0;
}

int objio_component_length(struct objio *io, uint64_t partition, const struct pando_component *k,
			   uint64_t *len)
{
	struct osd_ctl_obj_id id = { partition, k->object_id };

	return objio_osd_length(io, k->osd_id, &id, len);
}

int objio_component_write(struct objio *io, uint64_t partition, const struct pando_component *k,
			  uint64_t off, const void *buf, size_t len)
{
	struct osd_ctl_obj_id id = { partition, k->object_id };
	uint8_t verf[8];
	int rc = 0;

	for (size_t done = 0; !rc && done < len;) {
		size_t n = len - done < OSD_CTL_CLIENT_MAX_DATA ? len - done
								: OSD_CTL_CLIENT_MAX_DATA;

		rc = objio_osd_write(io, k->osd_id, &id, off + done, (const uint8_t *)buf + done, n,
				     OSD_CTL_DATA_SYNC, verf);
		done += n;
	}
	return rc;
}

/* One chunk: read from src until len bytes or its end, then written to
 * dst at the same offset (a short object reads short: the rest is a hole
 * in src and stays one in dst). */
static int copy_chunk(struct objio *io, uint64_t partition, const struct pando_component *src,
		      const struct pando_component *dst, uint64_t off, uint8_t *buf, size_t len,
		      size_t *got)
{
	struct osd_ctl_obj_id from = { partition, src->object_id };
	struct osd_ctl_obj_id to = { partition, dst->object_id };
	bool eof = false;
	int rc = 0;

	*got = 0;
	while (*got < len && !eof) {
		size_t n = 0;

		rc = objio_osd_read(io, src->osd_id, &from, off + *got, buf + *got, len - *got, &n,
				    &eof);
		if (rc)
			return rc;
		if (n == 0)
			break;
		*got += n;
	}
	if (*got == 0)
		return 0;
	return objio_osd_write(io, dst->osd_id, &to, off, buf, *got, OSD_CTL_UNSTABLE, NULL);
}

int objio_component_copy(struct objio *io, uint64_t partition, const struct pando_component *src,
			 const struct pando_component *dst, uint64_t off, uint64_t len, void *buf,
			 size_t cap, uint64_t *copied)
{
	size_t chunk = cap < OSD_CTL_CLIENT_MAX_DATA ? cap : OSD_CTL_CLIENT_MAX_DATA;
	int rc = 0;

	*copied = 0;
	while (*copied < len) {
		size_t want = len - *copied < chunk ? len - *copied : chunk, got = 0;

		rc = copy_chunk(io, partition, src, dst, off + *copied, buf, want, &got);
		if (rc || got == 0)
			break;
		*copied += got;
	}
	return rc;
}

int objio_component_settle(struct objio *io, uint64_t partition, const struct pando_component *k,
			   uint64_t len)
{
	struct osd_ctl_obj_id id = { partition, k->object_id };

	return objio_osd_truncate(io, k->osd_id, &id, len);
}

static int extent_crcs(struct objio *io, uint64_t partition, const struct pando_component *k,
		       uint64_t first, size_t count, struct osd_ctl_extent_csum *out, size_t *n)
{
	struct osd_ctl_obj_id id = { partition, k->object_id };
	int rc = objio_osd_checksums(io, k->osd_id, &id, first, count, false, out, n);

	if (rc == -EFBIG) {
		/* Past the object's end: every extent reads as zeros. */
		*n = count;
		for (size_t i = 0; i < count; i++)
			out[i] = (struct osd_ctl_extent_csum){ .crc = 0, .stored = false };
		rc = 0;
	}
	return rc;
}

int objio_component_diff(struct objio *io, uint64_t partition, const struct pando_component *src,
			 const struct pando_component *dst, uint64_t first, size_t count,
			 bool *differs, size_t *n)
{
	struct osd_ctl_extent_csum *a = calloc(2 * OBJIO_DIFF_MAX, sizeof(*a)),
				   *b = a + OBJIO_DIFF_MAX;
	size_t na = 0, nb = 0;
	int rc = a ? 0 : -ENOMEM;

	if (count > OBJIO_DIFF_MAX)
		count = OBJIO_DIFF_MAX;
	if (!rc)
		rc = extent_crcs(io, partition, src, first, count, a, &na);
	if (!rc)
		rc = extent_crcs(io, partition, dst, first, na, b, &nb);
	*n = na < nb ? na : nb;
	for (size_t i = 0; !rc && i < *n; i++)
		differs[i] = a[i].crc != b[i].crc;
	free(a);
	return rc;
}
