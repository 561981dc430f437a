/* Daemon logging: one line per event on stderr or a file, with a level
 * threshold set once at start-up. */
#ifndef PANDO_LOG_H
#define PANDO_LOG_H

#include <stdio.h>

#include "ratelimit.h"

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(enum log_level level, FILE *out);
int log_level_parse(const char *name, enum log_level *level);
int log_enabled(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_msg under a limit, with "(N similar lines dropped)" when it applies. */
void log_limited(struct ratelimit *rl, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) \
	do { \
		if (log_enabled(LOG_DEBUG)) \
			log_msg(LOG_DEBUG, __VA_ARGS__); \
	} while (0)

#endif
