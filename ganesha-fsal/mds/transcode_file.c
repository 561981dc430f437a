/* One file from its mirrored map to RS(k,m) (README.md, "Transcoding"):
 * new RS objects named by a durable intent, the bytes copied while the
 * file stays in use, then the writers frozen (layouts recalled, gateway
 * writes held), the copy redone if the file was written or resized
 * meanwhile, and the map switched in one batch that claims the new
 * objects and records the mirrors for the reaper.  No client is ever
 * handed a half-written map: the new one is live only after the switch,
 * and every layout of the old one is recalled. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grants.h"
#include "objio.h"
#include "pando/placement.h"
#include "pando/policy.h"
#include "transcode.h"

struct job {
	struct pando_mds *mds;
	uint64_t ino;
	struct objio io;  /* the old map's: its stale components skipped */
	struct objio wio; /* the new map's: every component, any failure fatal */
	struct pando_storage_map *old, *next;
	uint8_t *old_blob, *next_blob;
	size_t old_len, next_len;
	uint64_t size;
	char pool[CLUSTER_MAP_POOL_MAX]; /* the policy's: the RS map stays in it */
	uint64_t intent;                 /* of the new objects; 0: none (yet) */
	bool inflight;
	void *buf;
	size_t cap;
	uint64_t copied;
};

/* Whether the file is one to transcode, and the RS request for it:
 * mirrored (or striped) now, a cold rule, at least one whole row. */
static bool wanted(struct job *j, struct pando_layout_request *req)
{
	struct pando_policy p;
	struct ns_attr a;
	uint32_t su;

	if (j->old->shape.raid == PANDO_RS || !pando_file_policy(j->mds, j->ino, &p) ||
	    !p.cold_after_s || ns_getattr(j->mds->ns, j->ino, &a) != 0)
		return false;
	su = p.stripe_unit ? p.stripe_unit : j->mds->cfg.stripe_unit;
	*req = (struct pando_layout_request){ .raid = PANDO_RS,
					      .copies = 1,
					      .data = p.cold_k,
					      .parity = p.cold_m,
					      .stripe_unit = su,
					      .max_groups = 1 };
	j->size = a.size;
	snprintf(j->pool, sizeof(j->pool), "%s", p.pool);
	/* Smaller than a row, RS costs more than the mirror (PanFS keeps
	 * small files mirrored too). */
	return a.size >= (uint64_t)(p.cold_k ? p.cold_k : 8) * su;
}

/* The new objects: placed, named by an intent, made with the file's
 * capability version. */
static int make_next(struct job *j, struct pando_layout_request *req)
{
	uint32_t ver = OBJIO_CAP_VERSION_NEW, width;
	int rc = pando_map_place(j->mds, j->ino, j->pool, req, &j->next);

	if (!rc)
		rc = pando_map_blob(j->next, &j->next_blob, &j->next_len);
	if (rc)
		return rc;
	pando_inflight_add(j->mds, j->ino);
	j->inflight = true;
	rc = ns_intent_add(j->mds->ns, j->ino, j->next_blob, j->next_len, &j->intent);
	if (rc)
		return rc;
	pando_inflight_intent(j->mds, j->ino, j->intent);
	rc = pando_objects_cap_version(j->mds, j->old, &ver);
	width = pando_map_width(j->next);
	for (uint32_t i = 0; !rc && i < width * j->next->groups; i++)
		rc = objio_component_create(&j->wio, j->next->partition_id, &j->next->comp[i], i,
					    ver);
	return rc;
}

/* The file's bytes from the old map to the new, whole rows at a time (no
 * read-modify-write), then made durable. */
static int copy(struct job *j)
{
	uint64_t row = (uint64_t)j->next->shape.data * j->next->shape.stripe_unit;
	size_t step = j->cap / row * row;
	int rc = step ? 0 : -EINVAL;

	for (uint64_t off = 0; !rc && off < j->size; off += step) {
		size_t n = 0;

		rc = objio_read(&j->io, j->old, j->size, off, j->buf, step, &n);
		if (!rc && n < step && off + n < j->size)
			rc = -EIO;
		if (!rc)
			rc = objio_write(&j->wio, j->next, off, j->buf, n, false);
		j->copied += n;
	}
	return rc ? rc : objio_flush(&j->wio, j->next);
}

/* Under the freeze: the map and size the copy was for, or copied again. */
static int settle(struct job *j, uint64_t mark)
{
	void *now = NULL;
	size_t len = 0;
	struct ns_attr a;
	int rc = ns_map_get(j->mds->ns, j->ino, &now, &len);

	if (!rc && (len != j->old_len || memcmp(now, j->old_blob, len)))
		rc = -EAGAIN; /* rebuilt or moved meanwhile: next pass */
	free(now);
	if (!rc)
		rc = ns_getattr(j->mds->ns, j->ino, &a);
	if (rc || (a.size == j->size && !pando_grants_written_since(j->mds->grants, j->ino, mark)))
		return rc;
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: inode %" PRIu64 " was written during its transcoding: "
		"copied again with its writers held",
		j->ino);
	j->size = a.size;
	rc = objio_truncate(&j->wio, j->next, 0);
	return rc ? rc : copy(j);
}

static int handoff(struct job *j)
{
	struct pando_grants *g = j->mds->grants;
	uint64_t mark = pando_grants_watch(g, j->ino);
	int rc = copy(j);

	if (!rc)
		rc = pando_grants_freeze(g, j->ino, "transcode");
	if (rc) {
		pando_grants_unwatch(g, j->ino);
		return rc == -ETIMEDOUT ? -EAGAIN : rc;
	}
	rc = settle(j, mark);
	if (!rc)
		rc = ns_map_set(j->mds->ns, j->ino, 0, j->next_blob, j->next_len, j->old_blob,
				j->old_len, j->intent);
	if (!rc)
		j->intent = 0;
	pando_grants_thaw(g, j->ino);
	pando_grants_unwatch(g, j->ino);
	return rc;
}

/* A failed transcoding's new objects go now if they can, else to the
 * reaper. */
static void discard(struct job *j)
{
	if (j->next && objio_remove(&j->wio, j->next) == 0)
		ns_intent_done(j->mds->ns, j->intent);
	else
		pando_reaper_kick(j->mds->reaper);
}

static void job_free(struct job *j)
{
	if (j->inflight)
		pando_inflight_del(j->mds, j->ino);
	if (j->old)
		pando_map_free(j->old);
	if (j->next)
		pando_map_free(j->next);
	free(j->old_blob);
	free(j->next_blob);
}

int pando_transcode_file(struct pando_mds *mds, uint64_t ino, void *buf, size_t cap,
			 uint64_t *copied)
{
	struct job j = { .mds = mds, .ino = ino, .buf = buf, .cap = cap };
	struct pando_layout_request req;
	int rc = pando_objects_open(mds, ino, &j.io, &j.old);

	*copied = 0; /* also when there is nothing to do */
	if (rc == -ENODATA || rc == -ESTALE || rc == -ENOENT)
		return 0; /* inline, or gone */
	if (!rc && !wanted(&j, &req)) {
		job_free(&j);
		return 0;
	}
	j.wio = (struct objio){ .conns = j.io.conns, .owner = ino };
	if (!rc)
		rc = pando_map_blob(j.old, &j.old_blob, &j.old_len);
	if (!rc)
		rc = make_next(&j, &req);
	if (!rc)
		rc = handoff(&j);
	if (rc && j.intent)
		discard(&j);
	if (!rc) {
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: inode %" PRIu64 ": %" PRIu64 " bytes transcoded "
			"to RS(%u,%u)",
			ino, j.size, j.next->shape.data, j.next->shape.parity);
		pando_grants_recall_file(mds->grants, ino, 0, false, "transcoded");
		pando_reaper_kick(mds->reaper);
	}
	*copied = j.copied;
	job_free(&j);
	return rc;
}
