/* The reaper: one thread per engine that finishes the object removals the
 * namespace owes (removal intents, ns_store.h).  Unlink, truncate to zero
 * and replaced maps only record an intent in their own batch, so they
 * never wait for the OSDs; the reaper removes the objects afterwards and
 * drops the intent.  Intents left by a crash are found at start.  An
 * intent whose OSD is unreachable stays and is retried later. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objio.h"
#include "ticker.h"

#define REAPER_BATCH 256
#define REAPER_RETRY_MS 5000

struct pando_reaper {
	struct pando_mds *mds;
	struct pando_ticker *ticker;
	_Atomic uint64_t removed;
	_Atomic uint64_t failed;
};

struct pending {
	uint64_t id;
	uint64_t ino;
	uint8_t *blob;
	size_t len;
};

struct batch {
	struct pending item[REAPER_BATCH];
	int n;
};

static int collect(void *arg, const struct ns_intent *in)
{
	struct batch *b = arg;
	struct pending *p = &b->item[b->n];

	p->blob = malloc(in->len ? in->len : 1);
	if (!p->blob)
		return 1;
	memcpy(p->blob, in->blob, in->len);
	p->id = in->id;
	p->ino = in->ino;
	p->len = in->len;
	return ++b->n == REAPER_BATCH;
}

/* 0 when the objects are gone (or were never made). */
static int reap_one(struct pando_reaper *r, const struct pending *p)
{
	struct objio io = { .conns = r->mds->conns, .owner = p->ino };
	struct pando_storage_map *map;
	int rc = pando_map_decode(p->blob, p->len, &map);

	if (rc) {
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: intent %" PRIu64 " names no decodable map; dropped", p->id);
		return 0;
	}
	rc = objio_remove(&io, map);
	pando_map_free(map);
	return rc;
}

/* One pass over every intent; true if any must be retried. */
static bool reap_all(void *arg)
{
	struct pando_reaper *r = arg;
	uint64_t after = 0;
	bool retry = false;
	struct batch *b = calloc(1, sizeof(*b));

	if (!b)
		return true;
	for (;;) {
		int rc;

		b->n = 0;
		rc = ns_intent_list(r->mds->ns, after, collect, b);
		for (int i = 0; i < b->n; i++) {
			struct pending *p = &b->item[i];

			after = p->id;
			if (!pando_intent_orphaned(r->mds, p->ino, p->id)) {
				retry = true;
			} else if (reap_one(r, p) == 0) {
				ns_intent_done(r->mds->ns, p->id);
				r->removed++;
			} else {
				r->failed++;
				retry = true;
			}
			free(p->blob);
		}
		if (rc || b->n < REAPER_BATCH)
			break;
	}
	free(b);
	return retry;
}

int pando_reaper_start(struct pando_mds *mds, struct pando_reaper **out)
{
	struct pando_reaper *r = mds_calloc(1, sizeof(*r));
	int rc;

	r->mds = mds;
	/* At once (intents a crash left), when kicked, and every few
	 * seconds while some must be retried. */
	rc = pando_ticker_start(reap_all, r, REAPER_RETRY_MS, &r->ticker);
	if (rc) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void pando_reaper_kick(struct pando_reaper *r)
{
	if (r)
		pando_ticker_kick(r->ticker);
}

void pando_reaper_stop(struct pando_reaper *r)
{
	if (!r)
		return;
	pando_ticker_stop(r->ticker);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: reaper stopped (%" PRIu64 " removals done, %" PRIu64 " retried)",
		atomic_load(&r->removed), atomic_load(&r->failed));
	free(r);
}

void pando_reaper_stats(struct pando_reaper *r, uint64_t *removed, uint64_t *failed)
{
	*removed = atomic_load(&r->removed);
	*failed = atomic_load(&r->failed);
}
