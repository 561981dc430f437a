#include "mds_alloc.h"

#include <stdlib.h>
#include <string.h>

#include "mds_log.h"

static void *checked(void *p, size_t n)
{
	if (!p) {
		mds_log(MDS_LOG_CRIT, __func__, "pando: out of memory (%zu bytes)", n);
		abort();
	}
	return p;
}

void *mds_malloc(size_t n)
{
	return checked(malloc(n ? n : 1), n);
}

void *mds_calloc(size_t count, size_t size)
{
	return checked(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *mds_realloc(void *p, size_t n)
{
	return checked(realloc(p, n ? n : 1), n);
}

char *mds_strdup(const char *s)
{
	return checked(strdup(s), strlen(s) + 1);
}
