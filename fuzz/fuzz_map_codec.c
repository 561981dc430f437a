/* The storage map's stored form (layout/src/map_codec.c), which the
 * metadata manager reads back from RocksDB and fsck reads from damaged
 * stores.  The format is canonical (shortest varints, nothing after the
 * spares), so a map that decodes must encode to the very same bytes. */
#include <string.h>

#include "fuzz.h"
#include "pando/storage_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pando_storage_map *map;
	uint8_t *buf;
	size_t len;

	if (pando_map_decode(data, size, &map))
		return 0;
	fuzz_check(pando_map_validate(map) == 0, "a decoded map does not validate");
	buf = malloc(size ? size : 1);
	fuzz_check(pando_map_encode(map, buf, size, &len) == 0 && len == size &&
			   !memcmp(buf, data, size),
		   "a map re-encodes to other bytes");
	free(buf);
	pando_map_free(map);
	return 0;
}
