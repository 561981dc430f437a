/* The engine's life: what it opens and starts, in the one order the
 * services need, and the reverse at close; and the space the OSDs
 * report, cached a few seconds. */
#include "mds.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "grants.h"
#include "rebuild_queue.h"
#include "scrub.h"
#include "transcode.h"
#include "unstable.h"
#include "view.h"

#define STATFS_CACHE_S 5
/* Files with uncommitted UNSTABLE gateway writes the manager keeps track
 * of (osdio/unstable.h): about 3 MiB; writes past it go stable. */
#define UNSTABLE_FILES_MAX (1u << 16)

static void store_log(void *arg, const char *msg)
{
	mds_log(MDS_LOG_CRIT, "store", "pando: namespace store: %s", msg);
}

int pando_store_open(struct pando_mds *mds, const struct ns_journal *journal, bool standby)
{
	struct ns_options o = { .inline_max = mds->cfg.inline_max,
				.log = store_log,
				.reserve_bytes = (uint64_t)mds->cfg.db_reserve_mb << 20,
				.journal = journal,
				.nosync = standby };
	int rc = ns_open(mds->cfg.db_path, &o, &mds->ns);

	if (rc == -ENOENT) {
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: no namespace store in %s: formatting a new one", mds->cfg.db_path);
		rc = ns_format(mds->cfg.db_path, &o);
		if (!rc)
			rc = ns_open(mds->cfg.db_path, &o, &mds->ns);
	}
	if (rc == -EBUSY)
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: %s is in use by another process (pando-fsck?)", mds->cfg.db_path);
	else if (rc)
		mds_log(MDS_LOG_CRIT, __func__, "pando: cannot open the namespace store %s: %s",
			mds->cfg.db_path, strerror(-rc));
	if (!rc)
		ns_uuid(mds->ns, mds->uuid);
	return rc;
}

static int open_cluster(struct pando_mds *mds)
{
	struct osd_conns_options po = { .timeout_ms = (int)mds->cfg.osd_timeout_ms };
	char why[512];
	int rc = cluster_conf_load(mds->cfg.cluster_path, &mds->conf, why, sizeof(why));

	if (rc) {
		mds_log(MDS_LOG_CRIT, __func__, "pando: cluster.conf: %s", why);
		return rc;
	}
	if (mds->conf.map.nosds < mds->cfg.mirrors * mds->cfg.stripe_width) {
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: Mirrors = %u and Stripe_Width = %u need %u OSDs; the cluster lists %zu",
			mds->cfg.mirrors, mds->cfg.stripe_width,
			mds->cfg.mirrors * mds->cfg.stripe_width, mds->conf.map.nosds);
		return -EINVAL;
	}
	rc = osd_conns_new(&mds->conf.key, &mds->conf.map, &po, &mds->conns);
	if (!rc)
		rc = pando_view_seed(mds);
	if (rc)
		mds_log(MDS_LOG_CRIT, __func__, "pando: cannot set up the OSDs: %s", strerror(-rc));
	return rc;
}

/* Space: what the reachable OSDs report, divided among the mirrors;
 * asked at most every few seconds. */
static void refresh_space(struct pando_mds *mds)
{
	uint64_t total = 0, avail = 0;
	time_t now = time(NULL);

	if (now - mds->space_at < STATFS_CACHE_S)
		return;
	for (size_t i = 0; i < osd_conns_count(mds->conns); i++) {
		const struct pando_view *v = pando_view_get(mds);
		struct osd_health h;
		struct osd_ctl_statfs st;
		const struct cluster_map_osd *o;
		uint32_t id;
		struct osd_ctl_client *c;
		int rc;

		osd_conns_health(mds->conns, i, &h);
		id = h.id;
		/* Out of the map: its space is leaving the file system. */
		o = pando_view_osd(v, id);
		if (!o || o->removed || !o->in)
			continue;
		c = osd_conns_get(mds->conns, id, &rc);
		if (!c)
			continue;
		rc = osd_ctl_statfs(c, &st);
		osd_conns_result(mds->conns, id, rc);
		if (!rc) {
			total += st.total_bytes;
			avail += st.free_bytes;
		}
	}
	mds->space_total = total / mds->cfg.mirrors;
	mds->space_avail = avail / mds->cfg.mirrors;
	mds->space_at = now;
}

void pando_mds_space(struct pando_mds *mds, uint64_t *total, uint64_t *avail)
{
	pthread_mutex_lock(&mds->space_lock);
	refresh_space(mds);
	*total = mds->space_total;
	*avail = mds->space_avail;
	pthread_mutex_unlock(&mds->space_lock);
}

/* Each step needs the ones before it; the comments say which. */
static int start_services(struct pando_mds *mds)
{
	bool etcd = mds->cfg.etcd[0] != '\0';
	int rc = 0;

	/* The map before the object pool, so no object is made ahead on an
	 * OSD the map has taken out. */
	if (etcd)
		rc = pando_mapwatch_start(mds, &mds->mapwatch);
	/* The pool before the reaper: the reaper asks it which intents are
	 * its own. */
	if (!rc && mds->cfg.object_pool)
		rc = pando_object_pool_start(mds, mds->cfg.object_pool, &mds->object_pool);
	if (!rc)
		rc = pando_reaper_start(mds, &mds->reaper);
	/* The grants before anything that recalls: the map thread, rebuild. */
	if (!rc)
		rc = pando_mds_grants_new(mds, &mds->grants);
	if (!rc)
		rc = pando_osd_watcher_start(mds, &mds->osd_watcher);
	/* Presence before the map thread runs: that thread kicks it after
	 * each epoch it applies. */
	if (!rc && etcd)
		rc = pando_presence_start(mds, &mds->presence);
	if (!rc && mds->mapwatch)
		rc = pando_mapwatch_run(mds->mapwatch);
	if (!rc && etcd)
		rc = pando_rebuild_start(mds, &mds->rebuild);
	if (!rc)
		rc = pando_scrub_start(mds, &mds->scrub);
	if (!rc)
		rc = pando_transcode_start(mds, &mds->transcode);
	return rc;
}

int pando_mds_open(struct pando_mds *mds, const struct pando_mds_host *host)
{
	struct timespec now;
	int rc;

	mds->host = host;
	pthread_mutex_init(&mds->inflight_lock, NULL);
	pthread_cond_init(&mds->inflight_cond, NULL);
	pthread_mutex_init(&mds->space_lock, NULL);
	pthread_mutex_init(&mds->view_lock, NULL);
	pthread_mutex_init(&mds->key_lock, NULL);
	mds->opstats = pando_opstats_new();
	if (mds->cfg.mds_group[0]) {
		/* A standby follows the journal on the OSDs into its store. */
		rc = open_cluster(mds);
		if (!rc)
			rc = pando_group_join(mds);
	} else {
		rc = pando_store_open(mds, NULL, false);
		if (!rc)
			rc = open_cluster(mds);
	}
	if (!rc && !(mds->unstable = unstable_files_new(UNSTABLE_FILES_MAX)))
		rc = -ENOMEM;
	if (!rc)
		rc = start_services(mds);
	clock_gettime(CLOCK_REALTIME, &now);
	mds->boot_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	return rc;
}

void pando_mds_recover(struct pando_mds *mds)
{
	pando_restart_settle(mds);
	pando_restart_resync(mds);
}

void pando_mds_close(struct pando_mds *mds)
{
	if (!mds->host)
		return; /* never opened */
	pando_group_quiesce(mds);
	pando_transcode_stop(mds->transcode);
	pando_scrub_stop(mds->scrub);
	pando_rebuild_stop(mds->rebuild);
	pando_presence_stop(mds->presence);
	pando_mapwatch_stop(mds->mapwatch);
	pando_osd_watcher_stop(mds->osd_watcher);
	/* The host still holds the segments and ends them when it disposes
	 * of them (../fsal/mds.c). */
	pando_grants_free(mds->grants);
	pando_reaper_stop(mds->reaper);
	pando_object_pool_stop(mds->object_pool);
	unstable_files_free(mds->unstable);
	pando_opstats_free(mds->opstats);
	if (mds->ns)
		ns_close(mds->ns);
	/* After the store, which syncs the journal as it closes; then the
	 * lead goes to a standby.  The journal's writer writes through the
	 * OSD connections and looks at its copies in the view until it is
	 * closed, so those go last. */
	pando_group_free(mds);
	pando_views_free(mds);
	osd_conns_free(mds->conns);
	cluster_conf_free(&mds->conf);
	pthread_mutex_destroy(&mds->inflight_lock);
	pthread_cond_destroy(&mds->inflight_cond);
	pthread_mutex_destroy(&mds->space_lock);
	pthread_mutex_destroy(&mds->view_lock);
	pthread_mutex_destroy(&mds->key_lock);
}
