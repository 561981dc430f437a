/* The periodic thread (ticker.h). */
#include "ticker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct pando_ticker {
	pando_tick_fn fn;
	void *arg;
	uint32_t period_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool kicked;
	bool stop;
};

static void period_from_now(const struct pando_ticker *t, struct timespec *until)
{
	clock_gettime(CLOCK_MONOTONIC, until);
	until->tv_sec += t->period_ms / 1000;
	until->tv_nsec += (long)(t->period_ms % 1000) * 1000000;
	if (until->tv_nsec >= 1000000000) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000;
	}
}

static void *ticker_main(void *arg)
{
	struct pando_ticker *t = arg;
	bool again = true;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec until;

		if (t->kicked || again) {
			t->kicked = false;
			pthread_mutex_unlock(&t->lock);
			again = t->fn(t->arg);
			pthread_mutex_lock(&t->lock);
			if (t->kicked || t->stop)
				continue;
		}
		period_from_now(t, &until);
		pthread_cond_timedwait(&t->cond, &t->lock, &until);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int init_sync(struct pando_ticker *t)
{
	pthread_condattr_t ca;
	int rc = pthread_condattr_init(&ca);

	if (rc)
		return rc;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		return rc;
	rc = pthread_mutex_init(&t->lock, NULL);
	if (rc)
		pthread_cond_destroy(&t->cond);
	return rc;
}

int pando_ticker_start(pando_tick_fn fn, void *arg, uint32_t period_ms, struct pando_ticker **out)
{
	struct pando_ticker *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->fn = fn;
	t->arg = arg;
	t->period_ms = period_ms;
	rc = init_sync(t);
	if (!rc) {
		rc = pthread_create(&t->thread, NULL, ticker_main, t);
		if (rc) {
			pthread_cond_destroy(&t->cond);
			pthread_mutex_destroy(&t->lock);
		}
	}
	if (rc) {
		free(t);
		return -rc;
	}
	*out = t;
	return 0;
}

void pando_ticker_kick(struct pando_ticker *t)
{
	pthread_mutex_lock(&t->lock);
	t->kicked = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void pando_ticker_stop(struct pando_ticker *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
