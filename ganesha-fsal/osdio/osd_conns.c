/* Connections to the OSDs and their health (osd_conns.h). */
#include "osd_conns.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct osd_slot {
	pthread_mutex_t lock;       /* connect, addresses and state */
	struct cluster_map_osd osd; /* a copy: the map may go */
	struct osd_ctl_client **conns;
	/* Connections to an address the OSD left (osd_conns_add): callers may
	 * still be using them, so they are closed only with the connection pool. */
	struct osd_ctl_client **retired;
	size_t nretired;
	atomic_uint next;
	struct osd_health health;
	struct timespec down_until;
	bool have_verf;
	uint8_t verf[8];
};

/* Slots are made for CLUSTER_MAP_MAX_OSDS up front and never move, so a
 * slot found stays valid while OSDs join: a new one is filled, then
 * published by the release store of n, and readers load n with acquire. */
struct osd_conns {
	pthread_mutex_t key_lock;
	struct cluster_key key; /* what new connections sign with */
	struct osd_conns_options opt;
	pthread_mutex_t grow_lock; /* one osd_conns_add at a time */
	_Atomic size_t n;
	struct osd_slot *slots;
};

static struct osd_slot *slot_of(struct osd_conns *p, uint32_t id)
{
	size_t n = atomic_load_explicit(&p->n, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (p->slots[i].osd.id == id)
			return &p->slots[i];
	return NULL;
}

static int slot_init(struct osd_conns *p, struct osd_slot *s, const struct cluster_map_osd *o)
{
	s->conns = calloc(p->opt.conns_per_osd, sizeof(*s->conns));
	if (!s->conns)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->osd = *o;
	s->health.id = o->id;
	s->health.reachable = true;
	return 0;
}

/* Later calls open new connections.  Callers may still be using the old
 * ones, so they are closed only with the connection pool.  Under s->lock. */
static int slot_retire(struct osd_conns *p, struct osd_slot *s)
{
	size_t k = (size_t)p->opt.conns_per_osd;
	struct osd_ctl_client **r;

	r = realloc(s->retired, (s->nretired + k) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->retired = r;
	for (size_t c = 0; c < k; c++) {
		if (s->conns[c])
			s->retired[s->nretired++] = s->conns[c];
		s->conns[c] = NULL;
	}
	return 0;
}

/* The OSD moved: later calls connect to the new addresses. */
static int slot_move(struct osd_conns *p, struct osd_slot *s, const struct cluster_map_osd *o)
{
	bool moved;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	moved = strcmp(s->osd.ctl, o->ctl) != 0;
	if (moved)
		rc = slot_retire(p, s);
	if (!rc)
		s->osd = *o;
	if (!rc && moved)
		s->health.reachable = true;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int osd_conns_rekey(struct osd_conns *p, const struct cluster_key *key)
{
	int rc = 0;

	pthread_mutex_lock(&p->key_lock);
	p->key = *key;
	pthread_mutex_unlock(&p->key_lock);
	pthread_mutex_lock(&p->grow_lock);
	for (size_t i = 0; i < atomic_load_explicit(&p->n, memory_order_relaxed); i++) {
		struct osd_slot *s = &p->slots[i];
		int err;

		pthread_mutex_lock(&s->lock);
		err = slot_retire(p, s);
		pthread_mutex_unlock(&s->lock);
		rc = rc ? rc : err;
	}
	pthread_mutex_unlock(&p->grow_lock);
	return rc;
}

int osd_conns_add(struct osd_conns *p, const struct cluster_map_osd *o)
{
	struct osd_slot *s;
	size_t n;
	int rc;

	pthread_mutex_lock(&p->grow_lock);
	s = slot_of(p, o->id);
	n = atomic_load_explicit(&p->n, memory_order_relaxed);
	if (s)
		rc = slot_move(p, s, o);
	else if (n == CLUSTER_MAP_MAX_OSDS)
		rc = -ENOSPC;
	else if (!(rc = slot_init(p, &p->slots[n], o)))
		atomic_store_explicit(&p->n, n + 1, memory_order_release);
	pthread_mutex_unlock(&p->grow_lock);
	return rc;
}

void osd_conns_address(struct osd_conns *p, size_t i, struct cluster_map_osd *out)
{
	struct osd_slot *s = &p->slots[i];

	pthread_mutex_lock(&s->lock);
	*out = s->osd;
	pthread_mutex_unlock(&s->lock);
}

int osd_conns_new(const struct cluster_key *key, const struct cluster_map *map,
		  const struct osd_conns_options *opt, struct osd_conns **out)
{
	struct osd_conns *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->key_lock, NULL);
	p->key = *key;
	p->opt = opt ? *opt : (struct osd_conns_options){ 0 };
	if (p->opt.conns_per_osd <= 0)
		p->opt.conns_per_osd = 4;
	if (p->opt.timeout_ms <= 0)
		p->opt.timeout_ms = 10000;
	if (p->opt.backoff_ms <= 0)
		p->opt.backoff_ms = 2000;
	pthread_mutex_init(&p->grow_lock, NULL);
	p->slots = calloc(CLUSTER_MAP_MAX_OSDS, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < map->nosds; i++) {
		int rc = osd_conns_add(p, &map->osds[i]);

		if (rc) {
			osd_conns_free(p);
			return rc;
		}
	}
	*out = p;
	return 0;
}

void osd_conns_free(struct osd_conns *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < atomic_load(&p->n); i++) {
		struct osd_slot *s = &p->slots[i];

		for (int c = 0; s->conns && c < p->opt.conns_per_osd; c++)
			if (s->conns[c])
				osd_ctl_close(s->conns[c]);
		for (size_t r = 0; r < s->nretired; r++)
			osd_ctl_close(s->retired[r]);
		free(s->retired);
		free(s->conns);
		pthread_mutex_destroy(&s->lock);
	}
	pthread_mutex_destroy(&p->grow_lock);
	pthread_mutex_destroy(&p->key_lock);
	explicit_bzero(&p->key, sizeof(p->key));
	free(p->slots);
	free(p);
}

bool osd_conns_is_transport_error(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ECONNABORTED:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EHOSTDOWN:
	case -EPIPE:
	case -EPROTO:
	case -ENOTCONN:
		return true;
	default:
		return false;
	}
}

static bool backing_off(struct osd_slot *s)
{
	struct timespec now;

	if (s->health.reachable)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec < s->down_until.tv_sec ||
	       (now.tv_sec == s->down_until.tv_sec && now.tv_nsec < s->down_until.tv_nsec);
}

bool osd_conns_lost_connection(int rc)
{
	return rc == -ECONNRESET || rc == -EPIPE || rc == -ENOTCONN || rc == -ECONNABORTED ||
	       rc == -EPROTO;
}

/* A failed connect, or a call that timed out, backs off; a connection
 * that broke does not, so a restarted OSD is used again at the next call
 * instead of after one back-off per pooled connection. */
static void mark(struct osd_conns *p, struct osd_slot *s, int rc)
{
	bool ok = !osd_conns_is_transport_error(rc);

	s->health.calls++;
	if (!ok) {
		s->health.last_error = rc;
		s->health.failures++;
	}
	if (!ok && !osd_conns_lost_connection(rc)) {
		clock_gettime(CLOCK_MONOTONIC, &s->down_until);
		s->down_until.tv_sec += p->opt.backoff_ms / 1000;
		s->down_until.tv_nsec += (long)(p->opt.backoff_ms % 1000) * 1000000L;
		if (s->down_until.tv_nsec >= 1000000000L) {
			s->down_until.tv_sec++;
			s->down_until.tv_nsec -= 1000000000L;
		}
	}
	if (ok != s->health.reachable) {
		s->health.reachable = ok;
		s->health.last_change = time(NULL);
	}
}

struct osd_ctl_client *osd_conns_get(struct osd_conns *p, uint32_t id, int *err)
{
	struct osd_slot *s = slot_of(p, id);
	struct osd_ctl_client *c;
	unsigned i;

	if (!s) {
		*err = -ENOENT;
		return NULL;
	}
	i = atomic_fetch_add(&s->next, 1) % (unsigned)p->opt.conns_per_osd;
	pthread_mutex_lock(&s->lock);
	if (backing_off(s)) {
		pthread_mutex_unlock(&s->lock);
		*err = -EHOSTDOWN;
		return NULL;
	}
	c = s->conns[i];
	if (!c) {
		struct cluster_key key;

		pthread_mutex_lock(&p->key_lock);
		key = p->key;
		pthread_mutex_unlock(&p->key_lock);
		c = osd_ctl_connect(s->osd.ctl, &key, s->osd.id, p->opt.timeout_ms, err);
		explicit_bzero(&key, sizeof(key));
		if (c)
			s->conns[i] = c;
		else
			mark(p, s, *err);
	}
	pthread_mutex_unlock(&s->lock);
	return c;
}

void osd_conns_result(struct osd_conns *p, uint32_t id, int rc)
{
	struct osd_slot *s = slot_of(p, id);

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	mark(p, s, rc);
	pthread_mutex_unlock(&s->lock);
}

bool osd_conns_note_verf(struct osd_conns *p, uint32_t id, const uint8_t verf[8])
{
	struct osd_slot *s = slot_of(p, id);
	bool changed;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	changed = s->have_verf && memcmp(s->verf, verf, 8) != 0;
	memcpy(s->verf, verf, 8);
	s->have_verf = true;
	pthread_mutex_unlock(&s->lock);
	return changed;
}

int osd_conns_call_tries(struct osd_conns *p, uint32_t id, int tries, osd_conns_fn fn, void *arg)
{
	int rc = -EINVAL;

	for (int i = 0; i < tries; i++) {
		struct osd_ctl_client *c = osd_conns_get(p, id, &rc);

		if (!c)
			break;
		rc = fn(c, arg);
		osd_conns_result(p, id, rc);
		if (!osd_conns_lost_connection(rc))
			break;
	}
	return rc;
}

int osd_conns_call(struct osd_conns *p, uint32_t id, osd_conns_fn fn, void *arg)
{
	/* Every pooled connection may be one a restart broke; the try after
	 * them reconnects. */
	return osd_conns_call_tries(p, id, p->opt.conns_per_osd + 1, fn, arg);
}

static int null_fn(struct osd_ctl_client *c, void *arg)
{
	(void)arg;
	return osd_ctl_null(c);
}

int osd_conns_ping(struct osd_conns *p, uint32_t id)
{
	return osd_conns_call(p, id, null_fn, NULL);
}

int osd_conns_per_osd(const struct osd_conns *p)
{
	return p->opt.conns_per_osd;
}

size_t osd_conns_count(const struct osd_conns *p)
{
	return atomic_load_explicit(&((struct osd_conns *)p)->n, memory_order_acquire);
}

void osd_conns_health(struct osd_conns *p, size_t i, struct osd_health *out)
{
	struct osd_slot *s = &p->slots[i];

	pthread_mutex_lock(&s->lock);
	*out = s->health;
	pthread_mutex_unlock(&s->lock);
}

bool osd_conns_reachable(struct osd_conns *p, uint32_t id)
{
	struct osd_slot *s = slot_of(p, id);
	bool up;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	up = s->health.reachable;
	pthread_mutex_unlock(&s->lock);
	return up;
}
