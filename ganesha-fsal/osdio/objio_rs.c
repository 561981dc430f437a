/* RS(k,m) gateway I/O (objio.h).
 *
 * The code is systematic and data sits where RAID-0 puts it
 * (pando/stripe.h), so reads of a healthy file go straight to the data
 * components.  A write works a stripe row at a time: a whole row is
 * encoded from the new bytes alone; a partial row is read first (decoded
 * if a unit is lost), the new bytes laid over it, and re-encoded.  Only
 * the bytes of each unit the write touches are read, encoded and written
 * when it stays inside one stripe unit; otherwise whole units.
 *
 * A row stays readable while at most m of its group's components are
 * lost (skipped as stale, or failed now and recorded stale); a write that
 * would leave more fails with -EIO.  Callers serialise writes to a file
 * and its degraded reads against them (a row update is read, encode,
 * write). */
#include "objio_internal.h"

#include <stdlib.h>
#include <string.h>

#include "pando/ec.h"

/* One stripe row: its k data units then its m parity units, whole. */
struct rs_row {
	struct pando_piece unit[PANDO_MAP_MAX_WIDTH];
	uint32_t k, m;
	uint64_t su;
	uint64_t start; /* the row's first file byte */
};

static int row_at(const struct pando_storage_map *map, uint64_t start, struct rs_row *r)
{
	size_t n = 0;
	int rc;

	r->k = map->shape.data;
	r->m = map->shape.parity;
	r->su = map->shape.stripe_unit;
	r->start = start;
	rc = pando_stripe_data_pieces(map, start, r->k * r->su, r->unit, r->k, &n);
	if (!rc)
		rc = pando_stripe_parity_pieces(map, start, r->k * r->su, r->unit + r->k, r->m, &n);
	return rc;
}

/* Bytes [a, a + len) of unit i of the row into dst. */
static int read_unit(struct objio *io, const struct pando_storage_map *map, const struct rs_row *r,
		     uint32_t i, uint64_t a, uint64_t len, uint8_t *dst)
{
	const struct pando_piece *u = &r->unit[i];

	return objio_read_component(io, map, u->group, u->component, u->object_offset + a, dst,
				    len);
}

/* Bytes [a, a + len) of every data unit of the row into chunk[0..k-1],
 * decoding lost ones from as few parity units as it takes: a parity unit
 * left unread counts as erased (decoded too, and thrown away). */
static int read_row(struct objio *io, const struct pando_storage_map *map,
		    const struct pando_ec *ec, const struct rs_row *r, uint64_t a, uint64_t len,
		    uint8_t *const *chunk)
{
	unsigned erased[PANDO_MAP_MAX_WIDTH], ne = 0, good = 0;

	for (uint32_t i = 0; i < r->k + r->m; i++) {
		int rc;

		if (good == r->k) {
			erased[ne++] = i;
			continue;
		}
		rc = read_unit(io, map, r, i, a, len, chunk[i]);
		if (rc && objio_request_error(rc))
			return rc;
		if (rc)
			erased[ne++] = i;
		else
			good++;
		if (ne > r->m)
			return -EIO;
	}
	/* Only parity left unread: the data units are all there. */
	return ne && erased[0] < r->k ? pando_ec_decode(ec, chunk, erased, ne, len) : 0;
}

/* The bytes of each unit that [lo, hi) (inside one row) touches: those
 * under it when it stays in one unit, else whole units. */
static void unit_span(const struct rs_row *r, uint64_t lo, uint64_t hi, uint64_t *a, uint64_t *len)
{
	bool one_unit = lo / r->su == (hi - 1) / r->su;

	*a = one_unit ? lo % r->su : 0;
	*len = one_unit ? hi - lo : r->su;
}

static void chunks_in(uint8_t *scratch, uint64_t len, uint32_t n, uint8_t **chunk)
{
	for (uint32_t i = 0; i < n; i++)
		chunk[i] = scratch + i * len;
}

/* Whether a data unit of the row is stale or on an OSD the connection pool last
 * found unreachable: then reading the data units first is wasted. */
static bool row_degraded(struct objio *io, const struct pando_storage_map *map,
			 const struct rs_row *r)
{
	for (uint32_t j = 0; j < r->k; j++) {
		uint32_t osd =
			pando_map_component(map, r->unit[j].group, r->unit[j].component)->osd_id;

		if (objio_skipped(io, osd) || !osd_conns_reachable(io->conns, osd))
			return true;
	}
	return false;
}

/* Reads [lo, hi) of one row into out: straight from the data units, or,
 * when one of them cannot answer, decoded from any k units. */
static int read_row_range(struct objio *io, const struct pando_storage_map *map,
			  const struct pando_ec *ec, const struct rs_row *r, uint64_t lo,
			  uint64_t hi, uint8_t *out, uint8_t *scratch)
{
	struct pando_piece pcs[PANDO_MAP_MAX_WIDTH];
	uint8_t *chunk[PANDO_MAP_MAX_WIDTH];
	uint64_t a, len;
	size_t n = 0;
	bool lost = row_degraded(io, map, r);
	int rc = pando_stripe_data_pieces(map, lo, hi - lo, pcs, r->k, &n);

	for (size_t i = 0; !rc && !lost && i < n; i++) {
		rc = objio_read_component(io, map, pcs[i].group, pcs[i].component,
					  pcs[i].object_offset, out + (pcs[i].file_offset - lo),
					  pcs[i].length);
		if (rc && !objio_request_error(rc)) {
			lost = true;
			rc = 0;
		}
	}
	if (rc || !lost)
		return rc;
	unit_span(r, lo, hi, &a, &len);
	chunks_in(scratch, len, r->k + r->m, chunk);
	rc = read_row(io, map, ec, r, a, len, chunk);
	for (size_t i = 0; !rc && i < n; i++)
		memcpy(out + (pcs[i].file_offset - lo),
		       chunk[pcs[i].chunk] + (pcs[i].file_offset % r->su - a), pcs[i].length);
	return rc;
}

static int new_codec(const struct pando_storage_map *map, struct pando_ec **ec)
{
	return pando_ec_new(map->shape.data, map->shape.parity, PANDO_EC_AUTO, ec);
}

/* Scratch for k + m units of one row. */
static uint8_t *row_scratch(const struct pando_storage_map *map)
{
	return malloc((size_t)(map->shape.data + map->shape.parity) * map->shape.stripe_unit);
}

/* Calls fn on each row that [off, off + len) touches, with the part of
 * the range inside it. */
typedef int (*row_fn)(struct objio *io, const struct pando_storage_map *map,
		      const struct pando_ec *ec, const struct rs_row *r, uint64_t lo, uint64_t hi,
		      uint8_t *bytes, uint8_t *scratch, void *arg);

static int each_row(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		    uint64_t len, uint8_t *bytes, row_fn fn, void *arg)
{
	uint64_t row_len = (uint64_t)map->shape.data * map->shape.stripe_unit, end = off + len;
	struct pando_ec *ec = NULL;
	uint8_t *scratch = row_scratch(map);
	struct rs_row r;
	int rc = scratch ? new_codec(map, &ec) : -ENOMEM;

	if (!rc && (off > PANDO_FILE_MAX || len > PANDO_FILE_MAX - off))
		rc = -ERANGE;
	for (uint64_t lo = off; !rc && lo < end;) {
		uint64_t start = lo / row_len * row_len;
		uint64_t hi = start + row_len < end ? start + row_len : end;

		rc = row_at(map, start, &r);
		if (!rc)
			rc = fn(io, map, ec, &r, lo, hi, bytes ? bytes + (lo - off) : NULL, scratch,
				arg);
		lo = hi;
	}
	pando_ec_free(ec);
	free(scratch);
	return rc;
}

static int read_fn(struct objio *io, const struct pando_storage_map *map, const struct pando_ec *ec,
		   const struct rs_row *r, uint64_t lo, uint64_t hi, uint8_t *bytes,
		   uint8_t *scratch, void *arg)
{
	(void)arg;
	return read_row_range(io, map, ec, r, lo, hi, bytes, scratch);
}

int objio_rs_read(struct objio *io, const struct pando_storage_map *map, uint64_t off, void *buf,
		  size_t len)
{
	return len ? each_row(io, map, off, len, buf, read_fn, NULL) : 0;
}

/* Components of the row's group that are skipped as stale or that this
 * write found lost: more than m and the row cannot be read back. */
static uint32_t lost_in_group(struct objio *io, const struct pando_storage_map *map,
			      const struct rs_row *r, const bool *failed)
{
	uint32_t lost = 0;

	for (uint32_t c = 0; c < r->k + r->m; c++)
		lost += failed[c] ||
			objio_skipped(io, pando_map_component(map, r->unit[0].group, c)->osd_id);
	return lost;
}

/* The units a full OSD refused (objio_full; full[c] its error): recorded
 * stale while the row keeps at most m lost, as units that missed the
 * write; beyond that the write fails with the OSD's error. */
static int settle_full(struct objio *io, const struct pando_storage_map *map,
		       const struct rs_row *r, const int *full, const bool *failed)
{
	int rc = 0;

	for (uint32_t c = 0; c < r->k + r->m; c++)
		rc = full[c] ? full[c] : rc;
	if (!rc)
		return 0;
	if (lost_in_group(io, map, r, failed) > r->m)
		return rc;
	for (uint32_t c = 0; c < r->k + r->m; c++) {
		if (full[c] && objio_fault(io, r->unit[0].group, c,
					   pando_map_component(map, r->unit[0].group, c)->osd_id,
					   full[c], true))
			return -EIO;
	}
	return 0;
}

/* One unit's write: its outcome in failed[] and full[], and 0 or an error
 * that fails the row. */
static int write_unit(struct objio *io, const struct pando_storage_map *map, uint32_t g, uint32_t c,
		      uint64_t object_offset, const uint8_t *src, uint64_t len, bool stable,
		      bool *failed, int *full)
{
	int rc = objio_write_component(io, map, g, c, object_offset, src, len, stable);

	failed[c] = rc == 1 || objio_full(rc);
	full[c] = objio_full(rc) ? rc : 0;
	return rc == 1 || objio_full(rc) ? 0 : rc;
}

/* Writes the new data bytes of [lo, hi) and the parity bytes [a, a +
 * len) of every parity unit. */
static int write_units(struct objio *io, const struct pando_storage_map *map,
		       const struct rs_row *r, uint64_t lo, uint64_t hi, const uint8_t *src,
		       uint64_t a, uint64_t len, uint8_t *const *chunk, bool stable)
{
	struct pando_piece pcs[PANDO_MAP_MAX_WIDTH];
	bool failed[PANDO_MAP_MAX_WIDTH] = { false };
	int full[PANDO_MAP_MAX_WIDTH] = { 0 };
	size_t n = 0;
	int rc = pando_stripe_data_pieces(map, lo, hi - lo, pcs, r->k, &n);

	for (size_t i = 0; !rc && i < n; i++)
		rc = write_unit(io, map, pcs[i].group, pcs[i].component, pcs[i].object_offset,
				src + (pcs[i].file_offset - lo), pcs[i].length, stable, failed,
				full);
	for (uint32_t i = r->k; !rc && i < r->k + r->m; i++) {
		const struct pando_piece *u = &r->unit[i];

		rc = write_unit(io, map, u->group, u->component, u->object_offset + a, chunk[i],
				len, stable, failed, full);
	}
	if (!rc)
		rc = settle_full(io, map, r, full, failed);
	if (!rc && lost_in_group(io, map, r, failed) > r->m)
		rc = -EIO;
	return rc;
}

/* New bytes [lo, hi) of one row: the old row read unless the write
 * covers it, the new bytes laid over, parity encoded, both written. */
static int write_fn(struct objio *io, const struct pando_storage_map *map,
		    const struct pando_ec *ec, const struct rs_row *r, uint64_t lo, uint64_t hi,
		    uint8_t *bytes, uint8_t *scratch, void *arg)
{
	bool stable = *(const bool *)arg;
	bool whole = lo == r->start && hi == r->start + r->k * r->su;
	uint8_t *chunk[PANDO_MAP_MAX_WIDTH];
	uint64_t a, len;
	int rc = 0;

	unit_span(r, lo, hi, &a, &len);
	chunks_in(scratch, len, r->k + r->m, chunk);
	if (!whole)
		rc = read_row(io, map, ec, r, a, len, chunk);
	for (uint64_t at = lo; !rc && at < hi;) {
		uint64_t unit_end = (at / r->su + 1) * r->su, end = unit_end < hi ? unit_end : hi;
		uint32_t j = (uint32_t)((at - r->start) / r->su);

		memcpy(chunk[j] + (at % r->su - a), bytes + (at - lo), end - at);
		at = end;
	}
	if (!rc)
		rc = pando_ec_encode(ec, (const uint8_t *const *)chunk, chunk + r->k, len);
	if (!rc)
		rc = write_units(io, map, r, lo, hi, bytes, a, len, chunk, stable);
	return rc;
}

int objio_rs_write(struct objio *io, const struct pando_storage_map *map, uint64_t off,
		   const void *buf, size_t len, bool stable)
{
	if (!len)
		return 0;
	return each_row(io, map, off, len, (uint8_t *)buf, write_fn, &stable);
}

uint64_t objio_rs_rows(const struct pando_storage_map *map, uint32_t g, uint64_t size)
{
	uint64_t row_len = (uint64_t)map->shape.data * map->shape.stripe_unit;
	uint64_t rows = size / row_len + (size % row_len != 0);
	uint64_t cycle = (uint64_t)map->shape.visit_rows * map->groups;
	uint64_t rem = rows % cycle, before = (uint64_t)g * map->shape.visit_rows;
	uint64_t in_rem = rem > before ? rem - before : 0;

	if (in_rem > map->shape.visit_rows)
		in_rem = map->shape.visit_rows;
	return rows / cycle * map->shape.visit_rows + in_rem;
}

/* Cuts every component: data to size (objects keep file offsets), parity
 * to its rows below size; at most m lost per group. */
static int cut_components(struct objio *io, const struct pando_storage_map *map, uint64_t size)
{
	uint32_t k = map->shape.data, width = pando_map_width(map);

	for (uint32_t g = 0; g < map->groups; g++) {
		uint32_t lost = 0;

		for (uint32_t c = 0; c < width; c++) {
			const struct pando_component *comp = pando_map_component(map, g, c);
			uint64_t len = c < k ? size
					     : objio_rs_rows(map, g, size) * map->shape.stripe_unit;
			int rc = objio_skipped(io, comp->osd_id)
					 ? 1
					 : objio_component_settle(io, map->partition_id, comp, len);

			if (rc < 0 && objio_request_error(rc))
				return rc;
			if (rc < 0 && objio_fault(io, g, c, comp->osd_id, rc, true))
				return -EIO;
			lost += rc != 0;
		}
		if (lost > map->shape.parity)
			return -EIO;
	}
	return 0;
}

/* The row's whole parity units encoded from chunk[0..k-1] (its data
 * units as they stand) and written; a parity unit skipped or recorded
 * stale is left to rebuild. */
static int rewrite_parity(struct objio *io, const struct pando_storage_map *map,
			  const struct pando_ec *ec, const struct rs_row *r, uint8_t *const *chunk,
			  bool stable)
{
	int rc = pando_ec_encode(ec, (const uint8_t *const *)chunk, chunk + r->k, r->su);

	for (uint32_t i = r->k; !rc && i < r->k + r->m; i++) {
		const struct pando_piece *u = &r->unit[i];

		rc = objio_write_component(io, map, u->group, u->component, u->object_offset,
					   chunk[i], r->su, stable);
		rc = rc == 1 ? 0 : rc;
	}
	return rc;
}

/* The row holding size, with every byte at or past size zero, re-encoded:
 * what its parity must say once the data past size is gone. */
static int reencode_last_row(struct objio *io, const struct pando_storage_map *map,
			     const struct pando_ec *ec, const struct rs_row *r, uint64_t lo,
			     uint64_t hi, uint8_t *bytes, uint8_t *scratch, void *arg)
{
	uint64_t size = *(const uint64_t *)arg;
	uint8_t *chunk[PANDO_MAP_MAX_WIDTH];
	int rc;

	(void)lo, (void)hi, (void)bytes;
	chunks_in(scratch, r->su, r->k + r->m, chunk);
	rc = read_row(io, map, ec, r, 0, r->su, chunk);
	for (uint32_t j = 0; !rc && j < r->k; j++) {
		uint64_t unit = r->start + j * r->su;

		if (unit + r->su > size)
			memset(chunk[j] + (unit < size ? size - unit : 0), 0,
			       unit < size ? r->su - (size - unit) : r->su);
	}
	return rc ? rc : rewrite_parity(io, map, ec, r, chunk, true);
}

int objio_rs_truncate(struct objio *io, const struct pando_storage_map *map, uint64_t size)
{
	uint64_t row_len = (uint64_t)map->shape.data * map->shape.stripe_unit;
	int rc = 0;

	/* Data first: the bytes past size must read as zeros if the file
	 * grows again.  Until the parity follows, the last row's parity is
	 * stale, as in the middle of any row update (the caller's intent
	 * covers both). */
	rc = cut_components(io, map, size);
	if (!rc && size % row_len)
		rc = each_row(io, map, size, 1, NULL, reencode_last_row, &size);
	return rc;
}

/* One row's parity from its data units as they are; no decoding: a
 * unit that cannot be read fails the row. */
static int resync_row(struct objio *io, const struct pando_storage_map *map,
		      const struct pando_ec *ec, const struct rs_row *r, uint64_t lo, uint64_t hi,
		      uint8_t *bytes, uint8_t *scratch, void *arg)
{
	uint8_t *chunk[PANDO_MAP_MAX_WIDTH];
	int rc = 0;

	(void)lo, (void)hi, (void)bytes, (void)arg;
	chunks_in(scratch, r->su, r->k + r->m, chunk);
	for (uint32_t j = 0; !rc && j < r->k; j++)
		rc = read_unit(io, map, r, j, 0, r->su, chunk[j]);
	return rc ? rc : rewrite_parity(io, map, ec, r, chunk, false);
}

int objio_rs_resync(struct objio *io, const struct pando_storage_map *map, uint64_t size)
{
	uint64_t row_len = (uint64_t)map->shape.data * map->shape.stripe_unit;
	int rc;

	if (size == 0)
		return 0;
	rc = each_row(io, map, 0, (size + row_len - 1) / row_len * row_len, NULL, resync_row, NULL);
	return rc ? rc : objio_flush(io, map);
}
