/* Growing an array by doubling: the one copy every component uses.
 *
 * pando_grow() makes room for `need` items of `size` bytes in *v, whose
 * capacity in items is *cap, doubling from at least 16 items so that n
 * appends cost O(n) copies.  On failure (no memory, or a size that would
 * overflow size_t) it returns -ENOMEM and leaves *v and *cap as they
 * were, still owned by the caller. */
#ifndef PANDO_GROW_H
#define PANDO_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline int pando_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*v, ncap * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

#endif
