#include "pando/placement.h"

#include <errno.h>

int pando_group_width_auto(uint32_t osds, uint32_t spares, uint32_t min_width, uint32_t max_width,
			   uint32_t *width, uint32_t *groups)
{
	uint32_t lo = min_width > PANDO_AUTO_MIN_WIDTH ? min_width : PANDO_AUTO_MIN_WIDTH;
	uint32_t hi = max_width < PANDO_AUTO_MAX_WIDTH ? max_width : PANDO_AUTO_MAX_WIDTH;
	uint32_t usable, best_unused = UINT32_MAX;

	if (min_width == 0 || osds < spares || osds - spares < min_width || min_width > max_width)
		return -ENOSPC;
	usable = osds - spares;
	for (uint32_t w = lo; w <= hi; w++) {
		uint32_t g = usable / w, unused = osds - g * w;

		/* >= : on a tie the wider group wins (Table 1: 100 OSDs -> 11) */
		if (g && unused <= best_unused) {
			best_unused = unused;
			*width = w;
			*groups = g;
		}
	}
	if (best_unused != UINT32_MAX)
		return 0;
	/* below Table 1's range (few OSDs, or few failure domains): groups
	 * as wide as allowed, as many as fit */
	*width = usable < max_width ? usable : max_width;
	*groups = usable / *width;
	return 0;
}
