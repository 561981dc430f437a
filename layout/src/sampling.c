#include "sampling.h"

#include <errno.h>
#include <stdbool.h>

static uint64_t share_of(uint64_t left, uint64_t weight, uint64_t weight_sum)
{
	return (uint64_t)((unsigned __int128)left * weight / weight_sum);
}

/* One water-filling pass: fixes at its cap every open item whose share of
 * what is left passes that cap.  Returns how many it fixed. */
static size_t cap_pass(const uint64_t *weight, const uint32_t *cap, size_t n, uint64_t left,
		       uint64_t *share, uint8_t *open)
{
	uint64_t weight_sum = 0;
	size_t capped = 0;

	for (size_t i = 0; i < n; i++)
		if (open[i])
			weight_sum += weight[i];
	for (size_t i = 0; i < n; i++) {
		if (!open[i] ||
		    share_of(left, weight[i], weight_sum) <= (uint64_t)cap[i] * SHARE_ONE)
			continue;
		share[i] = (uint64_t)cap[i] * SHARE_ONE;
		open[i] = 0;
		capped++;
	}
	return capped;
}

/* Final shares of the open items; the units lost to rounding down go one
 * at a time to open items with room under their caps. */
static void open_shares(const uint64_t *weight, const uint32_t *cap, size_t n, uint64_t left,
			uint64_t *share, const uint8_t *open)
{
	uint64_t weight_sum = 0, given = 0;

	for (size_t i = 0; i < n; i++)
		if (open[i])
			weight_sum += weight[i];
	for (size_t i = 0; i < n; i++) {
		if (!open[i])
			continue;
		share[i] = share_of(left, weight[i], weight_sum);
		given += share[i];
	}
	while (given < left) {
		for (size_t i = 0; i < n && given < left; i++) {
			if (open[i] && share[i] < (uint64_t)cap[i] * SHARE_ONE) {
				share[i]++;
				given++;
			}
		}
	}
}

int shares_proportional(const uint64_t *weight, const uint32_t *cap, size_t n, uint32_t total,
			uint64_t *share, uint8_t *open)
{
	uint64_t room = 0, left = (uint64_t)total * SHARE_ONE;

	for (size_t i = 0; i < n; i++) {
		share[i] = 0;
		open[i] = weight[i] && cap[i];
		if (open[i])
			room += cap[i];
	}
	if (room < total)
		return -ENOSPC;
	/* capped items always take less than their proportional share, so
	 * what they fix never exceeds the total */
	while (cap_pass(weight, cap, n, left, share, open)) {
		uint64_t fixed = 0;

		for (size_t i = 0; i < n; i++)
			if (!open[i])
				fixed += share[i];
		left = (uint64_t)total * SHARE_ONE - fixed;
	}
	open_shares(weight, cap, n, left, share, open);
	return 0;
}

/* Points start + j * SHARE_ONE (j >= 0) lying below x. */
static uint64_t points_below(uint64_t x, uint64_t start)
{
	return x > start ? ((x - start - 1) >> 32) + 1 : 0;
}

void shares_round(const uint64_t *share, const uint32_t *order, size_t n, struct rng *r,
		  uint32_t *count)
{
	uint64_t start = rng_below(r, SHARE_ONE), end = 0;

	for (size_t k = 0; k < n; k++) {
		uint32_t i = order[k];
		uint64_t before = points_below(end, start);

		end += share[i];
		count[i] = (uint32_t)(points_below(end, start) - before);
	}
}
