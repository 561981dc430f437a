/* A pool of objects made ahead of need, so an empty file can move to
 * objects without waiting on the OSDs: a stock pNFS client asks for a
 * write layout inside the OPEN that creates a file, and without the pool
 * every such create would pay object creation on two OSDs and two more
 * syncs of the store.
 *
 * Each pool entry is one future file's storage map, placed and encoded,
 * its objects created on the OSDs, and named by a removal intent of inode
 * 0 (durable): if the manager stops, the reaper removes them at the next
 * start.  Taking an entry is one unsynced batch (ns_map_claim_empty): the
 * map goes to the file and the intent goes, together.  An entry stays the
 * pool's (the reaper leaves it) from take until the claim is done.  The
 * objects were made for no file (owner 0); the thread then stamps the
 * claiming file's id into their owner attribute, as a move does at
 * creation, for pando-fsck and admins.  A thread keeps the
 * pool filled (Object_Pool entries, refilled when a quarter is left). */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objio.h"
#include "view.h"

#define POOL_MAX 32
#define POOL_RETRY_S 5

struct pool_entry {
	uint8_t *blob;
	size_t len;
	uint64_t intent;
	uint64_t epoch; /* of the cluster map it was placed under */
	bool claiming;  /* taken, claim not finished: still the pool's */
};

/* Claimed maps whose objects still carry owner 0. */
struct stamp {
	uint64_t ino;
	uint8_t *blob;
	size_t len;
	struct stamp *next;
};

struct pando_object_pool {
	struct pando_mds *mds;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	int high; /* refilled up to this */
	int low;  /* refilled from below this */
	int n;
	struct pool_entry e[POOL_MAX];
	struct stamp *stamps;
	/* An entry being made: its intent exists before it joins e[]. */
	bool making;
	uint64_t making_intent; /* 0 until known */
	uint64_t next_seed;
	uint64_t taken;
	uint64_t made;
};

/* One entry: map, intent, objects.  The pool lock is not held. */
static int make_entry(struct pando_object_pool *p, struct pool_entry *out)
{
	struct pando_mds *mds = p->mds;
	struct objio io = { .conns = mds->conns, .owner = 0 };
	struct pando_storage_map *map = NULL;
	int rc;

	out->epoch = pando_view_get(mds)->map.epoch;
	rc = pando_map_new_placed(mds, p->next_seed++, &map);

	if (!rc)
		rc = pando_map_blob(map, &out->blob, &out->len);
	if (!rc) {
		rc = ns_intent_add(mds->ns, 0, out->blob, out->len, &out->intent);
		if (!rc) {
			pthread_mutex_lock(&p->lock);
			p->making_intent = out->intent;
			pthread_mutex_unlock(&p->lock);
			rc = objio_create(&io, map);
		}
		/* A failed create leaves its intent to the reaper. */
		if (rc)
			free(out->blob);
	}
	pando_map_free(map);
	return rc;
}

/* Owner attribute (page 1, number 5) of every component := the file. */
static void stamp_owner(struct pando_object_pool *p, const struct stamp *s)
{
	struct osd_ctl_attr owner = { .page = 1, .number = 5, .len = 8 };
	struct pando_storage_map *map;

	if (pando_map_decode(s->blob, s->len, &map) != 0)
		return;
	for (int i = 0; i < 8; i++)
		owner.value[i] = (uint8_t)(s->ino >> (56 - 8 * i));
	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++) {
		struct osd_ctl_obj_id id = { map->partition_id, map->comp[c].object_id };
		uint32_t osd = map->comp[c].osd_id;
		int rc;
		struct osd_ctl_client *cl = osd_conns_get(p->mds->conns, osd, &rc);

		if (!cl)
			continue;
		rc = osd_ctl_setattr(cl, &id, &owner, 1, NULL);
		osd_conns_result(p->mds->conns, osd, rc);
	}
	pando_map_free(map);
}

/* Under p->lock, dropped while it talks to the OSDs. */
static void stamp_all(struct pando_object_pool *p)
{
	while (p->stamps) {
		struct stamp *s = p->stamps;

		p->stamps = s->next;
		pthread_mutex_unlock(&p->lock);
		stamp_owner(p, s);
		free(s->blob);
		free(s);
		pthread_mutex_lock(&p->lock);
	}
}

static void *pool_main(void *arg)
{
	struct pando_object_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec until;
		bool failed = false;

		stamp_all(p);
		while (!p->stop && !failed && p->n < p->high) {
			struct pool_entry e;

			p->making = true;
			p->making_intent = 0;
			pthread_mutex_unlock(&p->lock);
			failed = make_entry(p, &e) != 0;
			pthread_mutex_lock(&p->lock);
			if (!failed) {
				e.claiming = false;
				p->e[p->n++] = e;
				p->made++;
			}
			p->making = false;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += POOL_RETRY_S;
		if (!p->stop)
			pthread_cond_timedwait(&p->cond, &p->lock, &until);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int pando_object_pool_start(struct pando_mds *mds, uint32_t size, struct pando_object_pool **out)
{
	struct pando_object_pool *p = mds_calloc(1, sizeof(*p));
	int rc;

	p->mds = mds;
	p->high = (int)(size < POOL_MAX ? size : POOL_MAX);
	p->low = p->high / 4 + 1;
	/* Seeds apart from inode ids, which seed the maps of moves. */
	p->next_seed = 1ull << 63;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* Visible before the thread makes anything, for the reaper. */
	*out = p;
	rc = pthread_create(&p->thread, NULL, pool_main, p);
	if (rc) {
		*out = NULL;
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -rc;
	}
	return 0;
}

/* Whether every component of the entry is on an OSD that takes new
 * components in the map applied now (placed under it: yes). */
static bool entry_usable(struct pando_object_pool *p, const struct pool_entry *e)
{
	const struct pando_view *v = pando_view_get(p->mds);
	struct pando_storage_map *map;
	bool ok = true;

	if (e->epoch == v->map.epoch)
		return true;
	if (pando_map_decode(e->blob, e->len, &map) != 0)
		return false;
	for (uint32_t c = 0; ok && c < pando_map_width(map) * map->groups; c++)
		ok = pando_view_takes(v, map->comp[c].osd_id);
	pando_map_free(map);
	return ok;
}

/* An entry's map and intent for the caller to claim, then to hand to
 * pando_object_pool_done; false when none is free.  Entries naming an OSD the
 * map took out (or down) leave the pool: their intents stay, so the
 * reaper removes their objects. */
bool pando_object_pool_take(struct pando_object_pool *p, const uint8_t **blob, size_t *len,
			    uint64_t *intent)
{
	bool got = false, dropped = false;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->n && !got; i++) {
		struct pool_entry *e = &p->e[i];

		if (e->claiming)
			continue;
		if (!entry_usable(p, e)) {
			dropped = true;
			free(e->blob);
			p->e[i--] = p->e[--p->n];
			pthread_cond_signal(&p->cond);
			continue;
		}
		e->claiming = true;
		*blob = e->blob;
		*len = e->len;
		*intent = e->intent;
		got = true;
	}
	pthread_mutex_unlock(&p->lock);
	if (dropped)
		pando_reaper_kick(p->mds->reaper);
	return got;
}

/* After the claim: claimed by file ino, the entry leaves the pool (its
 * objects to be stamped with their owner); otherwise it is free again
 * for the next taker. */
void pando_object_pool_done(struct pando_object_pool *p, uint64_t intent, uint64_t ino,
			    bool claimed)
{
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->n; i++) {
		if (p->e[i].intent != intent)
			continue;
		if (claimed) {
			struct stamp *s = mds_calloc(1, sizeof(*s));

			s->ino = ino;
			s->blob = p->e[i].blob;
			s->len = p->e[i].len;
			s->next = p->stamps;
			p->stamps = s;
			p->e[i] = p->e[--p->n];
			p->taken++;
			pthread_cond_signal(&p->cond);
		} else {
			p->e[i].claiming = false;
		}
		break;
	}
	if (p->n < p->low)
		pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Whether intent id names objects waiting in the pool (not the reaper's). */
bool pando_object_pool_owns(struct pando_object_pool *p, uint64_t id)
{
	bool owns = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	/* The entry being made may be this one (its intent not known yet). */
	owns = p->making && (p->making_intent == 0 || p->making_intent == id);
	for (int i = 0; i < p->n && !owns; i++)
		owns = p->e[i].intent == id;
	pthread_mutex_unlock(&p->lock);
	return owns;
}

/* What is left in the pool stays in its intents: the next start's reaper
 * removes the objects. */
void pando_object_pool_stop(struct pando_object_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	for (struct stamp *s = p->stamps, *next; s; s = next) {
		next = s->next;
		free(s->blob);
		free(s);
	}
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: object pool stopped (%" PRIu64 " made, %" PRIu64
		" taken, %d left to the reaper)",
		p->made, p->taken, p->n);
	for (int i = 0; i < p->n; i++)
		free(p->e[i].blob);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
