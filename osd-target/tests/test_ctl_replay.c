/* The control program's replay cache: a credential is admitted once; the
 * window's end forgets it; a full cache drops its oldest second and
 * refuses that second from then on, so no replay gets through however
 * many calls come; and threads racing with the same credential let it in
 * once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"
#include "ctl_replay.h"

#define WINDOW 300
#define NOW 1800000000ull

static void test_once_and_only_once(void)
{
	struct ctl_replay *r = ctl_replay_new(1000, WINDOW);

	CHECK(r != NULL);
	CHECK_EQ(ctl_replay_check(r, 1, NOW, 42, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_check(r, 1, NOW, 42, NOW), CTL_REPLAY_SEEN);
	CHECK_EQ(ctl_replay_check(r, 1, NOW, 42, NOW + 299), CTL_REPLAY_SEEN);
	/* another key's, or another second's, is another credential */
	CHECK_EQ(ctl_replay_check(r, 2, NOW, 42, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_check(r, 1, NOW + 1, 42, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_check(r, 1, NOW - WINDOW, 43, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_check(r, 1, NOW + WINDOW, 43, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_count(r), 5);
	ctl_replay_free(r);
	CHECK(ctl_replay_new(1000, 600) == NULL); /* more seconds than the ring */
}

/* What leaves the window is forgotten (the time check refuses it then),
 * and what has not stays, however far the clock jumps. */
static void test_the_window_moves_on(void)
{
	struct ctl_replay *r = ctl_replay_new(1000, WINDOW);

	for (uint64_t t = NOW - WINDOW; t <= NOW + WINDOW; t++)
		CHECK_EQ(ctl_replay_check(r, 1, t, t, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_count(r), 2 * WINDOW + 1);
	/* ten seconds on: the ten oldest seconds went, the rest are still seen */
	CHECK_EQ(ctl_replay_check(r, 1, NOW + 10, NOW + 10, NOW + 10), CTL_REPLAY_SEEN);
	CHECK_EQ(ctl_replay_count(r), 2 * WINDOW + 1 - 10);
	CHECK_EQ(ctl_replay_check(r, 1, NOW - WINDOW + 10, NOW - WINDOW + 10, NOW + 10),
		 CTL_REPLAY_SEEN);
	/* an hour on, everything went */
	CHECK_EQ(ctl_replay_check(r, 1, NOW + 3600, 1, NOW + 3600), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_count(r), 1);
	ctl_replay_free(r);
}

/* Full: the oldest second is dropped and refused, never let in again. */
static void test_a_full_cache_shrinks_the_window(void)
{
	struct ctl_replay *r = ctl_replay_new(8, WINDOW);

	for (uint64_t i = 0; i < 8; i++)
		CHECK_EQ(ctl_replay_check(r, 1, NOW - 8 + i, i, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_check(r, 1, NOW, 100, NOW), CTL_REPLAY_FRESH);
	CHECK_EQ(ctl_replay_count(r), 8);
	/* the oldest second's credential: refused, though it is forgotten */
	CHECK_EQ(ctl_replay_check(r, 1, NOW - 8, 0, NOW), CTL_REPLAY_STALE);
	CHECK_EQ(ctl_replay_check(r, 1, NOW - 8, 999, NOW), CTL_REPLAY_STALE);
	for (uint64_t i = 1; i < 8; i++)
		CHECK_EQ(ctl_replay_check(r, 1, NOW - 8 + i, i, NOW), CTL_REPLAY_SEEN);
	/* a call of the oldest second still held evicts that second itself */
	CHECK_EQ(ctl_replay_check(r, 1, NOW - 7, 500, NOW), CTL_REPLAY_STALE);
	CHECK_EQ(ctl_replay_check(r, 1, NOW - 7, 1, NOW), CTL_REPLAY_STALE);
	CHECK_EQ(ctl_replay_check(r, 1, NOW, 101, NOW), CTL_REPLAY_FRESH);
	CHECK(ctl_replay_count(r) <= 8);
	ctl_replay_free(r);
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Many calls at random times in the window through a small cache: every
 * one admitted is refused when it comes again, whatever was evicted. */
static void test_no_replay_gets_through_a_small_cache(void)
{
	enum { CALLS = 20000 };
	static uint64_t times[CALLS];
	static bool admitted[CALLS];
	struct ctl_replay *r = ctl_replay_new(500, WINDOW);
	uint64_t seed = 88172645463325252ull, now = NOW;
	int fresh = 0, replayed = 0;

	for (int i = 0; i < CALLS; i++) {
		if (i % 100 == 0)
			now++;
		times[i] = now - WINDOW + rng(&seed) % (2 * WINDOW + 1);
		admitted[i] = ctl_replay_check(r, 1, times[i], (uint64_t)i, now) ==
			      CTL_REPLAY_FRESH;
		fresh += admitted[i];
	}
	CHECK(fresh > 1000);
	CHECK(ctl_replay_count(r) <= 500);
	for (int i = 0; i < CALLS; i++)
		replayed += admitted[i] && times[i] + WINDOW >= now &&
			    ctl_replay_check(r, 1, times[i], (uint64_t)i, now) == CTL_REPLAY_FRESH;
	CHECK_EQ(replayed, 0);
	ctl_replay_free(r);
}

/* One second holding many calls (the buckets grow). */
static void test_a_busy_second(void)
{
	struct ctl_replay *r = ctl_replay_new(CTL_REPLAY_MAX_ENTRIES, WINDOW);
	int wrong = 0;

	for (uint64_t n = 0; n < 100000; n++)
		wrong += ctl_replay_check(r, 7, NOW, 0xabcdef0000000000ull + n, NOW) !=
			 CTL_REPLAY_FRESH;
	for (uint64_t n = 0; n < 100000; n++)
		wrong += ctl_replay_check(r, 7, NOW, 0xabcdef0000000000ull + n, NOW) !=
			 CTL_REPLAY_SEEN;
	CHECK_EQ(wrong, 0);
	CHECK_EQ(ctl_replay_count(r), 100000);
	ctl_replay_free(r);
}

struct racer {
	struct ctl_replay *r;
	atomic_int *fresh;
};

static void *race(void *arg)
{
	struct racer *x = arg;

	for (uint64_t n = 0; n < 5000; n++)
		if (ctl_replay_check(x->r, 1, NOW + n % 3, n, NOW) == CTL_REPLAY_FRESH)
			atomic_fetch_add(x->fresh, 1);
	return NULL;
}

/* Worker threads admitting the same credentials at once: each gets in once. */
static void test_threads_race_for_the_same_credentials(void)
{
	struct ctl_replay *r = ctl_replay_new(CTL_REPLAY_MAX_ENTRIES, WINDOW);
	atomic_int fresh = 0;
	struct racer x = { r, &fresh };
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, race, &x);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&fresh), 5000);
	ctl_replay_free(r);
}

int main(void)
{
	test_once_and_only_once();
	test_the_window_moves_on();
	test_a_full_cache_shrinks_the_window();
	test_no_replay_gets_through_a_small_cache();
	test_a_busy_second();
	test_threads_race_for_the_same_credentials();
	CHECK_DONE();
}
