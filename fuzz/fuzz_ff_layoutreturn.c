/* ff_layoutreturn4 (layout/src/ff_return.c), the flexfiles body of
 * LAYOUTRETURN that the metadata manager decodes from clients: its
 * ff_ioerr4 reports (what LAYOUTERROR carries) and ff_iostats4 reports
 * (LAYOUTSTATS' layoutupdate).  The decoder takes exactly one canonical
 * structure, so what decodes must encode back to the very same bytes. */
#include <string.h>

#include "fuzz.h"
#include "pando/ff_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pando_ff_layoutreturn ret;
	uint8_t *buf;
	size_t len;

	if (pando_ff_layoutreturn_decode(data, size, &ret) == 0) {
		buf = malloc(size ? size : 1);
		fuzz_check(pando_ff_layoutreturn_encode(&ret, buf, size, &len) == 0 &&
				   len == size && !memcmp(buf, data, size),
			   "ff_layoutreturn4 re-encodes to other bytes");
		free(buf);
	}
	pando_ff_layoutreturn_release(&ret);
	return 0;
}
