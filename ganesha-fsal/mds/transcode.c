/* The transcoder (README.md, "Transcoding"): every Transcode_Interval
 * seconds a pass over the files with storage maps finds those whose
 * policy has a cold rule, whose map is not RS yet, that were last
 * modified at least cold_after_s ago and that have no write layout, no
 * gateway write and no recall under way, and transcodes them one at a
 * time (transcode_file.c).  Its
 * counters go to dbus (transcode_status) and, with Etcd, to
 * transcode/progress/<manager> for the mgr's status and dashboard. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_client.h"
#include "grants.h"
#include "pando/policy.h"
#include "pando/storage_map.h"
#include "progress_put.h"
#include "transcode.h"

#define BATCH 256 /* candidates a pass takes at most */
#define COPY_BUF (4u << 20)
#define LEASE_TTL_S 30
#define IDLE_SLICE_S 10 /* well inside the lease */

struct counts {
	uint64_t passes, files_done, bytes_done, failed, retried;
	uint64_t current_ino, current_size;
	double last_pass_end;
};

struct pando_transcode {
	struct pando_mds *mds;
	pthread_t thread;
	pthread_mutex_t lock; /* c; with wake, the wait between passes */
	pthread_cond_t wake;
	atomic_bool stop;
	struct counts c;
	void *buf;
	struct etcd_client *etcd;
	int64_t lease;
	struct pando_progress_key progress;
};

struct scan {
	struct pando_transcode *t;
	uint64_t ino[BATCH];
	size_t n;
	time_t now;
};

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A file the pass should try: cold rule, not RS, cold, idle. */
static bool candidate(struct scan *s, uint64_t ino, const void *blob, size_t len)
{
	struct pando_mds *mds = s->t->mds;
	struct pando_storage_map *map = NULL;
	struct pando_policy p;
	struct ns_attr a;
	bool rs;

	if (!pando_file_policy(mds, ino, &p) || !p.cold_after_s)
		return false;
	if (pando_map_decode(blob, len, &map) != 0)
		return false;
	rs = map->shape.raid == PANDO_RS;
	pando_map_free(map);
	if (rs || ns_getattr(mds->ns, ino, &a) != 0)
		return false;
	if (s->now - a.mtime.tv_sec < (time_t)p.cold_after_s)
		return false;
	return !pando_grants_busy(mds->grants, ino);
}

static int collect(void *arg, uint64_t ino, const void *blob, size_t len)
{
	struct scan *s = arg;

	if (candidate(s, ino, blob, len))
		s->ino[s->n++] = ino;
	return s->n == BATCH;
}

static json_t *status_json(struct pando_transcode *t)
{
	json_t *o;

	pthread_mutex_lock(&t->lock);
	o = json_pack("{sI sI sI sI sI sI sf si}", "passes", (json_int_t)t->c.passes, "files_done",
		      (json_int_t)t->c.files_done, "bytes_done", (json_int_t)t->c.bytes_done,
		      "failed", (json_int_t)t->c.failed, "retried", (json_int_t)t->c.retried,
		      "current_ino", (json_int_t)t->c.current_ino, "last_pass_end",
		      t->c.last_pass_end, "interval_s", (int)t->mds->cfg.transcode_interval_s);
	pthread_mutex_unlock(&t->lock);
	return o;
}

char *pando_transcode_status(struct pando_transcode *t)
{
	return pando_progress_text(status_json(t));
}

static void put_progress(struct pando_transcode *t)
{
	if (t->etcd && etcd_lease_keep(t->etcd, LEASE_TTL_S, &t->lease) == 0)
		pando_progress_put(t->etcd, t->lease, &t->progress, status_json(t));
}

static void count(struct pando_transcode *t, uint64_t ino, int rc, uint64_t copied)
{
	pthread_mutex_lock(&t->lock);
	t->c.current_ino = 0;
	if (rc == -EAGAIN)
		t->c.retried++;
	else if (rc)
		t->c.failed++;
	else if (copied)
		t->c.files_done++;
	t->c.bytes_done += copied;
	pthread_mutex_unlock(&t->lock);
	if (rc && rc != -EAGAIN)
		mds_log(MDS_LOG_WARN, __func__, "pando: inode %" PRIu64 " not transcoded: %s", ino,
			strerror(-rc));
}

static void pass(struct pando_transcode *t)
{
	struct scan s = { .t = t, .now = time(NULL) };
	int rc = ns_map_list(t->mds->ns, collect, &s);

	if (rc < 0)
		mds_log(MDS_LOG_MAJOR, __func__, "pando: transcoder: listing maps: %d", rc);
	for (size_t i = 0; i < s.n && !atomic_load(&t->stop); i++) {
		uint64_t copied = 0;

		pthread_mutex_lock(&t->lock);
		t->c.current_ino = s.ino[i];
		pthread_mutex_unlock(&t->lock);
		put_progress(t);
		rc = pando_transcode_file(t->mds, s.ino[i], t->buf, COPY_BUF, &copied);
		count(t, s.ino[i], rc, copied);
		put_progress(t);
	}
	pthread_mutex_lock(&t->lock);
	t->c.passes++;
	t->c.last_pass_end = wall();
	pthread_mutex_unlock(&t->lock);
}

/* Between passes, in slices no longer than the progress key's lease
 * needs renewing, so the key stays while the transcoder idles. */
static void idle(struct pando_transcode *t)
{
	time_t end = time(NULL) + t->mds->cfg.transcode_interval_s;
	struct timespec until;

	pthread_mutex_lock(&t->lock);
	while (!atomic_load(&t->stop) && time(NULL) < end) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += end - time(NULL) < IDLE_SLICE_S ? end - time(NULL) : IDLE_SLICE_S;
		pthread_cond_timedwait(&t->wake, &t->lock, &until);
		pthread_mutex_unlock(&t->lock);
		put_progress(t);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
}

static void *transcode_main(void *arg)
{
	struct pando_transcode *t = arg;

	while (!atomic_load(&t->stop)) {
		pass(t);
		put_progress(t);
		idle(t);
	}
	return NULL;
}

static void transcode_free(struct pando_transcode *t)
{
	if (t->etcd && t->lease)
		etcd_lease_revoke(t->etcd, t->lease);
	if (t->etcd)
		etcd_client_free(t->etcd);
	pando_progress_key_free(&t->progress);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	free(t->buf);
	free(t);
}

int pando_transcode_start(struct pando_mds *mds, struct pando_transcode **out)
{
	struct pando_transcode *t;
	int rc = 0;

	*out = NULL;
	if (!mds->cfg.transcode_interval_s)
		return 0;
	t = mds_calloc(1, sizeof(*t));
	t->mds = mds;
	t->buf = mds_malloc(COPY_BUF);
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	if (mds->cfg.etcd[0]) {
		snprintf(t->progress.key, sizeof(t->progress.key), "%stranscode/progress/%s",
			 mds->cfg.etcd_prefix, pando_presence_name(mds->presence));
		rc = pando_etcd_client_new(mds, 2000, "transcoder", &t->etcd);
	}
	if (!rc)
		rc = -pthread_create(&t->thread, NULL, transcode_main, t);
	if (rc) {
		transcode_free(t);
		return rc;
	}
	mds_log(MDS_LOG_EVENT, __func__, "pando: transcoder started: a pass every %u s",
		mds->cfg.transcode_interval_s);
	*out = t;
	return 0;
}

void pando_transcode_stop(struct pando_transcode *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	atomic_store(&t->stop, true);
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	transcode_free(t);
}
