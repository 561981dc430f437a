/* A directory's storage policy in its stored form (layout/src/policy.c),
 * read back from the namespace store and set over dbus: sixteen bytes of
 * fields, then a pool's name in version 2.  A policy that decodes must be
 * valid and encode to the very same bytes. */
#include <string.h>

#include "fuzz.h"
#include "pando/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[PANDO_POLICY_MAX_LEN];
	struct pando_policy p;
	size_t len;

	if (pando_policy_decode(data, size, &p))
		return 0;
	fuzz_check(pando_policy_problem(&p) == NULL, "a decoded policy breaks a rule");
	fuzz_check(pando_policy_encode(&p, buf, sizeof(buf), &len) == 0 && len == size &&
			   !memcmp(buf, data, size),
		   "a policy re-encodes to other bytes");
	return 0;
}
