/* The journal's records as a standby reads them off the OSDs
 * (ganesha-fsal/mds/journal_record.c): every record decoded from the
 * input, one after the other, until the first that is not one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "journal_record.h"

/* A decoded record is canonical: encoding its fields gives its bytes. */
static void check_round_trip(const uint8_t *data, const struct journal_record *r, size_t used)
{
	uint8_t *again = malloc(used);
	size_t n = 0;

	fuzz_check(again != NULL, "out of memory");
	fuzz_check(journal_record_encode(r->seq, r->term, r->payload, r->len, again, used, &n) == 0,
		   "a decoded record does not encode");
	fuzz_check(n == used && !memcmp(again, data, used), "a record re-encodes differently");
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct journal_record r;
	size_t off = 0, used = 0;
	int rc;

	while ((rc = journal_record_decode(data + off, size - off, &r, &used)) == 0) {
		fuzz_check(used >= JOURNAL_RECORD_HEADER && used <= size - off && used % 8 == 0,
			   "a record's size out of its buffer");
		fuzz_check(r.seq != 0 && r.len <= JOURNAL_RECORD_MAX,
			   "a record's fields unchecked");
		check_round_trip(data + off, &r, used);
		off += used;
	}
	fuzz_check(rc == -ENODATA || rc == -EAGAIN || rc == -EINVAL, "an unknown decode error");
	return 0;
}
