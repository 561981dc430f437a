/* Daemon logging: one line per event on stderr or a file, with a level
 * threshold set once at start-up. */
#ifndef PANDO_LOG_H
#define PANDO_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(enum log_level level, FILE *out);
int log_level_parse(const char *name, enum log_level *level);
int log_enabled(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A limit on lines a peer can trigger (kernel printk_ratelimit): at most
 * `burst` lines per `interval_ms`; the first line let through after a
 * window that dropped some says how many were dropped. */
struct log_ratelimit {
	pthread_mutex_t lock;
	unsigned interval_ms;
	unsigned burst;
	uint64_t window_start_ms;
	unsigned printed;         /* lines let through in this window */
	unsigned suppressed;      /* lines dropped since the last one let through */
};

#define LOG_RATELIMIT_INIT(interval_ms_, burst_)                                        \
	{ .lock = PTHREAD_MUTEX_INITIALIZER, .interval_ms = (interval_ms_), .burst = (burst_) }

void log_ratelimit_init(struct log_ratelimit *rl, unsigned interval_ms, unsigned burst);
void log_ratelimit_destroy(struct log_ratelimit *rl);
/* Whether a line may go out at now_ms; *dropped gets the lines dropped
 * since the last one that went out (to be said with this one). */
bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_ms, unsigned *dropped);
/* log_msg under a limit, with "(N similar lines dropped)" when it applies. */
void log_limited(struct log_ratelimit *rl, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_enabled(LOG_DEBUG)) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
