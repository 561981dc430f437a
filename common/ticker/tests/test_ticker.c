/* The periodic thread: runs at once, again after each period while its
 * function asks to, on a kick otherwise, and never after stop returns. */
#include "check.h"
#include "ticker.h"

#include <stdatomic.h>
#include <unistd.h>

struct counter {
	atomic_int runs;
	bool again;
};

static bool count(void *arg)
{
	struct counter *c = arg;

	c->runs++;
	return c->again;
}

static void a_ticker_runs_at_once_and_every_period_while_asked(void)
{
	struct counter c = { .again = true };
	struct pando_ticker *t;

	CHECK_EQ(pando_ticker_start(count, &c, 20, &t), 0);
	usleep(150 * 1000);
	pando_ticker_stop(t);
	CHECK(c.runs >= 3 && c.runs <= 9);
}

static void a_ticker_told_to_wait_runs_again_only_when_kicked(void)
{
	struct counter c = { .again = false };
	struct pando_ticker *t;
	int after;

	CHECK_EQ(pando_ticker_start(count, &c, 20, &t), 0);
	usleep(100 * 1000);
	CHECK_EQ(c.runs, 1);
	pando_ticker_kick(t);
	usleep(50 * 1000);
	CHECK_EQ(c.runs, 2);
	pando_ticker_stop(t);
	after = c.runs;
	usleep(50 * 1000);
	CHECK_EQ(c.runs, after);
}

int main(void)
{
	a_ticker_runs_at_once_and_every_period_while_asked();
	a_ticker_told_to_wait_runs_again_only_when_kicked();
	pando_ticker_stop(NULL);
	CHECK_DONE();
}
