#include "ratelimit.h"

#include <time.h>

void ratelimit_init(struct ratelimit *rl, unsigned interval_ms, unsigned burst)
{
	*rl = (struct ratelimit){ .interval_ms = interval_ms, .burst = burst };
	pthread_mutex_init(&rl->lock, NULL);
}

void ratelimit_destroy(struct ratelimit *rl)
{
	pthread_mutex_destroy(&rl->lock);
}

bool ratelimit_pass(struct ratelimit *rl, uint64_t now_ms, unsigned *dropped)
{
	bool pass;

	pthread_mutex_lock(&rl->lock);
	/* Unsigned: a clock that went back wraps to a long interval. */
	if (now_ms - rl->window_start_ms >= rl->interval_ms) {
		rl->window_start_ms = now_ms;
		rl->printed = 0;
	}
	pass = rl->printed < rl->burst;
	*dropped = 0;
	if (pass) {
		rl->printed++;
		*dropped = rl->suppressed;
		rl->suppressed = 0;
	} else {
		rl->suppressed++;
	}
	pthread_mutex_unlock(&rl->lock);
	return pass;
}

bool ratelimit_pass_now(struct ratelimit *rl, unsigned *dropped)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ratelimit_pass(rl, (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000,
			      dropped);
}
