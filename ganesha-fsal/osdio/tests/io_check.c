/* What the gateway I/O tests check with (io_check.h). */
#include "io_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objio_internal.h"
#include "osd_fixture.h"
#include "pando/stripe.h"

int io_faults_record(void *arg, uint64_t owner, uint32_t g, uint32_t c, uint32_t osd, int err,
		     bool write)
{
	struct io_faults *fs = arg;
	struct objio *io = fs->io;

	(void)owner;
	if (fs->n < IO_CHECK_MAX_FAULTS)
		fs->f[fs->n] = (struct io_fault){ g, c, osd, err, write };
	fs->n++;
	if (fs->answer)
		return fs->answer;
	if (!objio_skipped(io, osd) && io->nskip < OBJIO_MAX_SKIP)
		io->skip[io->nskip++] = osd;
	return 0;
}

void io_faults_clear(struct io_faults *fs)
{
	fs->n = 0;
	fs->answer = 0;
	fs->io->nskip = 0;
}

static size_t kept(const struct io_faults *fs)
{
	return fs->n < IO_CHECK_MAX_FAULTS ? fs->n : IO_CHECK_MAX_FAULTS;
}

size_t io_faults_on(const struct io_faults *fs, uint32_t osd, bool write)
{
	size_t n = 0;

	for (size_t i = 0; i < kept(fs); i++)
		n += fs->f[i].osd == osd && fs->f[i].write == write;
	return n;
}

bool io_faults_match(const struct io_faults *fs, const struct pando_storage_map *map)
{
	for (size_t i = 0; i < kept(fs); i++) {
		const struct io_fault *f = &fs->f[i];

		if (f->group >= map->groups || f->component >= pando_map_width(map) ||
		    pando_map_component(map, f->group, f->component)->osd_id != f->osd)
			return false;
	}
	return true;
}

int io_model_write(struct objio *io, struct io_model *m, uint64_t off, uint64_t len, unsigned seed,
		   bool stable)
{
	uint8_t *buf;
	int rc;

	if (off > m->cap || len > m->cap - off)
		return -ENOSPC;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	osd_fixture_fill(buf, len, seed);
	rc = objio_write(io, m->map, off, buf, len, stable);
	if (!rc) {
		memcpy(m->want + off, buf, len);
		if (off + len > m->size)
			m->size = off + len;
	}
	free(buf);
	return rc;
}

int io_model_truncate(struct objio *io, struct io_model *m, uint64_t size)
{
	int rc = size > m->cap ? -ENOSPC : objio_truncate(io, m->map, size);

	if (!rc) {
		memset(m->want + size, 0, m->cap - size);
		m->size = size;
	}
	return rc;
}

int io_model_reads_back(struct objio *io, const struct io_model *m, uint64_t off, uint64_t chunk)
{
	uint8_t *got = malloc(chunk ? chunk : 1);
	int rc = got ? 0 : -ENOMEM;

	for (uint64_t at = off; !rc && at < m->size; at += chunk) {
		uint64_t want = m->size - at < chunk ? m->size - at : chunk;
		size_t n = 0;

		memset(got, 0xee, chunk);
		rc = objio_read(io, m->map, m->size, at, got, chunk, &n);
		if (!rc && (n != want || memcmp(got, m->want + at, n)))
			rc = -EBADMSG;
	}
	free(got);
	return rc;
}

static int copy_piece_holds(struct objio *io, const struct io_model *m,
			    const struct pando_piece *pc)
{
	uint8_t *got = malloc(pc->length);
	int rc = got ? 0 : -ENOMEM;

	if (!rc)
		rc = objio_read_component(io, m->map, pc->group, pc->component, pc->object_offset,
					  got, pc->length);
	if (!rc && memcmp(got, m->want + pc->file_offset, pc->length))
		rc = -EBADMSG;
	free(got);
	return rc;
}

int io_model_copy_holds(struct objio *io, const struct io_model *m, uint32_t copy)
{
	struct pando_piece *pcs = NULL;
	size_t n = 0;
	int rc = m->size ? pando_stripe_data_pieces(m->map, 0, m->size, NULL, 0, &n) : 0;

	if (rc != -ENOSPC)
		return rc;
	pcs = calloc(n, sizeof(*pcs));
	rc = pcs ? pando_stripe_data_pieces(m->map, 0, m->size, pcs, n, &n) : -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++)
		if (pcs[i].copy == copy)
			rc = copy_piece_holds(io, m, &pcs[i]);
	free(pcs);
	return rc;
}
