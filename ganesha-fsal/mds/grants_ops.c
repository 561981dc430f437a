/* The grants engine's ops (../grants/grants.h decides; these act): the
 * fence and the writers' revocation on the OSDs, the store's write-layout
 * marks, the size settled from the objects, the recall through the host;
 * and the OSD watcher, a thread that ticks the grants' deadlines every
 * second and recalls the layouts on an OSD that stops answering. */
#include "mds.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "grants.h"
#include "mds_clock.h"
#include "ticker.h"

struct pando_osd_watcher {
	struct pando_mds *mds;
	struct pando_ticker *ticker;
	/* Per OSD, room for every OSD the pool may grow to (cluster maps). */
	bool osd_was_up[CLUSTER_MAP_MAX_OSDS];
};

static uint64_t monotonic_s(void *arg)
{
	return (uint64_t)mds_mono_s();
}

static void log_line(void *arg, enum pando_grants_level level, const char *msg)
{
	static const enum mds_log_level mds_level[] = {
		[PANDO_GRANTS_INFO] = MDS_LOG_INFO,
		[PANDO_GRANTS_EVENT] = MDS_LOG_EVENT,
		[PANDO_GRANTS_WARN] = MDS_LOG_WARN,
		[PANDO_GRANTS_MAJOR] = MDS_LOG_MAJOR,
	};

	mds_log(mds_level[level], "grants", "%s", msg);
}

static void send_recall(void *arg, const struct pando_recall *r)
{
	struct pando_mds *mds = arg;

	mds->host->recall(mds, r);
}

/* Components on unreachable OSDs cannot be fenced: they become stale,
 * or, when the file could not be read without them, the fence fails and
 * the grants engine makes it again at its next tick. */
static int fence_objects(void *arg, uint64_t ino, uint32_t cur, uint32_t *next, uint32_t *failed)
{
	struct pando_mds *mds = arg;
	struct pando_storage_map *map;
	int rc = pando_map_load(mds, ino, &map);

	if (rc)
		return rc;
	rc = pando_objects_fence(mds, ino, map, cur, next, failed);
	pando_map_free(map);
	return rc;
}

static int revoke_writers(void *arg, uint64_t ino, uint32_t cur, uint32_t *next)
{
	struct pando_mds *mds = arg;
	struct pando_storage_map *map;
	int rc = pando_map_load(mds, ino, &map);

	if (rc == -ENOENT)
		return 0; /* removed: nothing left to write to */
	if (rc)
		return rc;
	rc = pando_objects_revoke_writers(mds, ino, map, cur, next);
	pando_map_free(map);
	return rc;
}

static int mark_writer(void *arg, uint64_t ino)
{
	struct pando_mds *mds = arg;

	return ns_wlayout_add(mds->ns, ino);
}

static int unmark_writer(void *arg, uint64_t ino)
{
	struct pando_mds *mds = arg;

	return ns_wlayout_del(mds->ns, ino);
}

static void settle(void *arg, uint64_t ino)
{
	struct pando_mds *mds = arg;

	pando_settle_size_async(mds, ino);
}

static bool uses_osd(void *arg, uint64_t ino, uint32_t osd_id)
{
	return pando_map_uses_osd(arg, ino, osd_id);
}

/* A NULL call to each OSD: with pNFS the manager hardly talks to the
 * OSDs itself, so it asks, to notice a dead one within seconds. */
static void probe_osds(struct pando_mds *mds)
{
	for (size_t i = 0; i < osd_conns_count(mds->conns); i++) {
		struct osd_health h;

		osd_conns_health(mds->conns, i, &h);
		osd_conns_ping(mds->conns, h.id);
	}
}

static void watch_osds(struct pando_osd_watcher *w)
{
	struct pando_mds *mds = w->mds;

	probe_osds(mds);
	for (size_t i = 0; i < osd_conns_count(mds->conns); i++) {
		struct osd_health h;

		osd_conns_health(mds->conns, i, &h);
		if (w->osd_was_up[i] && !h.reachable) {
			mds_log(MDS_LOG_WARN, __func__, "pando: OSD %u is unreachable (%d)", h.id,
				h.last_error);
			pando_grants_recall_osd(mds->grants, h.id, "an OSD it uses is unreachable");
		}
		w->osd_was_up[i] = h.reachable;
	}
}

static bool watch(void *arg)
{
	struct pando_osd_watcher *w = arg;

	pando_grants_tick(w->mds->grants);
	watch_osds(w);
	return true;
}

int pando_mds_grants_new(struct pando_mds *mds, struct pando_grants **out)
{
	struct pando_grants_ops ops = {
		.arg = mds,
		.now = monotonic_s,
		.recall = send_recall,
		.fence = fence_objects,
		.revoke_writers = revoke_writers,
		.mark_writer = mark_writer,
		.unmark_writer = unmark_writer,
		.settle = settle,
		.uses_osd = uses_osd,
		.log = log_line,
	};

	return pando_grants_new(&ops, mds->cfg.recall_timeout_s, out);
}

int pando_osd_watcher_start(struct pando_mds *mds, struct pando_osd_watcher **out)
{
	struct pando_osd_watcher *w = mds_calloc(1, sizeof(*w));
	int rc;

	w->mds = mds;
	for (size_t i = 0; i < CLUSTER_MAP_MAX_OSDS; i++)
		w->osd_was_up[i] = true;
	rc = pando_ticker_start(watch, w, 1000, &w->ticker);
	if (rc) {
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void pando_osd_watcher_stop(struct pando_osd_watcher *w)
{
	if (!w)
		return;
	pando_ticker_stop(w->ticker);
	free(w);
}
