/* Leadership of a manager group (election.h).  One thread owns the etcd
 * client and every exchange; callers only read what it published, or
 * ask it to resign and wait for that. */
#include "election.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_client.h"
#include "mds_alloc.h"
#include "mds_clock.h"

#define EXCHANGE_MS 1000
#define VALUE_MAX 256

struct pando_election {
	struct etcd_client *c;
	char *key, *value;
	int ttl_ms, poll_ms, keepalive_ms;
	pando_election_fn changed;
	pando_election_log log;
	void *arg;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	/* under lock: what callers see and ask */
	bool leading, stop;
	int64_t term;
	/* Monotonic ms the leadership is sure until: half a TTL past the
	 * last renewal.  Callers check it themselves, so a thread blocked in
	 * an exchange cannot make them lead longer. */
	int64_t sure_until;
	int resign_hold_ms; /* -1: none asked */
	unsigned resigns_done;

	/* the thread's own */
	int64_t lease, last_renewed, next_keepalive, hold_until;
	int64_t seen_term; /* the leader last told to changed() */
	char seen[VALUE_MAX];
	bool lost; /* etcd failed since it last answered: said once */
};

static void say(struct pando_election *e, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct pando_election *e, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!e->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->log(e->arg, level, msg);
}

static void failed(struct pando_election *e, const char *what, int rc)
{
	if (!e->lost)
		say(e, 1, "election %s: %s: %s; retrying", e->key, what, etcd_strerror(rc));
	e->lost = true;
}

/* A renewal sent at `at` succeeded: leadership is sure for TTL/2 more. */
static void renewed(struct pando_election *e, int64_t at)
{
	e->last_renewed = at;
	e->next_keepalive = at + e->keepalive_ms;
	e->lost = false;
	pthread_mutex_lock(&e->lock);
	e->sure_until = at + e->ttl_ms / 2;
	pthread_mutex_unlock(&e->lock);
}

/* Publishes the state and tells changed() when it is news. */
static void publish(struct pando_election *e, bool leading, int64_t term, const char *leader)
{
	bool news;

	pthread_mutex_lock(&e->lock);
	news = e->leading != leading || e->seen_term != term || strcmp(e->seen, leader);
	e->leading = leading;
	e->term = leading ? term : 0;
	if (!leading)
		e->sure_until = 0;
	pthread_mutex_unlock(&e->lock);
	if (!news)
		return;
	e->seen_term = term;
	snprintf(e->seen, sizeof(e->seen), "%s", leader);
	if (e->changed)
		e->changed(e->arg, leading, term, leader);
}

/* Leadership ends here, whatever etcd thinks: the lease is left to
 * expire (or revoked, when etcd answers), the key with it. */
static void step_down(struct pando_election *e, const char *why)
{
	int64_t term = e->seen_term;

	publish(e, false, 0, "");
	say(e, 1, "election %s: %s no longer leads (term %" PRId64 "): %s", e->key, e->value, term,
	    why);
	if (e->lease && etcd_lease_revoke(e->c, e->lease) == 0)
		say(e, 0, "election %s: revoked the lease", e->key);
	e->lease = 0;
}

/* The key as etcd has it: 1 with its value and term, 0 when absent. */
static int read_key(struct pando_election *e, char *value, int64_t *term)
{
	char *v = NULL;
	size_t len = 0;
	int rc = etcd_get(e->c, e->key, &v, &len, term);

	if (rc == -ENOENT)
		return 0;
	if (rc) {
		failed(e, "reading the leader", rc);
		return rc;
	}
	snprintf(value, VALUE_MAX, "%.*s", (int)(len < VALUE_MAX ? len : VALUE_MAX - 1), v);
	free(v);
	e->lost = false;
	return 1;
}

/* What the thread itself believes, sure or not: it still holds a lease
 * to renew or revoke. */
static bool holds(struct pando_election *e)
{
	bool leading;

	pthread_mutex_lock(&e->lock);
	leading = e->leading;
	pthread_mutex_unlock(&e->lock);
	return leading;
}

/* A follower: learns the leader, or campaigns when there is none. */
static void follow(struct pando_election *e, int64_t now)
{
	char value[VALUE_MAX];
	int64_t term = 0;
	int rc = read_key(e, value, &term);

	if (rc < 0)
		return;
	if (rc > 0 || now < e->hold_until) {
		publish(e, false, rc > 0 ? term : 0, rc > 0 ? value : "");
		return;
	}
	rc = etcd_lease_keep(e->c, e->ttl_ms / 1000, &e->lease);
	if (!rc)
		rc = etcd_create(e->c, e->key, e->value, strlen(e->value), e->lease);
	if (rc == -EEXIST)
		return; /* another won this round: read at the next poll */
	if (!rc)
		rc = read_key(e, value, &term) == 1 && !strcmp(value, e->value) ? 0 : -EAGAIN;
	if (rc) {
		failed(e, "campaigning", rc);
		return;
	}
	renewed(e, now);
	say(e, 0, "election %s: %s leads, term %" PRId64, e->key, e->value, term);
	publish(e, true, term, e->value);
}

/* A leader: renews its lease and checks the key is still its own. */
static void lead(struct pando_election *e, int64_t now)
{
	char value[VALUE_MAX];
	int64_t term = 0;
	int rc;

	if (now >= e->next_keepalive) {
		rc = etcd_lease_keepalive(e->c, e->lease, NULL);
		if (rc == -ENOENT) {
			step_down(e, "its lease expired");
			return;
		}
		if (rc == 0) {
			renewed(e, now);
		} else {
			failed(e, "renewing the lease", rc);
		}
	}
	if (mds_mono_ms() - e->last_renewed >= e->ttl_ms / 2) {
		step_down(e, "no renewal for half the lease's TTL");
		return;
	}
	rc = read_key(e, value, &term);
	if (rc == 0 || (rc > 0 && term != e->seen_term))
		step_down(e, "the key is no longer its own");
	else if (mds_mono_ms() - e->last_renewed >= e->ttl_ms / 2)
		step_down(e, "no renewal for half the lease's TTL");
}

/* A resign asked by a caller: done here, then the caller is woken. */
static void resign_now(struct pando_election *e, int hold_ms)
{
	if (e->lease && holds(e)) {
		if (etcd_delete_if(e->c, e->key, e->seen_term) == 0)
			say(e, 0, "election %s: %s resigned (term %" PRId64 ")", e->key, e->value,
			    e->seen_term);
		step_down(e, "it resigned");
	}
	e->hold_until = mds_mono_ms() + hold_ms;
	pthread_mutex_lock(&e->lock);
	e->resigns_done++;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

/* Sleeps ms, or until asked to stop or resign: what was asked. */
static int nap(struct pando_election *e, int64_t ms, bool *stop)
{
	struct timespec ts;
	int hold;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&e->lock);
	while (!e->stop && e->resign_hold_ms < 0)
		if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT)
			break;
	*stop = e->stop;
	hold = e->resign_hold_ms;
	e->resign_hold_ms = -1;
	pthread_mutex_unlock(&e->lock);
	return hold;
}

static void *election_thread(void *arg)
{
	struct pando_election *e = arg;
	bool stop = false;

	while (!stop) {
		int64_t now = mds_mono_ms();
		int hold;

		if (holds(e))
			lead(e, now);
		else
			follow(e, now);
		hold = nap(e, e->poll_ms, &stop);
		if (hold >= 0 || stop)
			resign_now(e, hold > 0 ? hold : 0);
	}
	return NULL;
}

static int election_client(struct pando_election *e, const struct etcd_options *etcd)
{
	struct etcd_options o = *etcd;

	/* Short enough that the thread notices a lost leadership soon after
	 * callers stop seeing it (sure_until). */
	o.timeout_ms = e->ttl_ms / 4 < EXCHANGE_MS ? e->ttl_ms / 4 : EXCHANGE_MS;
	return etcd_client_new(&o, &e->c);
}

static void election_free(struct pando_election *e)
{
	etcd_client_free(e->c);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e->key);
	free(e->value);
	free(e);
}

int pando_election_start(const struct pando_election_options *opt, struct pando_election **out)
{
	struct pando_election *e;
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	if (!opt->etcd || !opt->key || !*opt->key || !opt->value ||
	    strlen(opt->value) >= VALUE_MAX || opt->ttl_s < 0 || opt->poll_ms < 0)
		return -EINVAL;
	e = mds_calloc(1, sizeof(*e));
	e->key = mds_strdup(opt->key);
	e->value = mds_strdup(opt->value);
	e->ttl_ms = (opt->ttl_s ? opt->ttl_s : 5) * 1000;
	e->poll_ms = opt->poll_ms ? opt->poll_ms : 250;
	/* TTL/8: three renewals can fail before the leader steps down at
	 * TTL/2, and etcd expires the lease only at TTL. */
	e->keepalive_ms = e->ttl_ms / 8 > 100 ? e->ttl_ms / 8 : 100;
	e->changed = opt->changed;
	e->log = opt->log;
	e->arg = opt->arg;
	e->resign_hold_ms = -1;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	rc = election_client(e, opt->etcd);
	if (!rc)
		rc = -pthread_create(&e->thread, NULL, election_thread, e);
	if (rc) {
		election_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

bool pando_election_leading(struct pando_election *e, int64_t *term)
{
	bool leading;

	pthread_mutex_lock(&e->lock);
	leading = e->leading && mds_mono_ms() < e->sure_until;
	if (term)
		*term = leading ? e->term : 0;
	pthread_mutex_unlock(&e->lock);
	return leading;
}

void pando_election_resign(struct pando_election *e, int hold_ms)
{
	unsigned done;

	pthread_mutex_lock(&e->lock);
	done = e->resigns_done;
	e->resign_hold_ms = hold_ms > 0 ? hold_ms : 0;
	pthread_cond_broadcast(&e->cond);
	while (e->resigns_done == done && !e->stop)
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

void pando_election_stop(struct pando_election *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	election_free(e);
}
