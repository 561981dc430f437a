/* A manager group member's held record as the active's trim floor reads
 * it from etcd (ganesha-fsal/mds/held.c): the value at
 * groups/<group>/held/<name>. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "held.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seq = 0, seq2 = 0;
	int64_t at = 0, at2 = 0;
	char again[128];
	int n;

	if (pando_held_parse((const char *)data, size, &seq, &at) != 0)
		return 0;
	fuzz_check(seq > 0, "a record with no position accepted");
	n = snprintf(again, sizeof(again), "{\"at\":%lld,\"seq\":%llu}", (long long)at,
		     (unsigned long long)seq);
	fuzz_check(n > 0 && (size_t)n < sizeof(again), "a record's fields do not fit again");
	fuzz_check(pando_held_parse(again, (size_t)n, &seq2, &at2) == 0 && seq2 == seq && at2 == at,
		   "an accepted record written again reads otherwise");
	return 0;
}
