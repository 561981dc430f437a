/* Rebuild of one RS(k,m) component (objio_rs_rebuild.h).
 *
 * The component's units are walked in the order its object holds them:
 * the group's rows, visit after visit (pando/stripe.h).  Rows are taken
 * in batches that fit the caller's buffer; for a batch, k other
 * components' units are read, each component into one region by a
 * thread of its own (each read is a call that waits on its OSD: the
 * components' calls overlap; runs that lie back to back in the object,
 * as parity units do, in one call), another component for each that
 * fails; the lost unit of every row is decoded in one call (the code
 * works byte by byte, so rows laid end to end decode as one long
 * chunk), and written out.  A batch holds
 * rows cut the same way (the same bytes of each unit), which only the
 * first and last rows of a range can differ in. */
#include "objio_rs_rebuild.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "objio_internal.h"
#include "pando/ec.h"

struct rs_job {
	struct objio *io;
	const struct pando_storage_map *map;
	const struct pando_component *dst;
	struct pando_ec *ec;
	uint32_t g, c, k, w; /* w: k + m */
	uint64_t su, size;
	bool lost[PANDO_MAP_MAX_WIDTH]; /* failed during this call */
	uint8_t *buf;
	size_t rows_cap;           /* rows a batch holds */
	struct pando_piece *units; /* rows_cap x w: each batch row's units */
	size_t n;                  /* rows in the batch */
	uint64_t a, l;             /* the batch's bytes [a, a + l) of each unit */
};

/* The first row of the group whose unit of c can reach object offset off
 * or past it: parity packs a unit per row; data keeps file offsets, so
 * no row before off's own can. */
static uint64_t first_row(const struct pando_storage_map *map, uint32_t g, uint32_t c, uint64_t off)
{
	uint64_t row_len = (uint64_t)map->shape.data * map->shape.stripe_unit;

	if (c >= map->shape.data)
		return off / map->shape.stripe_unit;
	return objio_rs_rows(map, g, off / row_len * row_len);
}

/* Where the k + m units of the group's row `row` are; *start its first
 * file byte. */
static int row_units(const struct rs_job *j, uint64_t row, struct pando_piece *u, uint64_t *start)
{
	uint64_t row_len = j->k * j->su;
	struct pando_location loc = { 0 };
	size_t n = 0;
	int rc = pando_stripe_locate(j->map, j->g, j->k, row * j->su, &loc);

	if (!rc)
		rc = pando_stripe_data_pieces(j->map, loc.file_offset, row_len, u, j->k, &n);
	if (!rc)
		rc = pando_stripe_parity_pieces(j->map, loc.file_offset, row_len, u + j->k,
						j->w - j->k, &n);
	*start = loc.file_offset;
	return rc;
}

uint64_t objio_rs_component_length(const struct pando_storage_map *map, uint32_t g, uint32_t c,
				   uint64_t size)
{
	uint64_t rows = objio_rs_rows(map, g, size), su = map->shape.stripe_unit, end;
	struct pando_location loc;

	if (c >= map->shape.data || rows == 0)
		return rows * su;
	if (pando_stripe_locate(map, g, map->shape.data, (rows - 1) * su, &loc))
		return size;
	end = loc.file_offset + (c + 1) * su;
	return end < size ? end : size;
}

/* Component i's bytes of every batch row into dst, row r at r x l; a
 * component that fails is marked lost (the decode makes up its bytes). */
static int read_column(struct rs_job *j, uint32_t i, uint8_t *dst)
{
	for (size_t r = 0; r < j->n;) {
		uint64_t at = j->units[r * j->w + i].object_offset + j->a, len = j->l;
		size_t run = 1;
		int rc;

		while (r + run < j->n &&
		       j->units[(r + run) * j->w + i].object_offset + j->a == at + len) {
			len += j->l;
			run++;
		}
		rc = objio_read_component(j->io, j->map, j->g, i, at, dst + r * j->l, len);
		if (rc && objio_request_error(rc))
			return rc;
		if (rc) {
			j->lost[i] = true;
			return 0;
		}
		r += run;
	}
	return 0;
}

/* The batch row's bytes of c that the file holds: data stops at size. */
static uint64_t kept(const struct rs_job *j, size_t r)
{
	const struct pando_piece *u = &j->units[r * j->w + j->c];
	uint64_t at = u->file_offset + j->a;

	if (j->c >= j->k)
		return j->l;
	return at >= j->size ? 0 : at + j->l <= j->size ? j->l : j->size - at;
}

static int write_dst(struct rs_job *j, uint64_t off, const uint8_t *src, uint64_t len)
{
	struct osd_ctl_obj_id id = { j->map->partition_id, j->dst->object_id };
	int rc = 0;

	for (uint64_t at = 0; !rc && at < len;) {
		uint64_t n = len - at < OSD_CTL_CLIENT_MAX_DATA ? len - at
								: OSD_CTL_CLIENT_MAX_DATA;

		rc = objio_osd_write(j->io, j->dst->osd_id, &id, off + at, src + at, n,
				     OSD_CTL_UNSTABLE, NULL);
		at += n;
	}
	return rc;
}

/* The decoded units of c to dst, back-to-back whole ones in one write. */
static int write_column(struct rs_job *j, const uint8_t *src, uint64_t *done)
{
	for (size_t r = 0; r < j->n;) {
		uint64_t at = j->units[r * j->w + j->c].object_offset + j->a, len = kept(j, r);
		size_t run = 1;
		int rc;

		while (r + run < j->n && len == run * j->l && kept(j, r + run) == j->l &&
		       j->units[(r + run) * j->w + j->c].object_offset + j->a == at + len) {
			len += j->l;
			run++;
		}
		rc = len ? write_dst(j, at, src + r * j->l, len) : 0;
		if (rc)
			return rc;
		*done += len;
		r += run;
	}
	return 0;
}

struct column_read {
	struct rs_job *j;
	uint32_t i;
	uint8_t *dst;
	int rc;
	bool thread;
	pthread_t t;
};

static void *column_thread(void *arg)
{
	struct column_read *cr = arg;

	cr->rc = read_column(cr->j, cr->i, cr->dst);
	return NULL;
}

/* Up to want components not tried yet, read at once: a thread each (the
 * caller's own where none can start).  A thread writes only its own
 * component's region and lost flag.  -EIO: none left to try. */
static int read_some(struct rs_job *j, uint8_t *const *chunk, bool *tried, uint32_t want)
{
	struct column_read cr[PANDO_MAP_MAX_WIDTH];
	uint32_t n = 0;
	int rc = 0;

	for (uint32_t i = 0; i < j->w && n < want; i++) {
		if (i == j->c || j->lost[i] || tried[i])
			continue;
		tried[i] = true;
		cr[n] = (struct column_read){ .j = j, .i = i, .dst = chunk[i] };
		cr[n].thread = pthread_create(&cr[n].t, NULL, column_thread, &cr[n]) == 0;
		n++;
	}
	for (uint32_t x = 0; x < n; x++) {
		if (cr[x].thread)
			pthread_join(cr[x].t, NULL);
		else
			column_thread(&cr[x]);
		rc = rc ? rc : cr[x].rc;
	}
	return rc ? rc : n ? 0 : -EIO;
}

/* k components of the batch read: have[i] for those. */
static int read_k(struct rs_job *j, uint8_t *const *chunk, bool *have)
{
	bool tried[PANDO_MAP_MAX_WIDTH] = { false };
	uint32_t got = 0;
	int rc = 0;

	while (!rc && got < j->k) {
		rc = read_some(j, chunk, tried, j->k - got);
		got = 0;
		for (uint32_t i = 0; i < j->w; i++) {
			have[i] = tried[i] && !j->lost[i];
			got += have[i];
		}
	}
	return rc;
}

/* Read, decode and write the batch: c and the components not read count
 * as erased (m in all). */
static int run_batch(struct rs_job *j, uint64_t *done)
{
	uint8_t *chunk[PANDO_MAP_MAX_WIDTH];
	unsigned erased[PANDO_MAP_MAX_WIDTH], ne = 0;
	bool have[PANDO_MAP_MAX_WIDTH] = { false };
	int rc;

	for (uint32_t i = 0; i < j->w; i++)
		chunk[i] = j->buf + i * j->rows_cap * j->su;
	rc = read_k(j, chunk, have);
	for (uint32_t i = 0; !rc && i < j->w; i++)
		if (!have[i])
			erased[ne++] = i;
	if (!rc)
		rc = pando_ec_decode(j->ec, chunk, erased, ne, j->n * j->l);
	if (!rc)
		rc = write_column(j, chunk[j->c], done);
	j->n = 0;
	return rc;
}

/* Adds the group's row `row` to the batch (running the batch first when
 * it is full or cut otherwise); *end once the row's unit of c starts at
 * or past hi, or the row at or past size. */
static int add_row(struct rs_job *j, uint64_t row, uint64_t lo, uint64_t hi, bool *end,
		   uint64_t *done)
{
	struct pando_piece u[PANDO_MAP_MAX_WIDTH];
	uint64_t start = 0, uo, a, b;
	int rc = row_units(j, row, u, &start);

	if (rc == -ERANGE || (!rc && start >= j->size)) {
		*end = true;
		return 0;
	}
	uo = u[j->c].object_offset;
	*end = !rc && uo >= hi;
	if (rc || *end || uo + j->su <= lo)
		return rc;
	a = lo > uo ? lo - uo : 0;
	b = hi < uo + j->su ? hi - uo : j->su;
	if (j->n && (j->n == j->rows_cap || a != j->a || b - a != j->l))
		rc = run_batch(j, done);
	j->a = a;
	j->l = b - a;
	memcpy(&j->units[j->n++ * j->w], u, j->w * sizeof(*u));
	return rc;
}

int objio_rs_rebuild_component(struct objio *io, const struct pando_storage_map *map, uint32_t g,
			       uint32_t c, const struct pando_component *dst, uint64_t size,
			       uint64_t off, uint64_t len, void *buf, size_t cap, uint64_t *done)
{
	struct rs_job j = { .io = io,
			    .map = map,
			    .dst = dst,
			    .g = g,
			    .c = c,
			    .buf = buf,
			    .k = map->shape.data,
			    .w = pando_map_width(map),
			    .su = map->shape.stripe_unit,
			    .size = size };
	bool end = false;
	int rc = 0;

	*done = 0;
	if (map->shape.raid != PANDO_RS || g >= map->groups || c >= j.w || !j.su ||
	    off > PANDO_FILE_MAX || len > PANDO_FILE_MAX - off)
		return -EINVAL;
	j.rows_cap = cap / (j.w * j.su);
	if (!j.rows_cap)
		return -EINVAL;
	j.units = calloc(j.rows_cap * j.w, sizeof(*j.units));
	rc = j.units ? pando_ec_new(j.k, j.w - j.k, PANDO_EC_AUTO, &j.ec) : -ENOMEM;
	for (uint32_t i = 0; !rc && i < j.w; i++)
		j.lost[i] = objio_skipped(io, pando_map_component(map, g, i)->osd_id);
	for (uint64_t row = first_row(map, g, c, off); !rc && !end; row++)
		rc = add_row(&j, row, off, off + len, &end, done);
	if (!rc && j.n)
		rc = run_batch(&j, done);
	pando_ec_free(j.ec);
	free(j.units);
	return rc;
}
