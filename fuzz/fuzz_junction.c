/* A junction's blob (ganesha-fsal/mds/junction.c) as the manager reads it
 * back from its namespace store on every referral, set over dbus by an
 * admin.  A blob that decodes has fields without a problem and encodes to
 * the very same bytes. */
#include <string.h>

#include "fuzz.h"
#include "junction.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[PANDO_JUNCTION_BLOB_MAX];
	struct pando_junction j;
	size_t len;

	if (pando_junction_decode(data, size, &j))
		return 0;
	fuzz_check(pando_junction_problem(&j) == NULL, "a decoded junction has a problem");
	fuzz_check(pando_junction_encode(&j, buf, sizeof(buf), &len) == 0 && len == size &&
			   !memcmp(buf, data, size),
		   "a junction re-encodes to other bytes");
	return 0;
}
