#include "mds_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static const char *const level_names[] = { "CRIT", "MAJ", "WARN", "EVENT", "INFO", "DEBUG" };

static void stderr_sink(enum mds_log_level level, const char *func, const char *msg)
{
	fprintf(stderr, "%s :%s :%s\n", func, level_names[level], msg);
}

static _Atomic(mds_log_sink *) current_sink = stderr_sink;

void mds_log_set_sink(mds_log_sink *sink)
{
	atomic_store(&current_sink, sink ? sink : stderr_sink);
}

void mds_log(enum mds_log_level level, const char *func, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_load (&current_sink)(level, func, msg);
}
