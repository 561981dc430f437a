/* The planned switchover's watcher (handover.h), on a ticker. */
#include "handover.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd_client.h"
#include "ticker.h"

#define POLL_MS_DEFAULT 250
#define NAME_MAX_LEN 255

struct pando_handover {
	struct pando_ticker *ticker;
	struct etcd_client *etcd;
	pando_handover_fn stop;
	pando_handover_log log;
	void *arg;
	int64_t term;
	int64_t logged_rev; /* the malformed value last logged */
	char key[320];
	char name[NAME_MAX_LEN + 1];
};

static void say(struct pando_handover *h, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct pando_handover *h, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!h->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h->log(h->arg, level, msg);
}

enum pando_handover_request pando_handover_classify(const char *name, int64_t term,
						    const char *value, size_t len)
{
	/* Without JSON_ALLOW_NUL, a name with a NUL inside fails the parse. */
	json_t *o = len <= PANDO_HANDOVER_VALUE_MAX ? json_loadb(value, len, 0, NULL) : NULL;
	const char *from = json_string_value(json_object_get(o, "from"));
	json_t *t = json_object_get(o, "term");
	enum pando_handover_request r = PANDO_HANDOVER_NONE;

	if (from && json_is_integer(t)) {
		if (json_integer_value(t) < term)
			r = PANDO_HANDOVER_STALE;
		else if (json_integer_value(t) == term && !strcmp(from, name))
			r = PANDO_HANDOVER_FOR_ME;
		else
			r = PANDO_HANDOVER_FOR_ANOTHER;
	}
	json_decref(o);
	return r;
}

static bool handover_tick(void *arg)
{
	struct pando_handover *h = arg;
	char *value = NULL;
	size_t len = 0;
	int64_t rev = 0;
	enum pando_handover_request r;

	if (etcd_get(h->etcd, h->key, &value, &len, &rev) != 0)
		return true; /* none asked, or etcd away: look again */
	r = pando_handover_classify(h->name, h->term, value, len);
	free(value);
	if (r == PANDO_HANDOVER_NONE && rev != h->logged_rev) {
		h->logged_rev = rev;
		say(h, 1, "%s is not a handover request: ignored", h->key);
	}
	if (r == PANDO_HANDOVER_STALE || r == PANDO_HANDOVER_FOR_ME)
		etcd_delete_if(h->etcd, h->key, rev);
	if (r != PANDO_HANDOVER_FOR_ME)
		return true;
	say(h, 0, "%s asked to hand over (pando mds failover): stopping, a standby takes over",
	    h->name);
	h->stop(h->arg);
	return false;
}

int pando_handover_start(const struct pando_handover_options *opt, struct pando_handover **out)
{
	struct pando_handover *h;
	int rc;

	*out = NULL;
	if (!opt->key || strlen(opt->key) >= sizeof(h->key) || !opt->name ||
	    strlen(opt->name) > NAME_MAX_LEN || !opt->stop)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->key, sizeof(h->key), "%s", opt->key);
	snprintf(h->name, sizeof(h->name), "%s", opt->name);
	h->term = opt->term;
	h->stop = opt->stop;
	h->log = opt->log;
	h->arg = opt->arg;
	rc = etcd_client_new(opt->etcd, &h->etcd);
	if (!rc)
		rc = pando_ticker_start(
			handover_tick, h,
			(uint32_t)(opt->poll_ms > 0 ? opt->poll_ms : POLL_MS_DEFAULT), &h->ticker);
	if (rc) {
		pando_handover_stop(h);
		return rc;
	}
	*out = h;
	return 0;
}

void pando_handover_stop(struct pando_handover *h)
{
	if (!h)
		return;
	pando_ticker_stop(h->ticker);
	etcd_client_free(h->etcd);
	free(h);
}
