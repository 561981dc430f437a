/* pando_grants: gateway writers, write watches and freezes (grants.h):
 * rebuild, scrub and transcoding hold a file still while they copy it. */
#include "grants_internal.h"

#include <errno.h>
#include <stddef.h>

/* A freeze waits this long past the recall timeout for the fence. */
#define FREEZE_MARGIN_MS 5000

int pando_grants_write_begin(struct pando_grants *g, uint64_t ino)
{
	struct gfile *f;
	int rc = 0;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, true);
	if (!f) {
		rc = -ENOMEM;
	} else if (f->frozen) {
		rc = -EBUSY;
		f->wanted = true;
	} else {
		f->gw_writers++;
		f->writes++;
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

/* Ends one hold on the file: a gateway write, a watch or a freeze (the
 * counter at that offset of its record); waiters look again. */
static void unhold(struct pando_grants *g, uint64_t ino, size_t counter)
{
	struct gfile *f;
	uint32_t *n;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	n = f ? (uint32_t *)((char *)f + counter) : NULL;
	if (n && *n) {
		(*n)--;
		pthread_cond_broadcast(&g->cond);
		gfile_put(g, f);
	}
	pthread_mutex_unlock(&g->lock);
}

void pando_grants_write_end(struct pando_grants *g, uint64_t ino)
{
	unhold(g, ino, offsetof(struct gfile, gw_writers));
}

uint64_t pando_grants_watch(struct pando_grants *g, uint64_t ino)
{
	struct gfile *f;
	uint64_t mark = UINT64_MAX;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, true);
	if (f) {
		f->watched++;
		/* A writer already at work may write at any moment: dirty at once. */
		if (!gfile_has_writers(f) && !f->gw_writers)
			mark = f->writes;
	}
	pthread_mutex_unlock(&g->lock);
	return mark;
}

bool pando_grants_written_since(struct pando_grants *g, uint64_t ino, uint64_t mark)
{
	struct gfile *f;
	bool written;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	written = mark == UINT64_MAX || !f || f->writes != mark;
	pthread_mutex_unlock(&g->lock);
	return written;
}

void pando_grants_unwatch(struct pando_grants *g, uint64_t ino)
{
	unhold(g, ino, offsetof(struct gfile, watched));
}

/* No write segment left unfenced and no gateway write. */
static bool quiet(struct gfile *f)
{
	if (!f)
		return true;
	for (const struct pando_grant *s = f->segs; s; s = s->next)
		if (s->write && !s->fenced)
			return false;
	return f->gw_writers == 0;
}

int pando_grants_freeze(struct pando_grants *g, uint64_t ino, const char *why)
{
	struct gfile *f;
	int rc;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, true);
	if (!f) {
		pthread_mutex_unlock(&g->lock);
		return -ENOMEM;
	}
	if (!f->frozen++)
		f->wanted = false;
	pthread_mutex_unlock(&g->lock);
	pando_grants_recall_file(g, ino, 0, true, why);
	/* Holders get the recall timeout, then the tick fences them. */
	pthread_mutex_lock(&g->lock);
	rc = grants_wait(g, ino, quiet, g->timeout_s * 1000 + FREEZE_MARGIN_MS);
	pthread_mutex_unlock(&g->lock);
	if (rc)
		pando_grants_thaw(g, ino);
	return rc;
}

void pando_grants_thaw(struct pando_grants *g, uint64_t ino)
{
	unhold(g, ino, offsetof(struct gfile, frozen));
}

bool pando_grants_wanted(struct pando_grants *g, uint64_t ino)
{
	struct gfile *f;
	bool wanted;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	wanted = f && f->wanted;
	pthread_mutex_unlock(&g->lock);
	return wanted;
}

bool pando_grants_busy(struct pando_grants *g, uint64_t ino)
{
	struct gfile *f;
	bool busy;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	busy = f && (gfile_has_writers(f) || f->gw_writers || f->recalling);
	pthread_mutex_unlock(&g->lock);
	return busy;
}
