/* ff_layout4 (layout/src/ff_layout.c), LAYOUTGET's flexfiles body, and
 * ff_device_addr4 (ff_device.c), GETDEVICEINFO's: the first byte picks
 * which.  Pando encodes both and decodes them in its tests and tools.
 * The decoders take exactly one canonical structure, so what decodes must
 * encode back to the very same bytes, unless the encoder refuses it: the
 * decoders accept what RFC 8435 forbids a server to send (no address, a
 * stripe unit with one stripe), and the encoders never send it. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "pando/ff_xdr.h"

static void layout(const uint8_t *data, size_t size, uint8_t *buf)
{
	struct pando_ff_layout l;
	size_t len;

	if (pando_ff_layout_decode(data, size, &l) == 0 &&
	    pando_ff_layout_encode(&l, buf, size, &len) != -EINVAL)
		fuzz_check(len == size && !memcmp(buf, data, size),
			   "ff_layout4 re-encodes to other bytes");
	pando_ff_layout_release(&l);
}

static void device_addr(const uint8_t *data, size_t size, uint8_t *buf)
{
	struct pando_ff_device_addr a;
	size_t len;

	if (pando_ff_device_addr_decode(data, size, &a) == 0 &&
	    pando_ff_device_addr_encode(&a, buf, size, &len) != -EINVAL)
		fuzz_check(len == size && !memcmp(buf, data, size),
			   "ff_device_addr4 re-encodes to other bytes");
	pando_ff_device_addr_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;

	if (size < 1)
		return 0;
	buf = malloc(size);
	if (data[0] & 1)
		device_addr(data + 1, size - 1, buf);
	else
		layout(data + 1, size - 1, buf);
	free(buf);
	return 0;
}
