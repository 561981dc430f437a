/* Ganesha's logger for code of the server compiled outside it (the unit
 * tests here, fuzz/fuzz_nfs41_layout.c): its XDR filters and inline
 * helpers log through it, and it lives in ganesha.nfsd.  Every component
 * is at NIV_NULL, so nothing is ever logged. */
#include "config.h"
#include "log.h"

#include <stdlib.h>

static log_levels_t log_levels[COMPONENT_COUNT];
log_levels_t *component_log_level = log_levels;

void DisplayLogComponentLevel(log_components_t component, const char *file, int line,
			      const char *function, log_levels_t level, const char *format, ...)
{
}

void LogMallocFailure(const char *file, int line, const char *function, const char *allocator)
{
	abort();
}
