/* The data pattern: the 8-byte little-endian word at every offset o with
 * o % 8 == 0 is (o / 8) * 0x9E3779B97F4A7C15 + seed (mod 2^64); bytes of
 * a partial word are that word's bytes.  tests/pando_testing/pnfsload.py
 * computes the same bytes. */
#include <endian.h>
#include <string.h>

#include "pnfsload.h"

#define GOLDEN 0x9E3779B97F4A7C15ull

static uint64_t word_at(uint64_t offset, uint64_t seed)
{
	return htole64((offset / 8) * GOLDEN + seed);
}

void pattern_fill(uint8_t *buf, uint64_t offset, uint32_t n, uint64_t seed)
{
	uint32_t i = 0;

	/* A leading partial word, then whole words, then a trailing one. */
	while (i < n && (offset + i) % 8) {
		uint64_t w = word_at(offset + i, seed);

		buf[i] = ((const uint8_t *)&w)[(offset + i) % 8];
		i++;
	}
	uint64_t v = ((offset + i) / 8) * GOLDEN + seed;

	for (; i + 8 <= n; i += 8, v += GOLDEN) {
		uint64_t w = htole64(v);

		memcpy(buf + i, &w, 8);
	}
	for (; i < n; i++) {
		uint64_t w = word_at(offset + i, seed);

		buf[i] = ((const uint8_t *)&w)[(offset + i) % 8];
	}
}

uint64_t pattern_check(const uint8_t *buf, uint64_t offset, uint32_t n, uint64_t seed)
{
	uint8_t want[4096];

	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < sizeof(want) ? n - done : (uint32_t)sizeof(want);

		pattern_fill(want, offset + done, k, seed);
		if (memcmp(want, buf + done, k)) {
			for (uint32_t i = 0; i < k; i++)
				if (want[i] != buf[done + i])
					return offset + done + i;
		}
		done += k;
	}
	return UINT64_MAX;
}

uint64_t pattern_or_zero_check(const uint8_t *buf, uint64_t offset, uint32_t n, uint64_t seed)
{
	uint8_t want[4096];

	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < sizeof(want) ? n - done : (uint32_t)sizeof(want);

		pattern_fill(want, offset + done, k, seed);
		for (uint32_t i = 0; i < k; i++)
			if (buf[done + i] && buf[done + i] != want[i])
				return offset + done + i;
		done += k;
	}
	return UINT64_MAX;
}
