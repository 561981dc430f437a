/* The engine's one clock for timeouts, intervals and rates: monotonic,
 * so that a step of the wall clock moves none of them. */
#ifndef PANDO_MDS_CLOCK_H
#define PANDO_MDS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mds_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int64_t mds_mono_ms(void)
{
	return (int64_t)(mds_mono_ns() / 1000000);
}

static inline int64_t mds_mono_s(void)
{
	return (int64_t)(mds_mono_ns() / 1000000000);
}

#endif
