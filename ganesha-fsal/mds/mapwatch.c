/* The engine follows the cluster map in etcd (FSAL option Etcd): a thread
 * reads <Etcd_Prefix>map every 500 ms and applies a map whose epoch is
 * above the applied one (view.c).  cluster.conf stays the seed: the key,
 * the partition and the first OSDs.
 *
 * The last applied map is kept beside the store (<Db_Path>.map.json,
 * written atomically), and read at start before etcd is asked, so a
 * manager restarted while etcd is away still knows the OSDs added since
 * cluster.conf was written.  etcd away: one warning, the last map stays,
 * and the thread catches up when etcd answers.  A map that does not parse
 * is logged once per revision and ignored. */
#include "mds.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_map_json.h"
#include "etcd_client.h"
#include "view.h"

#define POLL_MS 500
#define ETCD_TIMEOUT_MS 1000
#define MAP_FILE_MAX (4u << 20)

struct pando_mapwatch {
	struct pando_mds *mds;
	struct etcd_client *etcd;
	char *key;        /* <prefix>map */
	char *cache_path; /* <Db_Path>.map.json */
	pthread_t thread;
	bool running;         /* the thread was started */
	pthread_mutex_t lock; /* stop, json */
	pthread_cond_t cond;
	bool stop;
	char *json; /* the map applied last, as read */
	/* Thread-only from here. */
	bool unreachable; /* warned; said again when it answers */
	bool refused;     /* what was warned: etcd refused the read */
	bool absent;      /* said that the key is not there */
	int64_t seen_rev; /* mod_revision looked at last */
};

static void keep_json(struct pando_mapwatch *w, const char *json, size_t len)
{
	char *copy = mds_malloc(len + 1);

	memcpy(copy, json, len);
	copy[len] = 0;
	pthread_mutex_lock(&w->lock);
	free(w->json);
	w->json = copy;
	pthread_mutex_unlock(&w->lock);
}

char *pando_mapwatch_json(struct pando_mapwatch *w)
{
	char *s;

	if (!w)
		return mds_strdup("");
	pthread_mutex_lock(&w->lock);
	s = mds_strdup(w->json ? w->json : "");
	pthread_mutex_unlock(&w->lock);
	return s;
}

/* tmp, fsync, rename: a crash leaves the old copy or the new, whole. */
static int write_cache(const char *path, const char *json, size_t len)
{
	char tmp[PATH_MAX + 8];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, json, len) != (ssize_t)len || fsync(fd) != 0)
		rc = errno ? -errno : -EIO;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	else
		pando_sync_dir_of(path); /* the rename itself durable */
	return rc;
}

static int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return -errno;
	buf = mds_malloc(MAP_FILE_MAX + 1);
	n = fread(buf, 1, MAP_FILE_MAX + 1, f);
	fclose(f);
	if (n > MAP_FILE_MAX) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* Parses and applies json (from etcd or the cache); 0 when applied. */
static int apply_json(struct pando_mapwatch *w, const char *json, size_t len, const char *source,
		      int64_t rev)
{
	struct cluster_map m;
	char why[512];
	int rc = cluster_map_parse(json, len, &m, why, sizeof(why));

	if (rc) {
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: malformed cluster map (%s, revision %" PRId64
			"): %s; keeping epoch %" PRIu64,
			source, rev, why, pando_view_get(w->mds)->map.epoch);
		return rc;
	}
	rc = pando_view_apply(w->mds, &m, source);
	/* Once per revision (the caller skips revisions it has seen). */
	if (rc == -EALREADY && m.epoch < pando_view_get(w->mds)->map.epoch)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: the cluster map in %s is at epoch %" PRIu64
			", below the applied %" PRIu64
			" (etcd restored or reset?): kept the applied one",
			source, m.epoch, pando_view_get(w->mds)->map.epoch);
	cluster_map_free(&m);
	if (rc)
		return rc;
	keep_json(w, json, len);
	/* The mgr shows which epoch each manager applied: say it now. */
	pando_presence_kick(w->mds->presence);
	if (strcmp(source, "cache") != 0) {
		int wrc = write_cache(w->cache_path, json, len);

		if (wrc)
			mds_log(MDS_LOG_WARN, __func__,
				"pando: cannot keep the cluster map in %s: %s", w->cache_path,
				strerror(-wrc));
	}
	return 0;
}

static void load_cache(struct pando_mapwatch *w)
{
	char *json = NULL;
	size_t len = 0;
	int rc = read_file(w->cache_path, &json, &len);

	if (rc == -ENOENT)
		return;
	if (rc) {
		mds_log(MDS_LOG_WARN, __func__, "pando: cannot read the kept cluster map %s: %s",
			w->cache_path, strerror(-rc));
		return;
	}
	apply_json(w, json, len, "cache", 0);
	free(json);
}

/* Once per outage, and once more when etcd refusing gives way to etcd
 * away or the other way round. */
static void note_unreachable(struct pando_mapwatch *w, int rc)
{
	const struct pando_mds_config *cfg = &w->mds->cfg;
	bool refused = rc == -EACCES;

	if (w->unreachable && w->refused == refused)
		return;
	w->unreachable = true;
	w->refused = refused;
	if (refused)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: etcd (%s) refuses %s to Etcd_User \"%s\": permission "
			"denied, or credentials refused: going on with cluster map epoch %" PRIu64
			" (%s)",
			cfg->etcd, w->key, cfg->etcd_user, pando_view_get(w->mds)->map.epoch,
			pando_view_get(w->mds)->source);
	else
		mds_log(MDS_LOG_WARN, __func__,
			"pando: etcd (%s) does not answer (%s): going on with "
			"cluster map epoch %" PRIu64 " (%s)",
			cfg->etcd, etcd_strerror(rc), pando_view_get(w->mds)->map.epoch,
			pando_view_get(w->mds)->source);
}

/* One look at the map key. */
static void poll_once(struct pando_mapwatch *w)
{
	char *json = NULL;
	size_t len = 0;
	int64_t rev = 0;
	int rc = etcd_get(w->etcd, w->key, &json, &len, &rev);

	if (rc && rc != -ENOENT) {
		note_unreachable(w, rc);
		return;
	}
	if (w->unreachable)
		mds_log(MDS_LOG_EVENT, __func__, "pando: etcd answers again (%s)",
			etcd_client_endpoint(w->etcd));
	w->unreachable = false;
	if (rc == -ENOENT) {
		if (!w->absent)
			mds_log(MDS_LOG_INFO, __func__,
				"pando: no cluster map at %s yet: keeping epoch %" PRIu64, w->key,
				pando_view_get(w->mds)->map.epoch);
		w->absent = true;
		return;
	}
	w->absent = false;
	if (rev != w->seen_rev) {
		w->seen_rev = rev;
		apply_json(w, json, len, "etcd", rev);
	}
	free(json);
}

static void *watch_main(void *arg)
{
	struct pando_mapwatch *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct timespec until;

		pthread_mutex_unlock(&w->lock);
		poll_once(w);
		pthread_mutex_lock(&w->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (!w->stop)
			pthread_cond_timedwait(&w->cond, &w->lock, &until);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void mapwatch_free(struct pando_mapwatch *w)
{
	etcd_client_free(w->etcd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w->key);
	free(w->cache_path);
	free(w->json);
	free(w);
}

int pando_mapwatch_start(struct pando_mds *mds, struct pando_mapwatch **out)
{
	struct pando_mapwatch *w = mds_calloc(1, sizeof(*w));
	size_t klen = strlen(mds->cfg.etcd_prefix) + 4, plen = strlen(mds->cfg.db_path) + 10;
	int rc;

	w->mds = mds;
	w->seen_rev = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->key = mds_malloc(klen);
	snprintf(w->key, klen, "%smap", mds->cfg.etcd_prefix);
	w->cache_path = mds_malloc(plen);
	snprintf(w->cache_path, plen, "%s.map.json", mds->cfg.db_path);
	rc = pando_etcd_client_new(mds, ETCD_TIMEOUT_MS, "cluster map", &w->etcd);
	if (rc) {
		mapwatch_free(w);
		return rc;
	}
	/* The kept map first: etcd may be away, and if it is not, its map
	 * is the same or newer and applies over it. */
	load_cache(w);
	poll_once(w);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: following the cluster map at %s on %s (epoch %" PRIu64 " now, from %s)",
		w->key, mds->cfg.etcd, pando_view_get(mds)->map.epoch, pando_view_get(mds)->source);
	*out = w;
	return 0;
}

/* The thread starts once the engine's grants exist: it recalls layouts. */
int pando_mapwatch_run(struct pando_mapwatch *w)
{
	int rc = pthread_create(&w->thread, NULL, watch_main, w);

	w->running = rc == 0;
	return -rc;
}

void pando_mapwatch_stop(struct pando_mapwatch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (w->running)
		pthread_join(w->thread, NULL);
	mapwatch_free(w);
}
