/* A key kept alive under a lease by a thread of its own (etcd_client.h).
 * The thread owns its client, so a slow or absent etcd costs only this
 * thread's time: the caller's start, stop and data path never wait on it
 * beyond one exchange's timeout at stop (the revoke). */
#include "etcd_client.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each exchange is bounded well under the shortest keepalive period. */
#define PRESENCE_TIMEOUT_MS 1000
#define PRESENCE_RETRY_MS 1000

struct etcd_presence {
	struct etcd_client *c;
	char *key;
	char who[300]; /* "as etcd user NAME", for refusals */
	int ttl_ms, interval_ms, keepalive_ms;
	etcd_presence_fill fill;
	etcd_presence_log log;
	void *arg;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	int stop, kick;      /* under lock */

	/* the thread's own state */
	int64_t lease;
	int64_t last_renewed; /* ms, monotonic: the lease is good until +ttl */
	int64_t next_keepalive, next_put;
	int registered, lost;
	int refused; /* what was said of the failure: etcd refused */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(struct etcd_presence *p, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct etcd_presence *p, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!p->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->log(p->arg, level, msg);
}

/* A failed exchange: the first since things worked is worth one line,
 * and so is the first refusal after etcd was away, or the other way
 * round; the same failure again is not. */
static void failed(struct etcd_presence *p, const char *what, int rc)
{
	int refused = rc == -EACCES;

	if (p->lost && p->refused == refused)
		return;
	p->lost = 1;
	p->refused = refused;
	if (refused)
		say(p, 1,
		    "etcd refused %s %s %s: permission denied, or credentials refused; "
		    "retrying every second",
		    what, p->key, p->who);
	else
		say(p, 1, "lost etcd: %s %s: %s; retrying every second", what, p->key,
		    etcd_strerror(rc));
}

static int put_now(struct etcd_presence *p)
{
	char *value = p->fill(p->arg);
	int rc;

	if (!value)
		return -ENOMEM;
	rc = etcd_put(p->c, p->key, value, strlen(value), p->lease);
	free(value);
	if (rc == 0) {
		if (!p->registered)
			say(p, 0, "registered %s in etcd at %s (lease %" PRId64 ", ttl %d s)",
			    p->key, etcd_client_endpoint(p->c), p->lease, p->ttl_ms / 1000);
		else if (p->lost)
			say(p, 0, "etcd back at %s: %s registered (lease %" PRId64 ")",
			    etcd_client_endpoint(p->c), p->key, p->lease);
		p->registered = 1;
		p->lost = 0;
		p->next_put = mono_ms() + p->interval_ms;
	}
	return rc;
}

/* The lease is gone (etcd says so, or a TTL passed without renewal):
 * a new one is granted, and the put that follows says "back". */
static void expired(struct etcd_presence *p)
{
	if (!p->lost) {
		say(p, 1, "the lease of %s has expired; granting a new one", p->key);
		p->refused = 0;
	}
	p->lost = 1;
	p->lease = 0;
}

/* Makes sure a lease is held: grants one when there is none, or when the
 * last renewal is older than the TTL (etcd has dropped it by now). */
static int ensure_lease(struct etcd_presence *p, int64_t now, int *fresh)
{
	int rc;

	*fresh = 0;
	if (p->lease && now - p->last_renewed < p->ttl_ms)
		return 0;
	if (p->lease) /* we were stopped, or etcd was away, for a TTL */
		expired(p);
	rc = etcd_lease_grant(p->c, p->ttl_ms / 1000, &p->lease);
	if (rc) {
		failed(p, "granting a lease for", rc);
		return rc;
	}
	p->last_renewed = now;
	p->next_keepalive = now + p->keepalive_ms;
	*fresh = 1;
	return 0;
}

static int renew(struct etcd_presence *p, int64_t now)
{
	int rc;

	if (now < p->next_keepalive)
		return 0;
	rc = etcd_lease_keepalive(p->c, p->lease, NULL);
	if (rc == -ENOENT) {
		expired(p);
		return rc;
	}
	if (rc) {
		failed(p, "renewing the lease of", rc);
		p->next_keepalive = now + PRESENCE_RETRY_MS;
		return rc;
	}
	p->last_renewed = now;
	p->next_keepalive = now + p->keepalive_ms;
	return 0;
}

/* One round; returns the ms to sleep before the next (0: at once). */
static int64_t step(struct etcd_presence *p, int kicked)
{
	int64_t now = mono_ms(), next;
	int fresh, rc;

	if (ensure_lease(p, now, &fresh))
		return PRESENCE_RETRY_MS;
	rc = renew(p, now);
	if (rc == -ENOENT)
		return 0;
	if (fresh || kicked || now >= p->next_put) {
		rc = put_now(p);
		if (rc == -ENOENT) {
			p->lease = 0; /* revoked under us: a new one, not in a loop */
			return PRESENCE_RETRY_MS;
		}
		if (rc) {
			failed(p, "putting", rc);
			p->next_put = now + PRESENCE_RETRY_MS;
		}
	}
	next = p->next_keepalive < p->next_put ? p->next_keepalive : p->next_put;
	now = mono_ms();
	return next > now ? next - now : 0;
}

/* Sleeps ms or until stop/kick; returns whether a kick came. */
static int nap(struct etcd_presence *p, int64_t ms)
{
	struct timespec ts;
	int kicked;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&p->lock);
	while (!p->stop && !p->kick)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
			break;
	kicked = p->kick;
	p->kick = 0;
	pthread_mutex_unlock(&p->lock);
	return kicked;
}

static int stopping(struct etcd_presence *p)
{
	int s;

	pthread_mutex_lock(&p->lock);
	s = p->stop;
	pthread_mutex_unlock(&p->lock);
	return s;
}

static void *presence_thread(void *arg)
{
	struct etcd_presence *p = arg;
	int kicked = 0;

	while (!stopping(p)) {
		int64_t ms = step(p, kicked);
		kicked = ms > 0 ? nap(p, ms) : 0;
	}
	if (p->lease) {
		int rc = etcd_lease_revoke(p->c, p->lease);
		if (rc == 0)
			say(p, 0, "revoked the lease of %s", p->key);
		else
			say(p, 1, "could not revoke the lease of %s (%s): it expires within %d s",
			    p->key, etcd_strerror(rc), p->ttl_ms / 1000);
	}
	return NULL;
}

static void presence_free(struct etcd_presence *p)
{
	etcd_client_free(p->c);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->key);
	free(p);
}

static int presence_init(struct etcd_presence *p, const struct etcd_presence_options *opt)
{
	pthread_condattr_t ca;
	int ttl = opt->ttl_s > 0 ? opt->ttl_s : 5;
	int interval = opt->interval_s > 0 ? opt->interval_s : 2;

	p->ttl_ms = ttl * 1000;
	p->interval_ms = interval * 1000;
	/* TTL/4, so three renewals can be missed before the key goes. */
	p->keepalive_ms = p->ttl_ms / 4 > 250 ? p->ttl_ms / 4 : 250;
	p->fill = opt->fill;
	p->log = opt->log;
	p->arg = opt->arg;
	if (opt->etcd->user && *opt->etcd->user)
		snprintf(p->who, sizeof(p->who), "as etcd user %s", opt->etcd->user);
	else
		snprintf(p->who, sizeof(p->who), "without an etcd user");
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->key = strdup(opt->key);
	return p->key ? 0 : -ENOMEM;
}

static int presence_client(struct etcd_presence *p, const struct etcd_options *etcd)
{
	struct etcd_options o = *etcd;

	o.timeout_ms = PRESENCE_TIMEOUT_MS;
	return etcd_client_new(&o, &p->c);
}

int etcd_presence_start(const struct etcd_presence_options *opt, struct etcd_presence **out)
{
	struct etcd_presence *p;
	int rc;

	*out = NULL;
	if (!opt->etcd || !opt->key || !*opt->key || !opt->fill || opt->ttl_s < 0 ||
	    opt->interval_s < 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rc = presence_init(p, opt);
	if (rc == 0)
		rc = presence_client(p, opt->etcd);
	if (rc == 0)
		rc = -pthread_create(&p->thread, NULL, presence_thread, p);
	if (rc) {
		presence_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void etcd_presence_stop(struct etcd_presence *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	presence_free(p);
}

void etcd_presence_kick(struct etcd_presence *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->kick = 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}
