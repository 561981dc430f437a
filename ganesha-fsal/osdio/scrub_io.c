/* Scrub of a file's components through their extent checksums (scrub_io.h). */
#include "scrub_io.h"
#include "objio_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SCAN_MAX OSD_CTL_CLIENT_MAX_CSUMS
#define VERIFY_MAX OSD_CTL_CLIENT_MAX_CSUMS_VERIFY
#define MAX_COPIES 3

_Static_assert(OBJIO_SCRUB_EXTENT == OSD_CTL_CSUM_EXTENT_BYTES, "osd_ctl_client.h changed");

/* One column of one group at a time: its mirrors and what they said. */
struct scrub {
	struct objio *io;
	const struct pando_storage_map *map;
	uint64_t size;
	uint64_t nextents;
	struct objio_scrub_result *res;
	uint32_t g, col, copies;
	const struct pando_component *k[MAX_COPIES];
	bool down[MAX_COPIES];  /* no answer for the current chunk */
	bool vdown[MAX_COPIES]; /* ... or for the current verify run */
	struct osd_ctl_extent_csum scan[MAX_COPIES][SCAN_MAX];
	struct osd_ctl_extent_csum ver[MAX_COPIES][VERIFY_MAX];
	uint8_t buf[OBJIO_SCRUB_EXTENT];
};

/* ---- calls to the OSDs ---------------------------------------------------- */

/* Extents [first, first + n) of mirror m into out, over as many calls as
 * the OSD's answers take. */
static int checksums(struct scrub *s, uint32_t m, uint64_t first, size_t n, bool verify,
		     struct osd_ctl_extent_csum *out)
{
	struct osd_ctl_obj_id id = { s->map->partition_id, s->k[m]->object_id };
	size_t max = verify ? VERIFY_MAX : SCAN_MAX, done = 0;

	while (done < n) {
		size_t got = 0;
		int rc = objio_osd_checksums(s->io, s->k[m]->osd_id, &id, first + done,
					     n - done < max ? n - done : max, verify, out + done,
					     &got);

		if (rc)
			return rc;
		if (got == 0)
			return -EPROTO;
		done += got;
	}
	return 0;
}

/* ---- what was found -------------------------------------------------------- */

static void report(struct scrub *s, uint32_t m, uint64_t e, uint64_t count,
		   enum objio_scrub_what what, enum objio_scrub_outcome outcome, int err, int src)
{
	struct objio_scrub_result *r = s->res;
	struct objio_scrub_problem p = {
		.group = s->g,
		.column = s->col,
		.copy = m,
		.osd_id = s->k[m]->osd_id,
		.object_id = s->k[m]->object_id,
		.extent = e,
		.count = count,
		.source_osd = src >= 0 ? s->k[src]->osd_id : 0,
		.what = what,
		.outcome = outcome,
		.err = err,
	};

	if (what == OBJIO_SCRUB_UNREACHABLE) {
		r->unreachable += count;
	} else {
		r->mismatches++;
		if (outcome == OBJIO_SCRUB_REPAIRED)
			r->repaired++;
		else if (outcome == OBJIO_SCRUB_UNREPAIRABLE)
			r->unrepairable++;
		else
			r->repair_failed++;
	}
	if (r->report)
		r->report(r->report_arg, &p);
}

/* ---- repair ----------------------------------------------------------------- */

/* [off, off + len) of mirror src into buf; zeros past its end. */
static int read_extent(struct scrub *s, int src, uint64_t off, size_t len)
{
	struct osd_ctl_obj_id id = { s->map->partition_id, s->k[src]->object_id };
	size_t done = 0;

	while (done < len) {
		size_t got = 0;
		bool eof = false;
		int rc = objio_osd_read(s->io, s->k[src]->osd_id, &id, off + done, s->buf + done,
					len - done, &got, &eof);

		if (rc)
			return rc;
		done += got;
		if (eof || got == 0)
			break;
	}
	memset(s->buf + done, 0, len - done);
	return 0;
}

/* Extent e's file bytes (below size) from mirror src over mirror dst,
 * durably, then verified on dst against src's CRC. */
static int repair(struct scrub *s, int src, uint32_t dst, uint64_t e, uint32_t want_crc)
{
	uint64_t off = e * OBJIO_SCRUB_EXTENT;
	size_t len = s->size - off < OBJIO_SCRUB_EXTENT ? (size_t)(s->size - off)
							: OBJIO_SCRUB_EXTENT;
	struct osd_ctl_obj_id id = { s->map->partition_id, s->k[dst]->object_id };
	struct osd_ctl_extent_csum after;
	int rc = read_extent(s, src, off, len);

	if (rc)
		return rc;
	s->res->bytes_read += len;
	rc = objio_osd_write(s->io, s->k[dst]->osd_id, &id, off, s->buf, len, OSD_CTL_DATA_SYNC,
			     NULL);
	if (!rc)
		rc = checksums(s, dst, e, 1, true, &after);
	if (!rc && (after.verify != OSD_CTL_CSUM_OK || after.crc != want_crc))
		rc = -EIO;
	return rc;
}

/* ---- one extent --------------------------------------------------------------- */

static bool good(const struct scrub *s, uint32_t m, size_t i)
{
	return !s->vdown[m] && s->ver[m][i].verify == OSD_CTL_CSUM_OK;
}

static bool bad(const struct scrub *s, uint32_t m, size_t i)
{
	return !s->vdown[m] && s->ver[m][i].verify != OSD_CTL_CSUM_OK;
}

/* The mirror to copy extent i from: the first that verifies and is not
 * stale; -1 if none.  *ref gets the one others are compared with: the
 * source, or failing one the first that verifies. */
static int source_of(const struct scrub *s, size_t i, int *ref)
{
	int src = -1;

	*ref = -1;
	for (uint32_t m = 0; m < s->copies; m++) {
		if (!good(s, m, i))
			continue;
		if (*ref < 0)
			*ref = (int)m;
		if (src < 0 && !objio_skipped(s->io, s->k[m]->osd_id))
			src = (int)m;
	}
	if (src >= 0)
		*ref = src;
	return src;
}

static bool diverged(const struct scrub *s, uint32_t m, size_t i, int ref)
{
	return ref >= 0 && good(s, m, i) && s->ver[m][i].crc != s->ver[ref][i].crc;
}

static enum objio_scrub_what what_of(const struct scrub *s, uint32_t m, size_t i)
{
	if (s->ver[m][i].verify == OSD_CTL_CSUM_UNREADABLE)
		return OBJIO_SCRUB_UNREADABLE;
	return s->ver[m][i].verify == OSD_CTL_CSUM_MISMATCH ? OBJIO_SCRUB_MISMATCH
							    : OBJIO_SCRUB_DIVERGED;
}

/* Extent e (index i of the verify run): every problem repaired from the
 * source, or all left as they are when the source cannot be trusted. */
static void settle_extent(struct scrub *s, size_t i, uint64_t e)
{
	int ref, src = source_of(s, i, &ref);
	bool problems = false, trusted = src >= 0 && s->copies > 1;

	for (uint32_t m = 0; m < s->copies; m++) {
		if (bad(s, m, i) || diverged(s, m, i, ref))
			problems = true;
		/* two current mirrors that disagree: neither is known right */
		if (diverged(s, m, i, ref) && !objio_skipped(s->io, s->k[m]->osd_id))
			trusted = false;
	}
	if (!problems)
		return;
	for (uint32_t m = 0; m < s->copies; m++) {
		int rc;

		if (!bad(s, m, i) && !diverged(s, m, i, ref))
			continue;
		if (!trusted) {
			report(s, m, e, 1, what_of(s, m, i), OBJIO_SCRUB_UNREPAIRABLE, 0, -1);
			continue;
		}
		rc = repair(s, src, m, e, s->ver[src][i].crc);
		report(s, m, e, 1, what_of(s, m, i),
		       rc ? OBJIO_SCRUB_REPAIR_FAILED : OBJIO_SCRUB_REPAIRED, rc, src);
	}
}

/* ---- runs and chunks ---------------------------------------------------------- */

/* Verifies extents [first, first + n) (n <= VERIFY_MAX) on every mirror
 * that answered the scan, then settles each extent. */
static int verify_run(struct scrub *s, uint64_t first, size_t n)
{
	uint64_t off = first * OBJIO_SCRUB_EXTENT, bytes = 0;
	uint64_t per_mirror = s->size - off < (uint64_t)n * OBJIO_SCRUB_EXTENT
				      ? s->size - off
				      : (uint64_t)n * OBJIO_SCRUB_EXTENT;

	for (uint32_t m = 0; m < s->copies; m++) {
		int rc;

		s->vdown[m] = s->down[m];
		if (s->vdown[m])
			continue;
		rc = checksums(s, m, first, n, true, s->ver[m]);
		if (rc) {
			s->vdown[m] = true;
			report(s, m, first, n, OBJIO_SCRUB_UNREACHABLE, OBJIO_SCRUB_NOT_CHECKED, rc,
			       -1);
			continue;
		}
		bytes += per_mirror;
	}
	s->res->bytes_read += bytes;
	for (size_t i = 0; i < n; i++)
		settle_extent(s, i, first + i);
	return s->res->pace ? s->res->pace(s->res->pace_arg, bytes) : 0;
}

/* Whether any mirror that answered has written extent i of the chunk:
 * extents no mirror wrote are holes everywhere, with nothing to read. */
static bool written(const struct scrub *s, size_t i)
{
	for (uint32_t m = 0; m < s->copies; m++)
		if (!s->down[m] && s->scan[m][i].stored)
			return true;
	return false;
}

/* Extents [first, first + n) (n <= SCAN_MAX): the stored checksums of
 * every mirror, then verify runs over the written extents. */
static int scrub_chunk(struct scrub *s, uint64_t first, size_t n)
{
	bool any = false;
	int rc = 0;

	for (uint32_t m = 0; m < s->copies; m++) {
		int err = checksums(s, m, first, n, false, s->scan[m]);

		s->down[m] = err != 0;
		if (err)
			report(s, m, first, n, OBJIO_SCRUB_UNREACHABLE, OBJIO_SCRUB_NOT_CHECKED,
			       err, -1);
		any |= !err;
	}
	if (!any)
		return 0;
	s->res->extents_checked += n;
	for (size_t i = 0; !rc && i < n;) {
		size_t run = 0;

		while (i + run < n && run < VERIFY_MAX && written(s, i + run))
			run++;
		if (run)
			rc = verify_run(s, first + i, run);
		i += run ? run : 1;
	}
	return rc;
}

static int scrub_column(struct scrub *s, uint32_t g, uint32_t col)
{
	uint32_t data = s->map->shape.data;
	int rc = 0;

	s->g = g;
	s->col = col;
	for (uint32_t m = 0; m < s->copies; m++)
		s->k[m] = pando_map_component(s->map, g, m * data + col);
	for (uint64_t e = 0; !rc && e < s->nextents; e += SCAN_MAX)
		rc = scrub_chunk(s, e,
				 s->nextents - e < SCAN_MAX ? (size_t)(s->nextents - e) : SCAN_MAX);
	return rc;
}

int objio_scrub(struct objio *io, const struct pando_storage_map *map, uint64_t size,
		struct objio_scrub_result *res)
{
	struct scrub *s;
	int rc = 0;

	res->extents_checked = res->bytes_read = res->mismatches = 0;
	res->repaired = res->unrepairable = res->repair_failed = res->unreachable = 0;
	if (map->shape.raid == PANDO_RS)
		return -EOPNOTSUPP;
	if (map->shape.raid == PANDO_RAID1 && map->shape.copies > MAX_COPIES)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* Field by field: the struct is too big for a compound literal on a
	 * Ganesha worker's stack. */
	s->io = io;
	s->map = map;
	s->size = size;
	s->res = res;
	s->nextents = (size + OBJIO_SCRUB_EXTENT - 1) / OBJIO_SCRUB_EXTENT;
	s->copies = map->shape.raid == PANDO_RAID1 ? map->shape.copies : 1;
	for (uint32_t g = 0; !rc && g < map->groups; g++)
		for (uint32_t col = 0; !rc && col < map->shape.data; col++)
			rc = scrub_column(s, g, col);
	free(s);
	return rc;
}
