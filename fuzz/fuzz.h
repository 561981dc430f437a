/* What every fuzz target shares: the libFuzzer entry point's prototype
 * and the check that turns a broken round trip (or any other property a
 * target asserts) into a crash, so a logic bug stops the fuzzer like a
 * memory error does. */
#ifndef PANDO_FUZZ_H
#define PANDO_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz: check failed: %s\n", what);
		abort();
	}
}

#endif
