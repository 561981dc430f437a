/* The log rate limit: a burst per window, and the count of what it dropped. */
#include "check.h"
#include "ratelimit.h"

static void test_a_burst_per_window_and_the_dropped_count_said_once(void)
{
	struct ratelimit rl;
	unsigned dropped, passed = 0;

	ratelimit_init(&rl, 1000, 3);
	for (int i = 0; i < 10; i++)
		passed += ratelimit_pass(&rl, 5000, &dropped);
	CHECK_EQ(passed, 3);
	CHECK(ratelimit_pass(&rl, 6000, &dropped)); /* a new window */
	CHECK_EQ(dropped, 7);
	CHECK(ratelimit_pass(&rl, 6001, &dropped));
	CHECK_EQ(dropped, 0);
	ratelimit_destroy(&rl);
}

static void test_a_clock_that_went_back_starts_a_window(void)
{
	struct ratelimit rl = RATELIMIT_INIT(1000, 1);
	unsigned dropped;

	CHECK(ratelimit_pass(&rl, 9000, &dropped));
	CHECK(!ratelimit_pass(&rl, 9500, &dropped));
	CHECK(ratelimit_pass(&rl, 100, &dropped));
	CHECK_EQ(dropped, 1);
}

int main(void)
{
	test_a_burst_per_window_and_the_dropped_count_said_once();
	test_a_clock_that_went_back_starts_a_window();
	CHECK_DONE();
}
