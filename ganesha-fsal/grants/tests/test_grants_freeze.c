/* pando_grants: gateway writers, write watches and freezes (rebuild,
 * scrub and transcoding hold a file still while they copy it). */
#include "check.h"
#include "fake_ops.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

static void a_frozen_file_refuses_grants_and_gateway_writes_and_says_so(void)
{
	struct fake fk;
	struct pando_grant *s = NULL;

	fake_grants(&fk);
	CHECK_EQ(pando_grants_freeze(fk.g, 5, "scrub"), 0);
	CHECK(!pando_grants_wanted(fk.g, 5));
	CHECK_EQ(fake_grant(&fk, 5, 3, false, &s), -EAGAIN);
	CHECK(pando_grants_wanted(fk.g, 5));
	/* A refused grant must not free the frozen file's entry. */
	CHECK_EQ(fake_grant(&fk, 5, 3, false, &s), -EAGAIN);
	CHECK_EQ(pando_grants_write_begin(fk.g, 5), -EBUSY);
	pando_grants_thaw(fk.g, 5);
	CHECK_EQ(fake_grant(&fk, 5, 3, false, &s), 0);
	CHECK_EQ(pando_grants_write_begin(fk.g, 5), 0);
	pando_grants_write_end(fk.g, 5);
	pando_grant_end(s);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void freezes_nest_and_each_thaw_undoes_one(void)
{
	struct fake fk;
	struct pando_grant *s = NULL;

	fake_grants(&fk);
	CHECK_EQ(pando_grants_freeze(fk.g, 5, "rebuild"), 0);
	CHECK_EQ(pando_grants_freeze(fk.g, 5, "scrub"), 0);
	pando_grants_thaw(fk.g, 5);
	CHECK_EQ(fake_grant(&fk, 5, 3, false, &s), -EAGAIN);
	pando_grants_thaw(fk.g, 5);
	CHECK_EQ(fake_grant(&fk, 5, 3, false, &s), 0);
	pando_grants_thaw(fk.g, 5); /* one too many: no effect */
	pando_grant_end(s);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void a_watch_sees_writes_after_its_mark(void)
{
	struct fake fk;
	struct pando_grant *r, *w;
	uint64_t mark;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &r);
	mark = pando_grants_watch(fk.g, 5);
	CHECK(!pando_grants_written_since(fk.g, 5, mark));
	CHECK_EQ(pando_grants_write_begin(fk.g, 5), 0);
	pando_grants_write_end(fk.g, 5);
	CHECK(pando_grants_written_since(fk.g, 5, mark));
	mark = pando_grants_watch(fk.g, 5);
	CHECK(!pando_grants_written_since(fk.g, 5, mark));
	fake_grant(&fk, 5, 4, true, &w);
	CHECK(pando_grants_written_since(fk.g, 5, mark));
	/* A writer already at work: dirty at once. */
	mark = pando_grants_watch(fk.g, 5);
	CHECK(pando_grants_written_since(fk.g, 5, mark));
	pando_grant_end(w);
	pando_grants_settled(fk.g, 5, true);
	pando_grant_end(r);
	CHECK_EQ(fake_stats(&fk).files, 1); /* still watched, three times */
	for (int i = 0; i < 3; i++)
		pando_grants_unwatch(fk.g, 5);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void busy_means_writers_or_a_recall(void)
{
	struct fake fk;
	struct pando_grant *r;

	fake_grants(&fk);
	CHECK(!pando_grants_busy(fk.g, 5));
	fake_grant(&fk, 5, 3, false, &r);
	CHECK(!pando_grants_busy(fk.g, 5));
	pando_grants_write_begin(fk.g, 5);
	CHECK(pando_grants_busy(fk.g, 5));
	pando_grants_write_end(fk.g, 5);
	pando_grants_recall_file(fk.g, 5, 0, false, "admin");
	CHECK(pando_grants_busy(fk.g, 5));
	pando_grant_end(r);
	CHECK(!pando_grants_busy(fk.g, 5));
	fake_free(&fk);
}

struct ender {
	struct fake *fk;
	struct pando_grant *seg; /* returned after a while, or NULL */
	bool tick;               /* else: ends a gateway write */
	atomic_bool acted;       /* set as it acts, after its pause */
};

static void *end_later(void *arg)
{
	struct ender *e = arg;

	usleep(100 * 1000);
	e->acted = true;
	if (e->seg) {
		pando_grant_end(e->seg);
	} else if (e->tick) {
		pthread_mutex_lock(&e->fk->lock);
		e->fk->now += 10;
		pthread_mutex_unlock(&e->fk->lock);
		pando_grants_tick(e->fk->g);
	} else {
		pando_grants_write_end(e->fk->g, 5);
	}
	return NULL;
}

/* Freezes the file while another thread ends what holds it. */
static int freeze_while(struct fake *fk, struct ender *e)
{
	pthread_t t;
	int rc;

	pthread_create(&t, NULL, end_later, e);
	rc = pando_grants_freeze(fk->g, 5, "rebuild");
	CHECK(e->acted); /* it waited for the end */
	pthread_join(t, NULL);
	return rc;
}

static void a_freeze_waits_for_writers_to_return_or_be_fenced(void)
{
	struct fake fk;
	struct pando_grant *w, *r;
	struct ender e = { .fk = &fk };

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &r);
	fake_grant(&fk, 5, 4, true, &w);
	e.seg = w;
	CHECK_EQ(freeze_while(&fk, &e), 0);
	CHECK(!r->recalled); /* readers keep reading */
	CHECK_EQ(fk.nrecalls, 1);
	pando_grants_thaw(fk.g, 5);
	fake_grant(&fk, 5, 4, true, &w);
	e = (struct ender){ .fk = &fk, .tick = true };
	CHECK_EQ(freeze_while(&fk, &e), 0);
	CHECK(w->fenced);
	pando_grants_thaw(fk.g, 5);
	CHECK_EQ(pando_grants_write_begin(fk.g, 5), 0);
	e = (struct ender){ .fk = &fk };
	CHECK_EQ(freeze_while(&fk, &e), 0);
	pando_grants_thaw(fk.g, 5);
	pando_grant_end(w);
	pando_grant_end(r);
	pando_grants_settled(fk.g, 5, true);
	CHECK_EQ(fake_stats(&fk).files, 0);
	CHECK_EQ(fk.marked[5], 0);
	fake_free(&fk);
}

int main(void)
{
	a_frozen_file_refuses_grants_and_gateway_writes_and_says_so();
	freezes_nest_and_each_thaw_undoes_one();
	a_watch_sees_writes_after_its_mark();
	busy_means_writers_or_a_recall();
	a_freeze_waits_for_writers_to_return_or_be_fenced();
	CHECK_DONE();
}
