/* Messages, clocks, counters and worker threads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pnfsload.h"

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("pnfsload: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void stats_add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

void stats_span(struct stats *st, double t0, double t1)
{
	pthread_mutex_lock(&st->lock);
	if (st->t_start == 0 || t0 < st->t_start)
		st->t_start = t0;
	if (t1 > st->t_end)
		st->t_end = t1;
	pthread_mutex_unlock(&st->lock);
}

struct worker {
	void (*fn)(void *state, unsigned k);
	void *state;
	unsigned k;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->fn(w->state, w->k);
	return NULL;
}

void run_workers(unsigned n, void (*fn)(void *state, unsigned k), void *state)
{
	pthread_t tids[MAX_DEPTH];
	struct worker ws[MAX_DEPTH];

	for (unsigned k = 1; k < n; k++) {
		ws[k] = (struct worker){ fn, state, k };
		if (pthread_create(&tids[k], NULL, worker_main, &ws[k]))
			die("cannot start a worker thread");
	}
	fn(state, 0);
	for (unsigned k = 1; k < n; k++)
		pthread_join(tids[k], NULL);
}
