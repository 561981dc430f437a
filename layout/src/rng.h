/* The deterministic generator placement draws from: SplitMix64 (Steele,
 * Lea, Flood 2014).  Placement must give the same map on every manager
 * and every release, so it cannot use rand() or anything platform-defined;
 * changing this generator changes every map a seed describes. */
#ifndef PANDO_LAYOUT_RNG_H
#define PANDO_LAYOUT_RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
	uint64_t state;
};

static inline void rng_init(struct rng *r, uint64_t seed)
{
	r->state = seed;
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0: draws below 2^64 mod n are rejected so that
 * every residue is equally likely. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t reject_below = -n % n;
	uint64_t x;

	do
		x = rng_next(r);
	while (x < reject_below);
	return x % n;
}

/* Fisher-Yates. */
static inline void rng_shuffle(struct rng *r, uint32_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_below(r, i);
		uint32_t t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

#endif
