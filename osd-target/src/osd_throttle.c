/* The disk model's token buckets (osd_throttle.h). */
#include "osd_throttle.h"

#include <errno.h>
#include <time.h>

#define NS_PER_S 1000000000ull

static uint64_t bytes_to_ns(uint64_t bytes, uint64_t rate)
{
	return (uint64_t)((unsigned __int128)bytes * NS_PER_S / rate);
}

void osd_throttle_init(struct osd_throttle *t, uint64_t rate)
{
	pthread_condattr_t attr;

	t->rate = rate;
	t->burst = rate / 10 > OSD_THROTTLE_MIN_BURST ? rate / 10 : OSD_THROTTLE_MIN_BURST;
	t->tau_ns = rate ? bytes_to_ns(t->burst, rate) : 0;
	t->tat_ns = 0;
	t->stopping = false;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &attr);
	pthread_condattr_destroy(&attr);
}

void osd_throttle_destroy(struct osd_throttle *t)
{
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
}

void osd_throttle_stop(struct osd_throttle *t)
{
	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	pthread_cond_broadcast(&t->wake);
	pthread_mutex_unlock(&t->lock);
}

/* GCRA: the bucket is full when tat <= now; each request pushes tat on by
 * its cost, and may go once tat - tau <= now (at most a burst in debt).
 * A request larger than the burst still goes, after its excess is paid. */
uint64_t osd_throttle_reserve(struct osd_throttle *t, uint64_t bytes, uint64_t now_ns)
{
	uint64_t tat, go;

	pthread_mutex_lock(&t->lock);
	if (t->stopping) {
		pthread_mutex_unlock(&t->lock);
		return now_ns;
	}
	tat = t->tat_ns > now_ns ? t->tat_ns : now_ns;
	tat += bytes_to_ns(bytes, t->rate);
	t->tat_ns = tat;
	pthread_mutex_unlock(&t->lock);
	go = tat > t->tau_ns ? tat - t->tau_ns : 0;
	return go > now_ns ? go : now_ns;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t osd_throttle_take(struct osd_throttle *t, uint64_t bytes)
{
	uint64_t now, go;
	struct timespec ts;

	if (!osd_throttle_on(t) || !bytes)
		return 0;
	now = mono_ns();
	go = osd_throttle_reserve(t, bytes, now);
	if (go <= now)
		return 0;
	ts.tv_sec = (time_t)(go / NS_PER_S);
	ts.tv_nsec = (long)(go % NS_PER_S);
	pthread_mutex_lock(&t->lock);
	while (!t->stopping && pthread_cond_timedwait(&t->wake, &t->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&t->lock);
	return mono_ns() - now;
}
