/* The disk model's token bucket: a burst passes at once, then requests
 * are spaced at the rate, in the order they arrived; a real wait is as
 * long as the rate says. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "osd_throttle.h"

#define MS 1000000ull
#define S 1000000000ull

/* Integer ns from byte counts: equal to within a microsecond. */
static int near(uint64_t a, uint64_t b)
{
	return a + 1000 >= b && b + 1000 >= a;
}

static void test_burst_then_rate(void)
{
	struct osd_throttle t;
	uint64_t now = 100 * S;

	osd_throttle_init(&t, 4u << 20); /* 4 MiB/s */
	CHECK_EQ(t.burst, 419430);       /* 100 ms of it */
	CHECK(near(t.tau_ns, 100 * MS));
	/* a full bucket lets a burst through at once */
	CHECK_EQ(osd_throttle_reserve(&t, 256u << 10, now), now);
	CHECK_EQ(osd_throttle_reserve(&t, 128u << 10, now), now);
	/* the next MiB waits for what the burst did not cover: 1.375 MiB of
	 * debt at 4 MiB/s is 343.75 ms, less the 100 ms of burst */
	CHECK(near(osd_throttle_reserve(&t, 1u << 20, now), now + 243750 * 1000));
	/* and the one after it, a quarter second later again: in order */
	CHECK(near(osd_throttle_reserve(&t, 1u << 20, now), now + 493750 * 1000));
	/* idle long enough, the bucket is full again */
	CHECK_EQ(osd_throttle_reserve(&t, 256u << 10, now + 10 * S), now + 10 * S);
	osd_throttle_destroy(&t);
}

static void test_small_rate_keeps_minimum_burst(void)
{
	struct osd_throttle t;

	osd_throttle_init(&t, 1u << 20);
	CHECK_EQ(t.burst, OSD_THROTTLE_MIN_BURST);
	CHECK_EQ(osd_throttle_reserve(&t, OSD_THROTTLE_MIN_BURST, S), S);
	CHECK(osd_throttle_reserve(&t, 1, S) > S);
	osd_throttle_destroy(&t);
}

static void test_unlimited_never_waits(void)
{
	struct osd_throttle t;

	osd_throttle_init(&t, 0);
	CHECK(!osd_throttle_on(&t));
	CHECK(!osd_throttle_on(NULL));
	CHECK_EQ(osd_throttle_take(&t, 1ull << 40), 0);
	osd_throttle_destroy(&t);
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * S + (uint64_t)ts.tv_nsec;
}

static void *taker(void *arg)
{
	osd_throttle_take(arg, 256u << 10);
	return NULL;
}

/* 8 threads take 2 MiB at 8 MiB/s with a 0.8 MiB burst: 150 ms at least. */
static void test_real_wait(void)
{
	struct osd_throttle t;
	pthread_t th[8];
	uint64_t start = mono(), took;

	osd_throttle_init(&t, 8u << 20);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, taker, &t), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	took = mono() - start;
	CHECK(took >= 149 * MS);
	CHECK(took < 2 * S);
	osd_throttle_destroy(&t);
}

static void *big_taker(void *arg)
{
	osd_throttle_take(arg, 4u << 20);
	return NULL;
}

/* A stop ends every wait at once (a drain at SIGTERM), and lets what
 * comes later through without one. */
static void test_stop_wakes_waiters(void)
{
	struct osd_throttle t;
	pthread_t th[2];
	uint64_t start = mono(), took;

	osd_throttle_init(&t, 1u << 20); /* 4 MiB each: seconds */
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, big_taker, &t), 0);
	usleep(100 * 1000);
	osd_throttle_stop(&t);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	took = mono() - start;
	CHECK(took < S);
	CHECK(osd_throttle_take(&t, 1u << 30) < 10 * MS);
	osd_throttle_destroy(&t);
}

int main(void)
{
	test_burst_then_rate();
	test_small_rate_keeps_minimum_burst();
	test_unlimited_never_waits();
	test_real_wait();
	test_stop_wakes_waiters();
	CHECK_DONE();
}
