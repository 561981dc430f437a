/* Minimal assertion helpers for the C unit tests of every folder: a failed
 * check prints where and what, and the test binary exits non-zero at the end. */
#ifndef PANDO_CHECK_H
#define PANDO_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: tests CHECK from several threads, and a lost increment of
 * check_failures would pass a failing test. */
static _Atomic int check_failures;
static _Atomic int check_count;

#define CHECK(cond) \
	do { \
		check_count++; \
		if (!(cond)) { \
			check_failures++; \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define CHECK_EQ(a, b) \
	do { \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
		check_count++; \
		if (check_a_ != check_b_) { \
			check_failures++; \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", \
				__FILE__, __LINE__, #a, check_a_, #b, check_b_); \
		} \
	} while (0)

/* Byte-for-byte comparison; on a mismatch, the first differing offset. */
#define CHECK_MEM(got, want, n) \
	do { \
		const unsigned char *check_g_ = (const void *)(got), \
				    *check_w_ = (const void *)(want); \
		size_t check_n_ = (n), check_i_ = 0; \
		check_count++; \
		while (check_i_ < check_n_ && check_g_[check_i_] == check_w_[check_i_]) \
			check_i_++; \
		if (check_i_ < check_n_) { \
			check_failures++; \
			fprintf(stderr, \
				"%s:%d: CHECK_MEM failed: %s and %s differ at byte %zu " \
				"(0x%02x, want 0x%02x)\n", \
				__FILE__, __LINE__, #got, #want, check_i_, check_g_[check_i_], \
				check_w_[check_i_]); \
		} \
	} while (0)

#define CHECK_DONE() \
	do { \
		printf("%s: %d checks, %d failed\n", __FILE__, check_count, check_failures); \
		return check_failures ? 1 : 0; \
	} while (0)

#endif
