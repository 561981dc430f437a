/* What the gateway I/O tests check with: a fault callback that records a
 * failed component as the metadata manager does, a model of the bytes a
 * file should hold, and one mirror's bytes read on their own (a read
 * through objio takes whichever mirror answers, so it cannot show that
 * every mirror was written). */
#ifndef PANDO_IO_CHECK_H
#define PANDO_IO_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "objio.h"

#define IO_CHECK_MAX_FAULTS 64

struct io_fault {
	uint32_t group, component, osd;
	int err;
	bool write;
};

struct io_faults {
	struct objio *io; /* whose skip list a recorded component's OSD joins */
	int answer;       /* 0: record it; else what the callback answers,
				 * recording nothing (the record could not be made) */
	size_t n;         /* every fault reported; the first IO_CHECK_MAX_FAULTS kept */
	struct io_fault f[IO_CHECK_MAX_FAULTS];
};

/* An objio_fault_fn over a struct io_faults. */
int io_faults_record(void *arg, uint64_t owner, uint32_t g, uint32_t c, uint32_t osd, int err,
		     bool write);
/* Forgets the faults and empties io's skip list: every OSD current again. */
void io_faults_clear(struct io_faults *fs);
/* How many kept faults name osd, for a write or for a read. */
size_t io_faults_on(const struct io_faults *fs, uint32_t osd, bool write);
/* Whether every kept fault names the component the map puts on its OSD. */
bool io_faults_match(const struct io_faults *fs, const struct pando_storage_map *map);

/* The bytes a file should hold: what was written and not cut, zeros in
 * the holes. */
struct io_model {
	const struct pando_storage_map *map;
	uint64_t size;
	uint8_t *want; /* cap bytes */
	size_t cap;
};

/* Writes len pseudo-random bytes from seed at off through objio; the
 * model takes them only when the write succeeded.  objio_write's answer,
 * or -ENOSPC past the model's cap. */
int io_model_write(struct objio *io, struct io_model *m, uint64_t off, uint64_t len, unsigned seed,
		   bool stable);
/* Truncates through objio; the model follows when it succeeded. */
int io_model_truncate(struct objio *io, struct io_model *m, uint64_t size);
/* The whole file read through objio in reads of `chunk` bytes from off
 * on: 0 when every byte is the model's, -EBADMSG when one is not, or the
 * read's error. */
int io_model_reads_back(struct objio *io, const struct io_model *m, uint64_t off, uint64_t chunk);
/* Mirror `copy` alone holds the model's bytes (RAID-1): each of its
 * stripe units read from its own component.  0, -EBADMSG or the error. */
int io_model_copy_holds(struct objio *io, const struct io_model *m, uint32_t copy);

#endif
