#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

/* The threshold and sink are process-wide by nature (set once by main);
 * writes are serialised so lines from worker threads never interleave. */
static struct {
	enum log_level level;
	FILE *out;
	pthread_mutex_t lock;
} logger = { LOG_INFO, NULL, PTHREAD_MUTEX_INITIALIZER };

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void log_init(enum log_level level, FILE *out)
{
	logger.level = level;
	logger.out = out;
}

int log_level_parse(const char *name, enum log_level *level)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(name, level_names[i]) == 0) {
			*level = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

int log_enabled(enum log_level level)
{
	return level <= logger.level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	FILE *out = logger.out ? logger.out : stderr;
	char line[2048];
	struct timeval tv;
	struct tm tm;
	va_list ap;
	int n;

	if (!log_enabled(level))
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03ldZ %-5s ",
		      (long)(tv.tv_usec / 1000), level_names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* Whole lines under the lock, so worker threads never interleave. */
	pthread_mutex_lock(&logger.lock);
	fputs(line, out);
	fputc('\n', out);
	fflush(out);
	pthread_mutex_unlock(&logger.lock);
}

void log_limited(struct ratelimit *rl, enum log_level level, const char *fmt, ...)
{
	char line[1536];
	unsigned dropped;
	va_list ap;

	if (!log_enabled(level) || !ratelimit_pass_now(rl, &dropped))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (dropped)
		log_msg(level, "%s (%u similar lines dropped)", line, dropped);
	else
		log_msg(level, "%s", line);
}
