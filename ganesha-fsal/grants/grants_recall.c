/* pando_grants: recalls, their deadlines and the fence (grants.h). */
#include "grants_internal.h"

#include <errno.h>
#include <string.h>

/* Under g->lock: marks the segments a recall covers; true if any. */
static bool mark_recalled(struct gfile *f, uint64_t except, bool writers_only, const char *client)
{
	bool any = false;

	for (struct pando_grant *s = f->segs; s; s = s->next) {
		if (s->fenced || (except && s->clientid == except) || (writers_only && !s->write))
			continue;
		if (client && strcmp(client, s->client) != 0)
			continue;
		s->recalled = true;
		any = true;
	}
	return any;
}

bool gfile_recall_pending(const struct gfile *f)
{
	for (const struct pando_grant *s = f->segs; s; s = s->next)
		if (s->recalled && !s->fenced)
			return true;
	return false;
}

/* Under g->lock: the file's recall starts, unless one runs; true if so.
 * The recall count moves, so that segments granted before it are stale. */
static bool start_recall(struct pando_grants *g, struct gfile *f)
{
	if (f->recalling)
		return false;
	f->recalling = true;
	f->deadline = g->ops.now(g->ops.arg) + g->timeout_s;
	f->recalls++;
	g->st.recalls++;
	return true;
}

int pando_grants_recall_file(struct pando_grants *g, uint64_t ino, uint64_t except,
			     bool writers_only, const char *why)
{
	struct pando_recall r = { .ino = ino,
				  .clientid = except,
				  .why = why,
				  .scope = except ? PANDO_RECALL_ALL_BUT : PANDO_RECALL_ALL };
	struct gfile *f;
	bool send = false;
	int rc = 0;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	if (f && mark_recalled(f, except, writers_only, NULL)) {
		send = start_recall(g, f);
		r.gen = f->gen;
		rc = -EBUSY;
	} else if (f && f->fence_due) {
		rc = -EBUSY; /* a revoked holder may write until the tick */
	}
	pthread_mutex_unlock(&g->lock);
	if (send)
		g->ops.recall(g->ops.arg, &r);
	return rc;
}

static bool returned_all(struct gfile *f)
{
	return !f || (!gfile_recall_pending(f) && !f->fence_due);
}

int pando_grants_recall_and_wait(struct pando_grants *g, uint64_t ino, uint64_t except,
				 bool writers_only, const char *why, uint32_t max_ms)
{
	int rc = pando_grants_recall_file(g, ino, except, writers_only, why);

	if (rc != -EBUSY)
		return rc;
	pthread_mutex_lock(&g->lock);
	rc = grants_wait(g, ino, returned_all, max_ms) ? -EBUSY : 0;
	pthread_mutex_unlock(&g->lock);
	return rc;
}

/* Under g->lock: the first holder a recall covers. */
static uint64_t first_recalled(const struct gfile *f)
{
	for (const struct pando_grant *s = f->segs; s; s = s->next)
		if (s->recalled && s->clientid)
			return s->clientid;
	return 0;
}

#define RECALL_CLIENT_MAX 64

int pando_grants_recall_client(struct pando_grants *g, const char *client, const char *why)
{
	struct pando_recall r[RECALL_CLIENT_MAX];
	int n = 0;

	pthread_mutex_lock(&g->lock);
	for (int b = 0; b < GRANTS_BUCKETS && n < RECALL_CLIENT_MAX; b++) {
		for (struct gfile *f = g->bucket[b]; f && n < RECALL_CLIENT_MAX; f = f->next) {
			if (!mark_recalled(f, 0, false, *client ? client : NULL))
				continue;
			start_recall(g, f);
			r[n] = (struct pando_recall){ .ino = f->ino,
						      .gen = f->gen,
						      .clientid = first_recalled(f),
						      .scope = *client ? PANDO_RECALL_ONLY
								       : PANDO_RECALL_ALL,
						      .client = client,
						      .why = why };
			n++;
		}
	}
	pthread_mutex_unlock(&g->lock);
	for (int i = 0; i < n; i++)
		g->ops.recall(g->ops.arg, &r[i]);
	return n;
}

void pando_grants_recall_osd(struct pando_grants *g, uint32_t osd_id, const char *why)
{
	uint64_t inos[256];
	int n = 0;

	pthread_mutex_lock(&g->lock);
	for (int b = 0; b < GRANTS_BUCKETS && n < 256; b++)
		for (struct gfile *f = g->bucket[b]; f && n < 256; f = f->next)
			if (f->segs)
				inos[n++] = f->ino;
	pthread_mutex_unlock(&g->lock);
	for (int i = 0; i < n; i++)
		if (g->ops.uses_osd(g->ops.arg, inos[i], osd_id))
			pando_grants_recall_file(g, inos[i], 0, false, why);
}

/* Revokes the handles of every recalled segment of the file still out:
 * a new capability version on each component object. */
static void fence(struct pando_grants *g, uint64_t ino, uint32_t cur)
{
	uint32_t next, failed;
	struct gfile *f;

	if (g->ops.fence(g->ops.arg, ino, cur, &next, &failed) != 0)
		return;
	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	if (f) {
		f->cap_version = next;
		for (struct pando_grant *s = f->segs; s; s = s->next) {
			if (!s->recalled || s->fenced)
				continue;
			s->fenced = true;
			g->st.fenced++;
			grants_log(g, PANDO_GRANTS_WARN,
				   "pando: %s did not return its layout of inode %" PRIu64
				   " in time: fenced (capability version %u%s)",
				   s->client, ino, next, failed ? ", some OSDs unreachable" : "");
		}
		if (f->fence_due) {
			g->st.fenced += f->fence_due;
			grants_log(g, PANDO_GRANTS_WARN,
				   "pando: %u revoked layout(s) of inode %" PRIu64 " fenced "
				   "(capability version %u%s)",
				   f->fence_due, ino, next,
				   failed ? ", some OSDs unreachable" : "");
			f->fence_due = 0;
		}
		f->recalling = false;
		gfile_put(g, f);
	}
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/* Under g->lock: finished recalls end; overdue ones are collected. */
static int overdue(struct pando_grants *g, uint64_t *inos, uint32_t *vers, int max)
{
	uint64_t now = g->ops.now(g->ops.arg);
	int n = 0;

	for (int b = 0; b < GRANTS_BUCKETS; b++) {
		for (struct gfile *f = g->bucket[b], *next; f; f = next) {
			next = f->next;
			if (!f->recalling)
				continue;
			if (!gfile_recall_pending(f) && !f->fence_due) {
				f->recalling = false;
				gfile_put(g, f);
			} else if (now >= f->deadline && n < max) {
				inos[n] = f->ino;
				vers[n++] = f->cap_version;
			}
		}
	}
	return n;
}

void pando_grants_tick(struct pando_grants *g)
{
	uint64_t inos[64];
	uint32_t vers[64];
	int n;

	pthread_mutex_lock(&g->lock);
	n = overdue(g, inos, vers, 64);
	pthread_mutex_unlock(&g->lock);
	for (int i = 0; i < n; i++)
		fence(g, inos[i], vers[i]);
}
