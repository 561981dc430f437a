/* A limit on log lines a peer or a failing disk can cause (the kernel's
 * printk_ratelimit): at most `burst` lines per `interval_ms`; the first
 * line let through after a window that dropped some says how many. */
#ifndef PANDO_RATELIMIT_H
#define PANDO_RATELIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ratelimit {
	pthread_mutex_t lock;
	unsigned interval_ms;
	unsigned burst;
	uint64_t window_start_ms;
	unsigned printed;    /* lines let through in this window */
	unsigned suppressed; /* lines dropped since the last one let through */
};

/* For a static limit: struct ratelimit rl = RATELIMIT_INIT(5000, 10); */
#define RATELIMIT_INIT(interval_ms_, burst_) \
	{ \
		.lock = PTHREAD_MUTEX_INITIALIZER, .interval_ms = (interval_ms_), \
		.burst = (burst_) \
	}

void ratelimit_init(struct ratelimit *rl, unsigned interval_ms, unsigned burst);
void ratelimit_destroy(struct ratelimit *rl);
/* Whether a line may go out at now_ms; *dropped gets the lines dropped
 * since the last one that went out (to be said with this one). */
bool ratelimit_pass(struct ratelimit *rl, uint64_t now_ms, unsigned *dropped);
/* The same at the monotonic clock's now. */
bool ratelimit_pass_now(struct ratelimit *rl, unsigned *dropped);

#ifdef __cplusplus
}
#endif

#endif
