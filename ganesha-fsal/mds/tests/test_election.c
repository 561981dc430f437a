/* Leadership of a manager group on a real etcd: of two campaigning, one
 * leads and the other knows who; a resign hands over at once, to a
 * higher term; a stopped leader's key goes with it, not after its TTL;
 * and a leader cut off from etcd (etcd stopped with SIGSTOP) stops
 * leading before its lease could expire and let another lead. */
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "election.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "freeze.h"

#define KEY "/pando/mds/group-1/leader"
#define TTL_S 2

static struct etcd_fixture etcd;
static struct etcd_options eo;

struct member {
	struct pando_election *e;
	atomic_int changes;
	atomic_bool told_leading;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void on_change(void *arg, bool leading, int64_t term, const char *leader)
{
	struct member *m = arg;

	(void)term;
	(void)leader;
	atomic_store(&m->told_leading, leading);
	atomic_fetch_add(&m->changes, 1);
}

static void join(struct member *m, const char *name)
{
	struct pando_election_options o = {
		.etcd = &eo,
		.key = KEY,
		.value = name,
		.ttl_s = TTL_S,
		.poll_ms = 100,
		.changed = on_change,
		.arg = m,
	};

	CHECK_EQ(pando_election_start(&o, &m->e), 0);
}

/* Waits up to ms for exactly one of a and b to lead: it, or NULL. */
static struct member *wait_leader(struct member *a, struct member *b, int ms)
{
	for (int64_t end = mono_ms() + ms; mono_ms() < end; sleep_ms(20)) {
		bool la = pando_election_leading(a->e, NULL),
		     lb = pando_election_leading(b->e, NULL);

		if (la != lb)
			return la ? a : b;
	}
	return NULL;
}

static int64_t term_of(struct member *m)
{
	int64_t term = 0;

	pando_election_leading(m->e, &term);
	return term;
}

static void test_one_of_two_leads_and_a_resign_hands_over(void)
{
	struct member a = { 0 }, b = { 0 }, *first, *second;
	int64_t t1, t2;

	join(&a, "mds-a");
	join(&b, "mds-b");
	first = wait_leader(&a, &b, 3000);
	CHECK(first != NULL);
	if (!first)
		goto out;
	second = first == &a ? &b : &a;
	t1 = term_of(first);
	CHECK(t1 > 0);
	CHECK(atomic_load(&first->told_leading));
	pando_election_resign(first->e, 3000);
	CHECK(!pando_election_leading(first->e, NULL));
	CHECK(wait_leader(&a, &b, 1000) == second);
	t2 = term_of(second);
	CHECK(t2 > t1);
	/* Held off: the one that resigned does not take it back. */
	sleep_ms(500);
	CHECK(!pando_election_leading(first->e, NULL));
	CHECK(atomic_load(&second->told_leading));
out:
	pando_election_stop(a.e);
	pando_election_stop(b.e);
}

static void test_a_stopped_leader_hands_over_before_its_ttl(void)
{
	struct member a = { 0 }, b = { 0 };
	int64_t t0;

	join(&a, "mds-a");
	for (int i = 0; i < 150 && !pando_election_leading(a.e, NULL); i++)
		sleep_ms(20);
	CHECK(pando_election_leading(a.e, NULL));
	join(&b, "mds-b");
	sleep_ms(300);
	CHECK(!pando_election_leading(b.e, NULL));
	t0 = mono_ms();
	pando_election_stop(a.e);
	for (int i = 0; i < 150 && !pando_election_leading(b.e, NULL); i++)
		sleep_ms(20);
	CHECK(pando_election_leading(b.e, NULL));
	CHECK(mono_ms() - t0 < TTL_S * 1000);
	pando_election_stop(b.e);
}

/* etcd frozen: exchanges time out.  The leader must stop leading within
 * TTL/2 plus one exchange, before etcd could expire its lease. */
static void test_a_leader_cut_off_from_etcd_stops_before_its_lease_ends(void)
{
	struct member a = { 0 };
	int64_t t0, took = -1, told;

	join(&a, "mds-a");
	for (int i = 0; i < 150 && !pando_election_leading(a.e, NULL); i++)
		sleep_ms(20);
	CHECK(pando_election_leading(a.e, NULL));
	CHECK_EQ(freeze_process(etcd.pid), 0);
	t0 = mono_ms();
	for (int i = 0; i < 200 && took < 0; i++) {
		if (!pando_election_leading(a.e, NULL))
			took = mono_ms() - t0;
		sleep_ms(20);
	}
	/* The thread, blocked in exchanges, tells changed() soon after. */
	while (atomic_load(&a.told_leading) && mono_ms() - t0 < TTL_S * 1000)
		sleep_ms(20);
	told = mono_ms() - t0;
	CHECK_EQ(kill(etcd.pid, SIGCONT), 0);
	CHECK(took >= 0);
	CHECK(took < TTL_S * 1000);
	CHECK(!atomic_load(&a.told_leading));
	CHECK(told < TTL_S * 1000);
	fprintf(stderr, "cut off: not leading after %lld ms, changed() after %lld ms (TTL %d s)\n",
		(long long)took, (long long)told, TTL_S);
	/* etcd back: it leads again, in a later term or the same key's. */
	for (int i = 0; i < 250 && !pando_election_leading(a.e, NULL); i++)
		sleep_ms(20);
	CHECK(pando_election_leading(a.e, NULL));
	pando_election_stop(a.e);
}

int main(void)
{
	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the election needs one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	eo = (struct etcd_options){ .endpoints = etcd.url };
	test_one_of_two_leads_and_a_resign_hands_over();
	test_a_stopped_leader_hands_over_before_its_ttl();
	test_a_leader_cut_off_from_etcd_stops_before_its_lease_ends();
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
