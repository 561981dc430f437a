/* A member's held record (held.h): put from a ticker, read by the
 * active's trim floor. */
#include "held.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "etcd_client.h"
#include "mds_clock.h"
#include "ticker.h"

#define HELD_POLL_MS 1000
#define HELD_VALUE_MAX 128

struct pando_held {
	struct pando_ticker *ticker;
	struct etcd_client *etcd;
	pando_held_seq_fn seq;
	void *arg;
	uint64_t put_seq; /* the last put, and when (monotonic s) */
	int64_t put_at;
	char key[512];
};

static void put(struct pando_held *h, bool always)
{
	uint64_t seq = h->seq(h->arg);
	char value[HELD_VALUE_MAX];
	int n;

	if (!seq ||
	    (!always && seq == h->put_seq && mds_mono_s() - h->put_at < PANDO_HELD_REFRESH_S))
		return;
	n = snprintf(value, sizeof(value), "{\"at\":%lld,\"seq\":%llu}", (long long)time(NULL),
		     (unsigned long long)seq);
	if (etcd_put(h->etcd, h->key, value, (size_t)n, 0) == 0) {
		h->put_seq = seq;
		h->put_at = mds_mono_s();
	}
}

static bool held_tick(void *arg)
{
	put(arg, false);
	return true;
}

int pando_held_start(const struct etcd_options *etcd, const char *key, pando_held_seq_fn seq,
		     void *arg, struct pando_held **out)
{
	struct pando_held *h;
	int rc;

	*out = NULL;
	if (strlen(key) >= sizeof(h->key))
		return -ENAMETOOLONG;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->key, sizeof(h->key), "%s", key);
	h->seq = seq;
	h->arg = arg;
	rc = etcd_client_new(etcd, &h->etcd);
	if (!rc)
		rc = pando_ticker_start(held_tick, h, HELD_POLL_MS, &h->ticker);
	if (rc) {
		pando_held_stop(h);
		return rc;
	}
	*out = h;
	return 0;
}

void pando_held_stop(struct pando_held *h)
{
	if (!h)
		return;
	pando_ticker_stop(h->ticker);
	if (h->ticker)
		put(h, true);
	if (h->etcd)
		etcd_client_free(h->etcd);
	free(h);
}

int pando_held_parse(const char *value, size_t len, uint64_t *seq, int64_t *at)
{
	json_t *o = len <= HELD_VALUE_MAX ? json_loadb(value, len, 0, NULL) : NULL;
	json_t *s = json_object_get(o, "seq"), *t = json_object_get(o, "at");
	int rc = -EINVAL;

	if (json_is_integer(s) && json_integer_value(s) > 0 && json_is_integer(t)) {
		*seq = (uint64_t)json_integer_value(s);
		*at = (int64_t)json_integer_value(t);
		rc = 0;
	}
	json_decref(o);
	return rc;
}

struct floor_scan {
	const char *self; /* the key's last part to leave out */
	int64_t now;
	uint64_t *floor;
	unsigned *bad;
};

static int floor_held(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct floor_scan *f = arg;
	const char *name = strrchr(key, '/');
	uint64_t seq;
	int64_t at;

	(void)rev;
	if (name && !strcmp(name + 1, f->self))
		return 0;
	if (pando_held_parse(value, len, &seq, &at) != 0)
		++*f->bad;
	else if (f->now - at <= PANDO_HELD_KEEP_S && seq < *f->floor)
		*f->floor = seq;
	return 0;
}

int pando_held_floor(struct etcd_client *c, const char *prefix, const char *self, int64_t now,
		     uint64_t *floor, unsigned *bad)
{
	struct floor_scan f = { .self = self, .now = now, .floor = floor, .bad = bad };

	return etcd_list(c, prefix, 0, floor_held, &f, NULL);
}
