/* Allocation that does not fail: the engine's threads and records are
 * small, and Ganesha, which hosts it, aborts on an allocation that fails
 * too (gsh_malloc); so a failure ends the process with a log line, and
 * callers need no path for it. */
#ifndef PANDO_MDS_ALLOC_H
#define PANDO_MDS_ALLOC_H

#include <stddef.h>

void *mds_malloc(size_t n);
void *mds_calloc(size_t count, size_t size);
void *mds_realloc(void *p, size_t n);
char *mds_strdup(const char *s);

#endif
