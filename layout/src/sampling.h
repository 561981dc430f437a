/* Unequal-probability sampling without replacement, in integers.
 *
 * Placement wants each OSD in a file with probability exactly proportional
 * to its weight (capped at one component a file), and each failure domain
 * holding a number of a file's components whose mean is proportional to
 * its weight (capped by its size).  Two steps give that exactly:
 *   1. shares_proportional(): each item's expected count, in units of
 *      2^-32, proportional to weight, capped, summing to the total
 *      (water-filling: capped items are fixed and the rest share again);
 *   2. shares_round(): systematic sampling (Madow 1949): items laid end to
 *      end in a random order, one random start, then points one whole unit
 *      apart: an item gets floor or ceil of its share, with the share as
 *      its mean, and the counts add up to the total. */
#ifndef PANDO_LAYOUT_SAMPLING_H
#define PANDO_LAYOUT_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define SHARE_ONE (1ull << 32)

/* share[i] = min(cap[i], lambda * weight[i]) in 2^-32 units, summing to
 * total units exactly.  -ENOSPC when the caps of weighted items add up to
 * less than total.  open: n bytes of scratch. */
int shares_proportional(const uint64_t *weight, const uint32_t *cap, size_t n, uint32_t total,
			uint64_t *share, uint8_t *open);

/* Counts from shares, visiting items in `order` (a permutation of 0..n-1)
 * from a start drawn from r. */
void shares_round(const uint64_t *share, const uint32_t *order, size_t n, struct rng *r,
		  uint32_t *count);

#endif
