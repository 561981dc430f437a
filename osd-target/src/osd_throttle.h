/* The disk model: a token bucket per direction that caps the bytes per
 * second a target reads or writes, so that one machine can stand for many
 * disks in benchmarks and tests (read_bandwidth, write_bandwidth).
 *
 * It is kept as a GCRA (the "theoretical arrival time" form of a token
 * bucket): one timestamp under a mutex.  A request reserves its bytes at
 * once, in arrival order, and learns the time at which the bucket will
 * have paid for them; it then sleeps until that time with no lock held.
 * Reservations only ever move that time forward, so waiters wake, and are
 * served, in the order they arrived.  (The wait is a timed wait on a
 * condition variable of the same mutex, which it does not hold while
 * waiting, so that a stop can end it.) */
#ifndef PANDO_OSD_THROTTLE_H
#define PANDO_OSD_THROTTLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* The burst a full bucket allows: 100 ms of the rate, at least this. */
#define OSD_THROTTLE_MIN_BURST (256u << 10)

struct osd_throttle {
	uint64_t rate;   /* bytes per second; 0: unlimited */
	uint64_t burst;  /* bytes a full bucket holds */
	uint64_t tau_ns; /* burst / rate, in ns */
	pthread_mutex_t lock;
	pthread_cond_t wake; /* broadcast by stop() */
	uint64_t tat_ns;     /* CLOCK_MONOTONIC ns when all reservations are paid */
	bool stopping;       /* the daemon drains: nobody waits any more */
};

/* rate 0: unlimited, take() returns at once. */
void osd_throttle_init(struct osd_throttle *t, uint64_t rate);
void osd_throttle_destroy(struct osd_throttle *t);

static inline bool osd_throttle_on(const struct osd_throttle *t)
{
	return t && t->rate;
}

/* Reserves bytes and sleeps until the bucket has them; returns the ns
 * slept (0 when it had them, or unlimited).  No lock is held meanwhile. */
uint64_t osd_throttle_take(struct osd_throttle *t, uint64_t bytes);

/* Wakes every waiter and lets all later requests through at once, so
 * that a SIGTERM drain is not held up by a deep queue at a low cap. */
void osd_throttle_stop(struct osd_throttle *t);

/* The reservation alone: the CLOCK_MONOTONIC ns at which the caller may
 * go on, given the time now (for tests; take() is this plus the sleep). */
uint64_t osd_throttle_reserve(struct osd_throttle *t, uint64_t bytes, uint64_t now_ns);

#endif
