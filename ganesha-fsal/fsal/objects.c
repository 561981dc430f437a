/* Storage maps and the objects behind a file: moving a file from inline
 * data to objects (ns_store.h describes the four steps), cutting objects
 * on truncate, flushing them on COMMIT, and the write verifier that
 * changes when an OSD restarts. */
#include "pando_fsal.h"

#include <stdlib.h>
#include <string.h>

#include "objio.h"
#include "pando/placement.h"

#define MAP_BLOB_MAX 65536

int pando_map_load(struct pando_export *exp, uint64_t ino, struct pando_storage_map **out)
{
	void *blob = NULL;
	size_t len = 0;
	int rc = ns_map_get(exp->ns, ino, &blob, &len);

	if (rc)
		return rc;
	rc = pando_map_decode(blob, len, out);
	free(blob);
	if (rc) {
		LogCrit(COMPONENT_FSAL, "pando: inode %" PRIu64 ": undecodable storage map (%d)",
			ino, rc);
		return -EIO;
	}
	return 0;
}

/* A new map for file ino: declustered placement seeded by the file id,
 * over object ids reserved from the store's allocator. */
static int new_map(struct pando_export *exp, uint64_t ino, struct pando_storage_map **out)
{
	uint32_t mirrors = exp->cfg.mirrors;
	struct pando_layout_request req = {
		.raid = mirrors > 1 ? PANDO_RAID1 : PANDO_RAID0,
		.copies = (uint8_t)(mirrors > 1 ? mirrors : 1),
		.data = (uint8_t)exp->cfg.stripe_width,
		.stripe_unit = exp->cfg.stripe_unit,
		.max_groups = 1,
		.seed = ino,
		.partition_id = exp->cluster.partition,
	};
	int rc = ns_ids_reserve(exp->ns, mirrors * exp->cfg.stripe_width, &req.first_object_id);

	if (rc)
		return rc;
	return pando_place(exp->placement, &req, out);
}

static int encode_map(const struct pando_storage_map *map, uint8_t **blob, size_t *len)
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
static void inflight_add(struct pando_export *exp, uint64_t ino)
{
	pthread_mutex_lock(&exp->inflight_lock);
	while (exp->ninflight == PANDO_MAX_INFLIGHT)
		pthread_cond_wait(&exp->inflight_cond, &exp->inflight_lock);
	exp->inflight[exp->ninflight++] = ino;
	pthread_mutex_unlock(&exp->inflight_lock);
}

static void inflight_del(struct pando_export *exp, uint64_t ino)
{
	pthread_mutex_lock(&exp->inflight_lock);
	for (int i = 0; i < exp->ninflight; i++) {
		if (exp->inflight[i] == ino) {
			exp->inflight[i] = exp->inflight[--exp->ninflight];
			break;
		}
	}
	pthread_cond_broadcast(&exp->inflight_cond);
	pthread_mutex_unlock(&exp->inflight_lock);
}

bool pando_move_inflight(struct pando_export *exp, uint64_t ino)
{
	bool found = false;

	pthread_mutex_lock(&exp->inflight_lock);
	for (int i = 0; i < exp->ninflight && !found; i++)
		found = exp->inflight[i] == ino;
	pthread_mutex_unlock(&exp->inflight_lock);
	return found;
}

/* Objects named by a durable intent first, then created and filled, then
 * claimed by the map in the batch that drops the inline data. */
static int move_once(struct pando_handle *h, const struct ns_attr *a)
{
	struct pando_export *exp = h->exp;
	struct objio io = { .pool = exp->pool, .owner = h->ino };
	struct pando_storage_map *map = NULL;
	uint8_t *blob = NULL, *data = NULL;
	uint64_t intent = 0;
	size_t blen = 0, n = 0;
	bool eof;
	int rc;

	data = malloc(a->inline_len ? a->inline_len : 1);
	if (!data)
		return -ENOMEM;
	rc = ns_read(exp->ns, h->ino, 0, a->inline_len, data, &n, &eof);
	if (!rc)
		rc = new_map(exp, h->ino, &map);
	if (!rc)
		rc = encode_map(map, &blob, &blen);
	if (!rc) {
		inflight_add(exp, h->ino);
		rc = ns_intent_add(exp->ns, h->ino, blob, blen, &intent);
		if (!rc)
			rc = objio_create(&io, map);
		if (!rc && n > 0)
			rc = objio_write(&io, map, 0, data, n, true);
		if (!rc)
			rc = ns_map_set(exp->ns, h->ino, a->change, blob, blen, NULL, 0, intent);
		inflight_del(exp, h->ino);
		if (rc)
			pando_reaper_kick(exp->reaper);
	}
	if (rc && rc != -EAGAIN)
		LogMajor(COMPONENT_FSAL, "pando: inode %" PRIu64 ": move to objects failed (%d)",
			 h->ino, rc);
	free(blob);
	free(data);
	pando_map_free(map);
	return rc;
}

int pando_move_to_objects(struct pando_handle *h)
{
	struct ns_attr a;
	int rc;

	pthread_mutex_lock(&h->move_lock);
	do {
		rc = ns_getattr(h->exp->ns, h->ino, &a);
		if (rc || a.objects)
			break;
		rc = move_once(h, &a);
	} while (rc == -EAGAIN);
	pthread_mutex_unlock(&h->move_lock);
	return rc;
}

int pando_truncate_objects(struct pando_export *exp, uint64_t ino, uint64_t size)
{
	struct objio io = { .pool = exp->pool, .owner = ino };
	struct pando_storage_map *map;
	int rc = pando_map_load(exp, ino, &map);

	if (rc)
		return rc;
	rc = objio_truncate(&io, map, size);
	pando_map_free(map);
	return rc;
}

int pando_objects_flush(struct pando_export *exp, uint64_t ino)
{
	struct objio io = { .pool = exp->pool, .owner = ino };
	struct pando_storage_map *map;
	int rc = pando_map_load(exp, ino, &map);

	if (rc)
		return rc == -ENODATA ? 0 : rc;
	rc = objio_flush(&io, map);
	pando_map_free(map);
	return rc;
}

void pando_note_verf_change(struct pando_export *exp)
{
	atomic_fetch_add(&exp->verf_epoch, 1);
	LogEvent(COMPONENT_FSAL,
		 "pando: an OSD restarted under unstable writes; new write verifier, clients resend");
}
