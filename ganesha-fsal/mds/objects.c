/* Storage maps and the objects behind a file: moving a file from inline
 * data to objects (ns_store.h describes the four steps), cutting objects
 * on truncate, flushing them on COMMIT, and the write verifier that
 * changes when an OSD restarts. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objio.h"
#include "pando/placement.h"
#include "pando/policy.h"
#include "view.h"

/* Placements drawn again, seed changed, to keep off unreachable OSDs. */
#define PLACE_TRIES 8

/* nfs_opnum4 values damage records carry for the gateway's own I/O. */
#define OP_READ4 25
#define OP_WRITE4 38

/* A component failed under gateway I/O.  A write that missed it makes it
 * stale, durably, before the write may be acknowledged; a failed read is
 * recorded, not stale (once per back-off: -EHOSTDOWN is the same outage). */
static int gateway_fault(void *arg, uint64_t ino, uint32_t group, uint32_t component,
			 uint32_t osd_id, int err, bool write)
{
	struct pando_mds *mds = arg;
	int rc;

	if (!write && err == -EHOSTDOWN)
		return 0;
	mds_log(MDS_LOG_WARN, __func__,
		"pando: OSD %u failed gateway %s on inode %" PRIu64 " (%d)%s", osd_id,
		write ? "write" : "read", ino, err, write ? ": its component is stale" : "");
	rc = ns_damage_add(mds->ns, ino, osd_id, err, write ? OP_WRITE4 : OP_READ4, write);
	if (rc)
		mds_log(MDS_LOG_MAJOR, __func__,
			"pando: damage on inode %" PRIu64 " NOT recorded (%d)", ino, rc);
	return rc;
}

static int collect_stale(void *arg, const struct ns_damage *dr)
{
	struct objio *io = arg;

	if (dr->stale && io->nskip < OBJIO_MAX_SKIP)
		io->skip[io->nskip++] = dr->osd_id;
	return 0;
}

int pando_stale_osds(struct pando_mds *mds, uint64_t ino, uint32_t *ids, size_t *n)
{
	struct objio io = { 0 };
	int rc = ns_damage_list(mds->ns, ino, collect_stale, &io);

	memcpy(ids, io.skip, io.nskip * sizeof(*ids));
	*n = io.nskip;
	return rc;
}

int pando_objio_init(struct pando_mds *mds, uint64_t ino, struct objio *io)
{
	memset(io, 0, sizeof(*io));
	io->conns = mds->conns;
	io->owner = ino;
	io->fault = gateway_fault;
	io->fault_arg = mds;
	return ns_damage_list(mds->ns, ino, collect_stale, io);
}

int pando_map_load(struct pando_mds *mds, uint64_t ino, struct pando_storage_map **out)
{
	void *blob = NULL;
	size_t len = 0;
	int rc = ns_map_get(mds->ns, ino, &blob, &len);

	if (rc)
		return rc;
	rc = pando_map_decode(blob, len, out);
	free(blob);
	if (rc) {
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: inode %" PRIu64 ": undecodable storage map (%d)", ino, rc);
		return -EIO;
	}
	return 0;
}

/* As far as this manager has seen: a map on a dead OSD would fail its
 * file's first large write. */
static bool all_reachable(struct pando_mds *mds, const struct pando_storage_map *map)
{
	for (size_t i = 0; i < osd_conns_count(mds->conns); i++) {
		struct osd_health h;

		osd_conns_health(mds->conns, i, &h);
		if (h.reachable)
			continue;
		for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++)
			if (map->comp[c].osd_id == h.id)
				return false;
	}
	return true;
}

/* The policy file ino was made with (ns_policy.c copies its directory's);
 * false for none.  An undecodable one is reported and the file laid out
 * as the export's, so it stays writable. */
bool pando_file_policy(struct pando_mds *mds, uint64_t ino, struct pando_policy *p)
{
	void *blob = NULL;
	size_t len = 0;
	int rc = ns_policy_get(mds->ns, ino, &blob, &len);

	if (!rc)
		rc = pando_policy_decode(blob, len, p);
	free(blob);
	if (rc && rc != -ENOENT)
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: inode %" PRIu64 ": unusable storage policy (%d): "
			"laid out as the export's",
			ino, rc);
	return rc == 0;
}

int pando_map_place(struct pando_mds *mds, uint64_t ino, const char *pool,
		    struct pando_layout_request *req, struct pando_storage_map **out)
{
	const struct pando_placement_view *placement;
	int rc = ns_ids_reserve(mds->ns, pando_request_max_width(req), &req->first_object_id);

	req->seed = ino;
	req->partition_id = mds->conf.map.partition;
	placement = pando_view_placement(pando_view_get(mds), pool);
	/* No OSD of the map (or of the pool) takes new components. */
	if (!rc && !placement)
		rc = -ENOSPC;
	for (int tries = 0; !rc; tries++) {
		rc = pando_place(placement, req, out);
		if (rc || tries == PLACE_TRIES - 1 || all_reachable(mds, *out))
			break;
		pando_map_free(*out);
		*out = NULL;
		req->seed = ino + (uint64_t)(tries + 1) * 0x9e3779b97f4a7c15ull;
	}
	return rc;
}

/* A new map for file ino: its policy over the export's defaults (the
 * object pool's maps are the export's), declustered placement over the
 * policy's pool seeded by the file id (redrawn away from OSDs known to be
 * down), over object ids reserved from the store's allocator. */
int pando_map_new_placed(struct pando_mds *mds, uint64_t ino, struct pando_storage_map **out)
{
	const struct pando_policy_defaults d = { .mirrors = mds->cfg.mirrors,
						 .stripe_width = mds->cfg.stripe_width,
						 .stripe_unit = mds->cfg.stripe_unit };
	struct pando_layout_request req = { .max_groups = 1 };
	struct pando_policy policy;
	bool has = pando_file_policy(mds, ino, &policy);

	pando_policy_request(has ? &policy : NULL, &d, &req);
	return pando_map_place(mds, ino, has ? policy.pool : "", &req, out);
}

int pando_map_blob(const struct pando_storage_map *map, uint8_t **blob, size_t *len)
{
	int rc = pando_map_encode(map, NULL, 0, len);

	if (rc && rc != -ENOSPC)
		return rc;
	*blob = malloc(*len);
	if (!*blob)
		return -ENOMEM;
	rc = pando_map_encode(map, *blob, *len, len);
	if (rc)
		free(*blob);
	return rc;
}

/* Files whose move to objects is running: the reaper must leave the
 * objects their intents name.  Keyed by file, and entered before the
 * intent exists, so the reaper cannot see the intent first. */
void pando_inflight_add(struct pando_mds *mds, uint64_t ino)
{
	pthread_mutex_lock(&mds->inflight_lock);
	while (mds->ninflight == PANDO_MAX_INFLIGHT)
		pthread_cond_wait(&mds->inflight_cond, &mds->inflight_lock);
	mds->inflight[mds->ninflight++] = (struct pando_move){ .ino = ino };
	pthread_mutex_unlock(&mds->inflight_lock);
}

void pando_inflight_intent(struct pando_mds *mds, uint64_t ino, uint64_t intent)
{
	pthread_mutex_lock(&mds->inflight_lock);
	for (int i = 0; i < mds->ninflight; i++)
		if (mds->inflight[i].ino == ino)
			mds->inflight[i].intent = intent;
	pthread_mutex_unlock(&mds->inflight_lock);
}

void pando_inflight_del(struct pando_mds *mds, uint64_t ino)
{
	pthread_mutex_lock(&mds->inflight_lock);
	for (int i = 0; i < mds->ninflight; i++) {
		if (mds->inflight[i].ino == ino) {
			mds->inflight[i] = mds->inflight[--mds->ninflight];
			break;
		}
	}
	pthread_cond_broadcast(&mds->inflight_cond);
	pthread_mutex_unlock(&mds->inflight_lock);
}

/* May the reaper remove what intent id (of file ino) names?  Not if a
 * running move of that file made it, or may have (its intent not known
 * yet), and not if the intent is gone: a move that finished since the
 * reaper listed it has claimed its objects for the file's map.  An intent
 * of an earlier, failed move of a file being moved again is the
 * reaper's.  Checked under the lock moves register with, so no move can
 * claim the intent after this says yes. */
bool pando_intent_orphaned(struct pando_mds *mds, uint64_t ino, uint64_t id)
{
	bool moving = false;
	int exists;

	if (ino == 0 && pando_object_pool_owns(mds->object_pool, id))
		return false;
	pthread_mutex_lock(&mds->inflight_lock);
	for (int i = 0; i < mds->ninflight && !moving; i++)
		moving = mds->inflight[i].ino == ino &&
			 (mds->inflight[i].intent == 0 || mds->inflight[i].intent == id);
	exists = moving ? 0 : ns_intent_exists(mds->ns, id);
	pthread_mutex_unlock(&mds->inflight_lock);
	return exists == 1;
}

/* A move that lost (the file changed under it, or an OSD failed) removes
 * what it made while still registered in flight, so no other reader of
 * the OSDs ever sees the file with two sets of objects.  What it could not
 * remove stays under the intent, for the reaper. */
static void discard_move(struct pando_mds *mds, struct objio *io,
			 const struct pando_storage_map *map, uint64_t intent)
{
	if (objio_remove(io, map) == 0)
		ns_intent_done(mds->ns, intent);
	else
		pando_reaper_kick(mds->reaper);
}

/* Objects named by a durable intent first, then created and filled, then
 * claimed by the map in the batch that drops the inline data. */
/* An RS component its OSD could not make: skipped by the rest of the
 * move, and recorded stale once the file has its map (the store keeps
 * damage records for object-backed files only). */
static int note_unborn(void *arg, uint64_t ino, uint32_t group, uint32_t component, uint32_t osd_id,
		       int err, bool write)
{
	struct objio *io = arg;

	if (objio_skip_has(io, osd_id))
		return 0;
	if (io->nskip == OBJIO_MAX_SKIP)
		return -ENOSPC;
	io->skip[io->nskip++] = osd_id;
	return 0;
}

static void record_unborn(struct pando_mds *mds, uint64_t ino, const struct objio *io)
{
	for (size_t i = 0; i < io->nskip; i++) {
		int rc = ns_damage_add(mds->ns, ino, io->skip[i], -EHOSTDOWN, OP_WRITE4, true);

		mds_log(MDS_LOG_WARN, __func__,
			"pando: inode %" PRIu64 " made without its component on "
			"OSD %u (down): stale%s",
			ino, io->skip[i], rc ? ", NOT recorded" : "");
	}
}

static int move_once(struct pando_mds *mds, uint64_t ino, const struct ns_attr *a)
{
	struct objio io = { .conns = mds->conns, .owner = ino };
	struct pando_storage_map *map = NULL;
	uint8_t *blob = NULL, *data = NULL;
	uint64_t intent = 0;
	size_t blen = 0, n = 0;
	bool eof;
	int rc;

	data = malloc(a->inline_len ? a->inline_len : 1);
	if (!data)
		return -ENOMEM;
	rc = ns_read(mds->ns, ino, 0, a->inline_len, data, &n, &eof);
	if (!rc)
		rc = pando_map_new_placed(mds, ino, &map);
	if (!rc)
		rc = pando_map_blob(map, &blob, &blen);
	if (!rc && map->shape.raid == PANDO_RS) {
		/* Born degraded rather than not at all (objio_create). */
		io.fault = note_unborn;
		io.fault_arg = &io;
	}
	if (!rc) {
		pando_inflight_add(mds, ino);
		rc = ns_intent_add(mds->ns, ino, blob, blen, &intent);
		if (!rc)
			pando_inflight_intent(mds, ino, intent);
		if (!rc)
			rc = objio_create(&io, map);
		if (!rc && n > 0)
			rc = objio_write(&io, map, 0, data, n, true);
		if (!rc)
			rc = ns_map_set(mds->ns, ino, a->change, blob, blen, NULL, 0, intent);
		if (!rc)
			record_unborn(mds, ino, &io);
		if (rc && intent)
			discard_move(mds, &io, map, intent);
		pando_inflight_del(mds, ino);
	}
	if (rc && rc != -EAGAIN)
		mds_log(MDS_LOG_MAJOR, __func__,
			"pando: inode %" PRIu64 ": move to objects failed (%d)", ino, rc);
	free(blob);
	free(data);
	pando_map_free(map);
	return rc;
}

/* An empty file takes ready objects from the pool: no OSD round trip,
 * no sync (ns_map_claim_empty says why that is safe).  -ENOENT: none
 * ready. */
static int claim_from_pool(struct pando_mds *mds, uint64_t ino, const struct ns_attr *a)
{
	const uint8_t *blob;
	size_t len;
	uint64_t intent;
	struct pando_policy policy;
	int rc;

	/* The pool's maps are the export's: a file with a policy places its own. */
	if (!mds->object_pool || pando_file_policy(mds, ino, &policy) ||
	    !pando_object_pool_take(mds->object_pool, &blob, &len, &intent))
		return -ENOENT;
	rc = ns_map_claim_empty(mds->ns, ino, a->change, blob, len, intent);
	pando_object_pool_done(mds->object_pool, intent, ino, rc == 0);
	return rc;
}

int pando_objects_move(struct pando_mds *mds, uint64_t ino)
{
	struct ns_attr a;
	int rc;

	do {
		rc = ns_getattr(mds->ns, ino, &a);
		if (rc || a.objects)
			break;
		rc = a.size == 0 && a.inline_len == 0 ? claim_from_pool(mds, ino, &a) : -ENOENT;
		if (rc == -ENOENT)
			rc = move_once(mds, ino, &a);
	} while (rc == -EAGAIN);
	return rc;
}

int pando_objects_open(struct pando_mds *mds, uint64_t ino, struct objio *io,
		       struct pando_storage_map **map)
{
	int rc = pando_objio_init(mds, ino, io);

	return rc ? rc : pando_map_load(mds, ino, map);
}

int pando_objects_reach(struct pando_mds *mds, uint64_t ino, uint64_t *len)
{
	struct pando_storage_map *map;
	struct objio io;
	int rc = pando_objects_open(mds, ino, &io, &map);

	if (rc)
		return rc;
	rc = objio_mirrored_length(&io, map, len);
	pando_map_free(map);
	return rc;
}

int pando_objects_flush(struct pando_mds *mds, uint64_t ino)
{
	struct pando_storage_map *map;
	struct objio io;
	int rc = pando_objects_open(mds, ino, &io, &map);

	if (rc)
		return rc == -ENODATA ? 0 : rc;
	rc = objio_flush(&io, map);
	pando_map_free(map);
	if (io.verf_changed)
		pando_note_verf_change(mds);
	return rc;
}

void pando_note_verf_change(struct pando_mds *mds)
{
	atomic_fetch_add(&mds->verf_epoch, 1);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: an OSD restarted or failed a sync under unstable writes; new write verifier, clients resend");
}

bool pando_map_uses_osd(struct pando_mds *mds, uint64_t ino, uint32_t osd_id)
{
	struct pando_storage_map *map;
	bool uses = false;

	if (pando_map_load(mds, ino, &map) != 0)
		return false;
	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++)
		uses |= map->comp[c].osd_id == osd_id;
	pando_map_free(map);
	return uses;
}
