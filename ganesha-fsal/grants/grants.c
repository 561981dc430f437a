/* pando_grants: the file table, granting, returning and committing
 * (grants.h).  Recalls and fences are in grants_recall.c, freezes and
 * gateway writers in grants_freeze.c. */
#include "grants_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct gfile **slot(struct pando_grants *g, uint64_t ino)
{
	struct gfile **p = &g->bucket[ino % GRANTS_BUCKETS];

	while (*p && (*p)->ino != ino)
		p = &(*p)->next;
	return p;
}

struct gfile *gfile_get(struct pando_grants *g, uint64_t ino, bool create)
{
	struct gfile **p = slot(g, ino);

	if (!*p && create) {
		*p = calloc(1, sizeof(**p));
		if (!*p)
			return NULL;
		(*p)->ino = ino;
		g->st.files++;
	}
	return *p;
}

void gfile_put(struct pando_grants *g, struct gfile *f)
{
	struct gfile **p;

	if (f->segs || f->recalling || f->wrecorded || f->marking || f->unsettled || f->watched ||
	    f->gw_writers || f->frozen || f->revoking)
		return;
	p = slot(g, f->ino);
	*p = f->next;
	free(f);
	g->st.files--;
}

bool gfile_has_writers(const struct gfile *f)
{
	for (const struct pando_grant *s = f->segs; s; s = s->next)
		if (s->write)
			return true;
	return false;
}

void grants_log(struct pando_grants *g, enum pando_grants_level level, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!g->ops.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	g->ops.log(g->ops.arg, level, msg);
}

int grants_wait(struct pando_grants *g, uint64_t ino, bool (*done)(struct gfile *f),
		uint32_t max_ms)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += max_ms / 1000;
	until.tv_nsec += (long)(max_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while (!done(gfile_get(g, ino, false)) && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&g->cond, &g->lock, &until);
	return done(gfile_get(g, ino, false)) ? 0 : -ETIMEDOUT;
}

/* Under g->lock, which it drops while the record is written.  While a
 * record is being written the file's entry stays and no record is
 * deleted: another writer's end must not delete this one's record. */
static int record_writer(struct pando_grants *g, struct gfile *f)
{
	int rc;

	if (f->wrecorded)
		return 0;
	f->marking++;
	pthread_mutex_unlock(&g->lock);
	rc = g->ops.mark_writer(g->ops.arg, f->ino);
	pthread_mutex_lock(&g->lock);
	f->marking--;
	if (rc) {
		grants_log(g, PANDO_GRANTS_MAJOR,
			   "pando: inode %" PRIu64 ": write layout not recorded (%d)", f->ino, rc);
		return rc;
	}
	f->wrecorded = true;
	return 0;
}

void gfile_forget_writer(struct pando_grants *g, struct gfile *f)
{
	int rc;

	if (!f->wrecorded || f->marking || f->keep_record || f->unsettled || gfile_has_writers(f))
		return;
	rc = g->ops.unmark_writer(g->ops.arg, f->ino);
	if (rc)
		grants_log(g, PANDO_GRANTS_INFO,
			   "pando: inode %" PRIu64
			   ": write-layout record left (%d): settled at next start",
			   f->ino, rc);
	f->wrecorded = false;
}

/* Under g->lock: no grant while the file is recalled or frozen, and no
 * write grant while writers are being revoked (a write handle minted
 * meanwhile could carry the version the revocation leaves behind). */
static bool refuses(const struct gfile *f, bool write)
{
	return f->recalling || f->frozen || (write && f->revoking);
}

/* Under g->lock: the file's record, ready for a new segment, or NULL
 * with *rc set (the file is recalled or frozen, or its record failed). */
static struct gfile *grantable(struct pando_grants *g, const struct pando_grant_ask *ask, int *rc)
{
	struct gfile *f = gfile_get(g, ask->ino, true);

	if (!f) {
		*rc = -ENOMEM;
		return NULL;
	}
	f->wanted |= f->frozen > 0;
	*rc = refuses(f, ask->write) ? -EAGAIN : 0;
	if (!*rc && ask->write)
		*rc = record_writer(g, f);
	if (!*rc && refuses(f, ask->write))
		*rc = -EAGAIN; /* a recall began while the record was written */
	if (*rc) {
		gfile_forget_writer(g, f);
		gfile_put(g, f);
		return NULL;
	}
	return f;
}

int pando_grants_grant(struct pando_grants *g, const struct pando_grant_ask *ask,
		       struct pando_grant **out)
{
	struct pando_grant *seg = calloc(1, sizeof(*seg));
	struct gfile *f;
	int rc;

	if (!seg)
		return -ENOMEM;
	pthread_mutex_lock(&g->lock);
	f = grantable(g, ask, &rc);
	if (!f) {
		pthread_mutex_unlock(&g->lock);
		free(seg);
		return rc;
	}
	seg->owner = g;
	seg->ino = ask->ino;
	seg->clientid = ask->clientid;
	snprintf(seg->client, sizeof(seg->client), "%s", ask->client ? ask->client : "");
	seg->write = ask->write;
	seg->cap_version = ask->cap_version;
	seg->recalls = f->recalls;
	seg->commits_at_grant = f->commits;
	f->writes += ask->write;
	f->gen = ask->gen;
	if (!f->cap_version)
		f->cap_version = ask->cap_version;
	seg->next = f->segs;
	f->segs = seg;
	g->st.segments++;
	g->st.granted++;
	pthread_mutex_unlock(&g->lock);
	*out = seg;
	return 0;
}

static void unlink_seg(struct pando_grants *g, struct pando_grant *seg)
{
	struct gfile *f = gfile_get(g, seg->ino, false);
	struct pando_grant **p;

	if (!f)
		return;
	for (p = &f->segs; *p; p = &(*p)->next) {
		if (*p == seg) {
			*p = seg->next;
			g->st.segments--;
			break;
		}
	}
	/* The last recalled segment back ends the recall at once, so that
	 * the next grant need not wait for the tick; a revoked one's fence
	 * still has to come first. */
	if (f->recalling && !gfile_recall_pending(f) && !f->fence_due)
		f->recalling = false;
	gfile_forget_writer(g, f);
	gfile_put(g, f);
}

void pando_grants_ungrant(struct pando_grants *g, struct pando_grant *seg)
{
	pthread_mutex_lock(&g->lock);
	unlink_seg(g, seg);
	g->st.granted--;
	pthread_mutex_unlock(&g->lock);
	free(seg);
}

void pando_grants_committed(struct pando_grants *g, uint64_t ino)
{
	struct gfile *f;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	if (f)
		f->commits++;
	pthread_mutex_unlock(&g->lock);
}

/* Under g->lock: a write segment, neither fenced nor from before a
 * recall, that saw no LAYOUTCOMMIT of its file: what it wrote may lie
 * past the size the manager knows. */
static bool ends_uncommitted(const struct gfile *f, const struct pando_grant *seg)
{
	return seg->write && !seg->fenced && f && f->recalls == seg->recalls &&
	       f->commits == seg->commits_at_grant;
}

/* Under g->lock: the tick fences the file at once. */
static void fence_at_next_tick(struct gfile *f)
{
	f->fence_due++;
	f->recalling = true;
	f->deadline = 0;
}

/* Under g->lock: a write segment whose handles still work, as far as
 * the grants know (no fence or revocation since they were minted). */
static bool writes_live(const struct gfile *f, const struct pando_grant *s)
{
	return s->write && !s->fenced && s->cap_version >= f->cap_version;
}

/* Under g->lock: seg is its holder's last write segment of the file
 * whose handles still work.  A segment whose handles were revoked
 * already (its holder returns it because the OSDs refused them) revokes
 * nothing: two writers of one file would otherwise take turns revoking
 * each other's new handles. */
static bool last_write_of_holder(const struct gfile *f, const struct pando_grant *seg)
{
	if (!writes_live(f, seg))
		return false;
	for (const struct pando_grant *s = f->segs; s; s = s->next)
		if (s != seg && s->clientid == seg->clientid && writes_live(f, s))
			return false;
	return true;
}

/* Under g->lock: another holder writes the file with live handles. */
static bool others_write(const struct gfile *f, const struct pando_grant *seg)
{
	for (const struct pando_grant *s = f->segs; s; s = s->next)
		if (s->clientid != seg->clientid && writes_live(f, s))
			return true;
	return false;
}

/* Under g->lock: the return of seg revokes its holder's write handles.
 * Handles carry the file's version, not the holder's, so a revocation
 * takes every writer's.  While others write, a holder that gives its
 * segment back unasked keeps its handles until the last writer's return
 * (or a recall, or a fence) takes them all; a recalled one loses them
 * at once, since its recall must see nothing of it land afterwards. */
static bool return_revokes(const struct gfile *f, const struct pando_grant *seg)
{
	return last_write_of_holder(f, seg) && (seg->recalled || !others_write(f, seg));
}

/* Under g->lock, which it drops while the OSDs are asked; seg stays in
 * the file's list meanwhile, so a recall waiting for it waits for this
 * too.  A revocation that did not reach every component becomes a fence
 * at the next tick. */
static void revoke_writers(struct pando_grants *g, struct gfile *f, struct pando_grant *seg)
{
	uint64_t ino = f->ino;
	uint32_t cur = f->cap_version, next = 0;
	int rc;

	f->revoking++;
	pthread_mutex_unlock(&g->lock);
	rc = g->ops.revoke_writers(g->ops.arg, ino, cur, &next);
	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false); /* kept by seg */
	f->revoking--;
	if (rc) {
		grants_log(g, PANDO_GRANTS_WARN,
			   "pando: inode %" PRIu64 ": %s returned its write layout but its write "
			   "handles could not be revoked (%d): fencing the file",
			   ino, seg->client, rc);
		fence_at_next_tick(f);
	} else if (next > f->cap_version) {
		f->cap_version = next;
	}
}

static void returned(struct pando_grants *g, struct pando_grant *seg, bool revoke)
{
	uint64_t ino = seg->ino;
	struct gfile *f;
	bool settle;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	if (f && revoke && return_revokes(f, seg))
		revoke_writers(g, f, seg);
	f = gfile_get(g, ino, false);
	settle = ends_uncommitted(f, seg);
	if (settle)
		f->unsettled++; /* keeps the record until the check is done */
	unlink_seg(g, seg);
	g->st.returned++;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	free(seg);
	if (settle)
		g->ops.settle(g->ops.arg, ino);
}

void pando_grant_end(struct pando_grant *seg)
{
	if (seg->owner)
		returned(seg->owner, seg, true);
	else
		free(seg);
}

/* No revocation of its write handles: the fence at the next tick takes
 * every handle of the file. */
void pando_grant_revoked(struct pando_grant *seg)
{
	struct pando_grants *g = seg->owner;
	struct gfile *f;

	if (!g) {
		free(seg);
		return;
	}
	if (seg->write && !seg->fenced) {
		pthread_mutex_lock(&g->lock);
		f = gfile_get(g, seg->ino, false);
		if (f)
			fence_at_next_tick(f);
		pthread_mutex_unlock(&g->lock);
	}
	returned(g, seg, false);
}

void pando_grants_settled(struct pando_grants *g, uint64_t ino, bool ok)
{
	struct gfile *f;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	if (f) {
		if (f->unsettled)
			f->unsettled--;
		f->keep_record |= !ok;
		gfile_forget_writer(g, f);
		gfile_put(g, f);
	}
	pthread_mutex_unlock(&g->lock);
}

bool pando_grants_stale(struct pando_grants *g, const struct pando_grant *seg)
{
	struct gfile *f;
	bool stale;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, seg->ino, false);
	stale = seg->fenced || (f && f->recalls != seg->recalls);
	pthread_mutex_unlock(&g->lock);
	return stale;
}

uint32_t pando_grants_cap_version(struct pando_grants *g, uint64_t ino)
{
	struct gfile *f;
	uint32_t v;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, false);
	v = f ? f->cap_version : 0;
	pthread_mutex_unlock(&g->lock);
	return v;
}

int pando_grants_set_cap_version(struct pando_grants *g, uint64_t ino, uint32_t ver,
				 uint32_t *stands)
{
	struct gfile *f;

	pthread_mutex_lock(&g->lock);
	f = gfile_get(g, ino, true);
	if (!f) {
		pthread_mutex_unlock(&g->lock);
		return -ENOMEM;
	}
	if (!f->cap_version)
		f->cap_version = ver;
	*stands = f->cap_version;
	gfile_put(g, f);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void pando_grants_count_io_error(struct pando_grants *g)
{
	pthread_mutex_lock(&g->lock);
	g->st.io_errors++;
	pthread_mutex_unlock(&g->lock);
}

void pando_grants_stats(struct pando_grants *g, struct pando_layout_stats *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->st;
	pthread_mutex_unlock(&g->lock);
}

/* Adds id to the small set ids[*n]; true if it did not fit. */
static bool add_holder(uint64_t *ids, size_t *n, size_t cap, uint64_t id)
{
	for (size_t i = 0; i < *n; i++)
		if (ids[i] == id)
			return false;
	if (*n == cap)
		return true;
	ids[(*n)++] = id;
	return false;
}

uint64_t pando_grants_holders(struct pando_grants *g)
{
	uint64_t ids[256];
	size_t n = 0;
	bool more = false;

	pthread_mutex_lock(&g->lock);
	for (int b = 0; b < GRANTS_BUCKETS; b++)
		for (struct gfile *f = g->bucket[b]; f; f = f->next)
			for (struct pando_grant *s = f->segs; s; s = s->next)
				more |= add_holder(ids, &n, 256, s->clientid);
	pthread_mutex_unlock(&g->lock);
	return n + (more ? 1 : 0);
}

int pando_grants_new(const struct pando_grants_ops *ops, uint32_t recall_timeout_s,
		     struct pando_grants **out)
{
	struct pando_grants *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;
	int rc;

	if (!g)
		return -ENOMEM;
	g->ops = *ops;
	g->timeout_s = recall_timeout_s;
	pthread_mutex_init(&g->lock, NULL);
	/* Waits are timed on the monotonic clock: a clock step must not
	 * stretch a freeze or a recall wait. */
	rc = pthread_condattr_init(&ca);
	if (!rc) {
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		rc = pthread_cond_init(&g->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (rc) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return -rc;
	}
	*out = g;
	return 0;
}

void pando_grants_free(struct pando_grants *g)
{
	if (!g)
		return;
	for (int b = 0; b < GRANTS_BUCKETS; b++) {
		for (struct gfile *f = g->bucket[b], *next; f; f = next) {
			next = f->next;
			/* Their holders still keep the segments and end
			 * them later (pando_grant_end). */
			for (struct pando_grant *s = f->segs; s; s = s->next)
				s->owner = NULL;
			free(f);
		}
	}
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
}
