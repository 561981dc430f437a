/* Per-op latency counters (opstats.h). */
#include "opstats.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "mds_clock.h"

const char *const pando_op_names[PANDO_OP_COUNT] = {
	"lookup",       "getattr",      "setattr", "create", "mkdir",
	"remove",       "rename",       "readdir", "open",   "layoutget",
	"layoutcommit", "layoutreturn", "read",    "write",  "commit",
};

const double pando_op_bounds[PANDO_OP_BOUNDS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10,
};

/* The bounds in nanoseconds, so an op needs no floating point. */
static const uint64_t bound_ns[PANDO_OP_BOUNDS] = {
	100000,     250000,        500000,        1000000,        2500000,   5000000,
	10000000,   25000000,      50000000,      100000000,      250000000, 500000000,
	1000000000, 2500000000ull, 5000000000ull, 10000000000ull,
};

struct op_counters {
	atomic_uint_fast64_t count;
	atomic_uint_fast64_t sum_ns;
	atomic_uint_fast64_t buckets[PANDO_OP_BOUNDS + 1];
};

struct pando_opstats {
	struct op_counters op[PANDO_OP_COUNT];
};

struct pando_opstats *pando_opstats_new(void)
{
	return calloc(1, sizeof(struct pando_opstats));
}

void pando_opstats_free(struct pando_opstats *s)
{
	free(s);
}

uint64_t pando_opstats_now(void)
{
	return mds_mono_ns();
}

void pando_opstats_done(struct pando_opstats *s, enum pando_op op, uint64_t start_ns)
{
	uint64_t d = pando_opstats_now() - start_ns;
	struct op_counters *c;
	int b = 0;

	if (!s || op >= PANDO_OP_COUNT)
		return;
	c = &s->op[op];
	while (b < PANDO_OP_BOUNDS && d > bound_ns[b])
		b++;
	atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->sum_ns, d, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->buckets[b], 1, memory_order_relaxed);
}

void pando_opstats_get(struct pando_opstats *s, enum pando_op op, struct pando_op_snapshot *out)
{
	struct op_counters *c = &s->op[op];

	out->count = atomic_load_explicit(&c->count, memory_order_relaxed);
	out->sum_ns = atomic_load_explicit(&c->sum_ns, memory_order_relaxed);
	for (int b = 0; b <= PANDO_OP_BOUNDS; b++)
		out->buckets[b] = atomic_load_explicit(&c->buckets[b], memory_order_relaxed);
}
