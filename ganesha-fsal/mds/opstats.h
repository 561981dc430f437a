/* Per-op latency of the metadata manager: a count, a sum and a histogram
 * per op, for the fixed op set of mgr/README.md (bounded metric labels).
 * Atomic counters, no lock: an op costs two clock reads and three atomic
 * adds.  Bounds in seconds, buckets not cumulative, the last for +Inf. */
#ifndef PANDO_OPSTATS_H
#define PANDO_OPSTATS_H

#include <stdint.h>

enum pando_op {
	PANDO_OP_LOOKUP,
	PANDO_OP_GETATTR,
	PANDO_OP_SETATTR,
	PANDO_OP_CREATE,
	PANDO_OP_MKDIR,
	PANDO_OP_REMOVE,
	PANDO_OP_RENAME,
	PANDO_OP_READDIR,
	PANDO_OP_OPEN,
	PANDO_OP_LAYOUTGET,
	PANDO_OP_LAYOUTCOMMIT,
	PANDO_OP_LAYOUTRETURN,
	PANDO_OP_READ,
	PANDO_OP_WRITE,
	PANDO_OP_COMMIT,
	PANDO_OP_COUNT
};

#define PANDO_OP_BOUNDS 16

extern const char *const pando_op_names[PANDO_OP_COUNT];
extern const double pando_op_bounds[PANDO_OP_BOUNDS];

struct pando_opstats;

struct pando_opstats *pando_opstats_new(void);
void pando_opstats_free(struct pando_opstats *s);
/* Monotonic nanoseconds, for pando_opstats_done's start. */
uint64_t pando_opstats_now(void);
void pando_opstats_done(struct pando_opstats *s, enum pando_op op, uint64_t start_ns);

struct pando_op_snapshot {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t buckets[PANDO_OP_BOUNDS + 1];
};
void pando_opstats_get(struct pando_opstats *s, enum pando_op op, struct pando_op_snapshot *out);

#endif
