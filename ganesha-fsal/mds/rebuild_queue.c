/* The rebuild service (rebuild_queue.h; keys: mgr/README.md, "Rebuild
 * and scrub").  A dispatcher thread reads the mgr's jobs four times a second,
 * scans the namespace for each new one, lists this manager's tasks
 * (fewest healthy copies first), claims them under its own lease and
 * queues them for Rebuild_Parallel workers; it also puts the progress
 * key.  A worker deletes a task once its file is rebuilt, then the claim.
 * A manager that dies loses its claims with its lease, and its tasks are
 * claimed again when it (or another manager serving the namespace) runs. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_client.h"
#include "progress_put.h"
#include "rebuild_queue.h"

#define LEASE_TTL_S 10
#define TICK_MS 250
#define TICKS_PER_S (1000 / TICK_MS)
#define STALE_SCAN_EVERY (10 * TICKS_PER_S)
#define RETRY_LATER_S 5
#define RETRY_FAILED_S 60
#define COPY_BUF (1u << 20)

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Under rq->lock. */
static bool busy(const struct pando_rebuild *rq, uint64_t ino)
{
	for (size_t i = 0; i < rq->nbusy; i++)
		if (rq->busy[i] == ino)
			return true;
	return false;
}

static bool held(struct pando_rebuild *rq, uint64_t ino, time_t now);

bool pando_rebuild_idle_for(struct pando_rebuild *rq, uint64_t ino)
{
	bool idle;

	pthread_mutex_lock(&rq->lock);
	idle = !busy(rq, ino) && !held(rq, ino, time(NULL));
	pthread_mutex_unlock(&rq->lock);
	return idle;
}

static bool held(struct pando_rebuild *rq, uint64_t ino, time_t now)
{
	for (size_t i = 0; i < rq->nhold; i++) {
		if (rq->hold[i].until <= now) {
			rq->hold[i--] = rq->hold[--rq->nhold];
			continue;
		}
		if (rq->hold[i].ino == ino)
			return true;
	}
	return false;
}

static void hold(struct pando_rebuild *rq, uint64_t ino, int seconds)
{
	if (rq->nhold < REBUILD_QUEUE)
		rq->hold[rq->nhold++] = (struct rebuild_hold){ ino, time(NULL) + seconds };
}

static void unbusy(struct pando_rebuild *rq, uint64_t ino)
{
	for (size_t i = 0; i < rq->nbusy; i++) {
		if (rq->busy[i] == ino) {
			rq->busy[i] = rq->busy[--rq->nbusy];
			return;
		}
	}
}

static struct rebuild_job *job_of(struct pando_rebuild *rq, uint64_t id)
{
	for (size_t i = 0; i < rq->njobs; i++)
		if (rq->jobs[i].id == id)
			return &rq->jobs[i];
	return NULL;
}

/* A worker's end of a task. */
static void finish(struct pando_rebuild *rq, const struct rebuild_item *it, int rc)
{
	char claim[512];
	struct rebuild_job *job;

	snprintf(claim, sizeof(claim), "%srebuild/claims/%s/%016" PRIx64, rq->prefix, rq->name,
		 it->t.ino);
	/* Not a task put again since it was listed (a job's scan over a
	 * stale scan's task): that one is still to do. */
	if (rc == 0 && etcd_delete_if(rq->wetcd, it->key, it->rev) == -EEXIST)
		mds_log(MDS_LOG_EVENT, __func__, "pando: task %s was put again while it ran: kept",
			it->key);
	etcd_delete(rq->wetcd, claim);
	pthread_mutex_lock(&rq->lock);
	unbusy(rq, it->t.ino);
	if (rc == 0 || (rc != -EAGAIN && rc != -EINTR)) {
		job = job_of(rq, it->t.job);
		if (job && job->open)
			job->open--;
	}
	if (rc == 0)
		rq->files_done++;
	else if (rc == -EAGAIN)
		hold(rq, it->t.ino, RETRY_LATER_S);
	else if (rc != -EINTR) {
		rq->files_failed++;
		hold(rq, it->t.ino, RETRY_FAILED_S);
	}
	pthread_mutex_unlock(&rq->lock);
}

static void *worker_main(void *arg)
{
	struct pando_rebuild *rq = arg;
	void *buf = mds_malloc(COPY_BUF);

	for (;;) {
		struct rebuild_item it;
		int rc;

		pthread_mutex_lock(&rq->lock);
		while (!rq->qlen && !atomic_load(&rq->pace.stop))
			pthread_cond_wait(&rq->cond, &rq->lock);
		if (atomic_load(&rq->pace.stop)) {
			pthread_mutex_unlock(&rq->lock);
			break;
		}
		it = rq->queue[rq->qhead];
		rq->qhead = (rq->qhead + 1) % REBUILD_QUEUE;
		rq->qlen--;
		pthread_mutex_unlock(&rq->lock);
		rc = pando_rebuild_file(rq->mds, &it.t, &rq->pace, buf, COPY_BUF);
		if (rc && rc != -EAGAIN && rc != -EINTR)
			mds_log(MDS_LOG_WARN, __func__,
				"pando: rebuild of inode %" PRIu64 " off OSD %u failed (%d)%s",
				it.t.ino, it.t.osd, rc,
				rc == -EIO ? ": no healthy copy to read" : "");
		else if (!rc)
			mds_log(MDS_LOG_INFO, __func__,
				"pando: inode %" PRIu64 " rebuilt off OSD %u", it.t.ino, it.t.osd);
		finish(rq, &it, rc);
	}
	free(buf);
	return NULL;
}

static int read_job(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct pando_rebuild *rq = arg;
	json_t *o = json_loadb(value, len, 0, NULL);
	json_int_t id = 0, osd = 0;
	json_t *target;
	struct rebuild_job *job;

	if (!o || json_unpack(o, "{sI sI}", "id", &id, "osd", &osd) || id <= 0 || osd <= 0) {
		mds_log(MDS_LOG_WARN, __func__, "pando: rebuild job %s does not parse; ignored",
			key);
		json_decref(o);
		return 0;
	}
	target = json_object_get(o, "target");
	job = job_of(rq, (uint64_t)id);
	if (!job && rq->njobs < REBUILD_MAX_JOBS) {
		job = &rq->jobs[rq->njobs++];
		*job = (struct rebuild_job){
			.id = (uint64_t)id,
			.osd = (uint32_t)osd,
			.target = json_is_integer(target) ? (uint32_t)json_integer_value(target) : 0
		};
	}
	if (job)
		job->seen = true;
	json_decref(o);
	return 0;
}

/* The jobs in etcd now; jobs the mgr deleted (done, cancelled) go. */
static int read_jobs(struct pando_rebuild *rq)
{
	char prefix[256];
	int rc;

	snprintf(prefix, sizeof(prefix), "%srebuild/jobs/", rq->prefix);
	pthread_mutex_lock(&rq->lock);
	for (size_t i = 0; i < rq->njobs; i++)
		rq->jobs[i].seen = false;
	rc = etcd_list(rq->etcd, prefix, 0, read_job, rq, NULL);
	for (size_t i = 0; !rc && i < rq->njobs; i++)
		if (!rq->jobs[i].seen)
			rq->jobs[i--] = rq->jobs[--rq->njobs];
	pthread_mutex_unlock(&rq->lock);
	return rc;
}

static void start_counting(struct pando_rebuild *rq)
{
	if (strcmp(rq->state, "idle") != 0)
		return;
	rq->files_total = rq->files_done = rq->files_failed = rq->bytes_total = 0;
	rq->bytes_base = atomic_load(&rq->pace.bytes);
	rq->started = wall();
	rq->rate_n = 0;
	rq->rate_bps = 0;
	pando_rebuild_load_reset(&rq->pace);
}

static void scan_jobs(struct pando_rebuild *rq)
{
	for (size_t i = 0; i < rq->njobs; i++) {
		struct rebuild_job job;
		uint64_t files = 0, bytes = 0;
		int rc;

		pthread_mutex_lock(&rq->lock);
		job = rq->jobs[i];
		if (!job.scanned) {
			start_counting(rq);
			snprintf(rq->state, sizeof(rq->state), "scanning");
		}
		pthread_mutex_unlock(&rq->lock);
		if (job.scanned)
			continue;
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: rebuild job %" PRIu64 ": finding the files on OSD %u", job.id,
			job.osd);
		rc = pando_rebuild_scan_job(rq, rq->etcd, &job, &files, &bytes);
		pthread_mutex_lock(&rq->lock);
		if (!rc && i < rq->njobs && rq->jobs[i].id == job.id) {
			rq->jobs[i].scanned = true;
			rq->jobs[i].open += files;
			rq->bytes_total += bytes;
		}
		pthread_mutex_unlock(&rq->lock);
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: rebuild job %" PRIu64 ": %" PRIu64 " files (%" PRIu64
			" bytes) to rebuild off OSD %u%s",
			job.id, files, bytes, job.osd,
			rc ? " so far: the scan failed, retried" : "");
	}
}

struct claim_ctx {
	struct pando_rebuild *rq;
	int64_t lease;
	time_t now;
};

static int parse_task(const char *value, size_t len, struct rebuild_item *it)
{
	json_t *o = json_loadb(value, len, 0, NULL);
	json_int_t ino = 0, job = 0, osd = 0, target = 0, bytes = 0;
	int rc = o &&
				 !json_unpack(o, "{sI sI sI s?I s?I}", "ino", &ino, "job", &job,
					      "osd", &osd, "target", &target, "bytes", &bytes) &&
				 ino > 0 && osd > 0
			 ? 0
			 : -EINVAL;

	json_decref(o);
	it->t = (struct pando_rebuild_task){ .ino = (uint64_t)ino,
					     .osd = (uint32_t)osd,
					     .job = (uint64_t)job,
					     .target = (uint32_t)target };
	it->bytes = (uint64_t)bytes;
	return rc;
}

/* One listed task: claimed (a create under the lease) and queued, unless
 * it is running here, held back, or its job was cancelled. */
static int claim_task(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct claim_ctx *cc = arg;
	struct pando_rebuild *rq = cc->rq;
	struct rebuild_item it = { 0 };
	char claim[512], body[160];
	bool skip, cancelled;

	if (parse_task(value, len, &it) || strlen(key) >= sizeof(it.key))
		return 0;
	snprintf(it.key, sizeof(it.key), "%s", key);
	it.rev = rev;
	pthread_mutex_lock(&rq->lock);
	cancelled = it.t.job && !job_of(rq, it.t.job);
	skip = cancelled || rq->qlen == REBUILD_QUEUE || rq->nbusy == REBUILD_QUEUE ||
	       busy(rq, it.t.ino) || held(rq, it.t.ino, cc->now);
	pthread_mutex_unlock(&rq->lock);
	if (cancelled)
		etcd_delete(rq->etcd, key); /* the mgr deleted its job */
	if (skip)
		return rq->qlen >= 2 * rq->parallel;
	snprintf(claim, sizeof(claim), "%srebuild/claims/%s/%016" PRIx64, rq->prefix, rq->name,
		 it.t.ino);
	snprintf(body, sizeof(body), "{\"worker\":\"%s\",\"since\":%.3f}", rq->name, wall());
	if (etcd_create(rq->etcd, claim, body, strlen(body), cc->lease) != 0)
		return 0;
	pthread_mutex_lock(&rq->lock);
	rq->queue[(rq->qhead + rq->qlen++) % REBUILD_QUEUE] = it;
	rq->busy[rq->nbusy++] = it.t.ino;
	pthread_cond_signal(&rq->cond);
	pthread_mutex_unlock(&rq->lock);
	return rq->qlen >= 2 * rq->parallel;
}

static int64_t claim_tasks(struct pando_rebuild *rq)
{
	struct claim_ctx cc = { .rq = rq, .lease = rq->lease, .now = time(NULL) };
	char prefix[256];
	int64_t count = 0;
	int rc;

	snprintf(prefix, sizeof(prefix), "%srebuild/tasks/%s/", rq->prefix, rq->name);
	rc = etcd_list(rq->etcd, prefix, REBUILD_QUEUE, claim_task, &cc, &count);
	return rc < 0 ? -1 : count;
}

/* Under rq->lock: bytes copied per second over the last few seconds. */
static void sample_rate(struct pando_rebuild *rq)
{
	size_t n = sizeof(rq->rate_bytes) / sizeof(rq->rate_bytes[0]);

	memmove(rq->rate_bytes + 1, rq->rate_bytes, (n - 1) * sizeof(rq->rate_bytes[0]));
	rq->rate_bytes[0] = atomic_load(&rq->pace.bytes);
	if (rq->rate_n < n)
		rq->rate_n++;
	rq->rate_bps = rq->rate_n > 1
			       ? (double)(rq->rate_bytes[0] - rq->rate_bytes[rq->rate_n - 1]) /
					 (double)(rq->rate_n - 1)
			       : 0;
}

/* Under rq->lock: jobs scanned here with no task of theirs left open. */
static json_t *jobs_json(struct pando_rebuild *rq, bool done)
{
	json_t *a = json_array();

	for (size_t i = 0; i < rq->njobs; i++)
		if ((rq->jobs[i].scanned && rq->jobs[i].open == 0) == done)
			json_array_append_new(a, json_integer((json_int_t)rq->jobs[i].id));
	return a;
}

static json_t *progress_json(struct pando_rebuild *rq)
{
	uint64_t done, left;
	json_t *o;

	pthread_mutex_lock(&rq->lock);
	done = atomic_load(&rq->pace.bytes) - rq->bytes_base;
	left = rq->bytes_total > done ? rq->bytes_total - done : 0;
	o = json_pack("{ss so so sI sI sI sI sI sf sf sf sI sI}", "state", rq->state, "jobs_done",
		      jobs_json(rq, true), "jobs_active", jobs_json(rq, false), "files_total",
		      (json_int_t)rq->files_total, "files_done", (json_int_t)rq->files_done,
		      "files_failed", (json_int_t)rq->files_failed, "bytes_total",
		      (json_int_t)(rq->bytes_total > done ? rq->bytes_total : done), "bytes_done",
		      (json_int_t)done, "rate_bps", rq->rate_bps, "eta_s",
		      rq->rate_bps > 0 ? (double)left / rq->rate_bps : 0.0, "started", rq->started,
		      "parallel", (json_int_t)rq->parallel, "bandwidth_bps",
		      (json_int_t)rq->pace.bytes_per_s);
	pthread_mutex_unlock(&rq->lock);
	return o;
}

char *pando_rebuild_progress(struct pando_rebuild *rq)
{
	json_t *o = progress_json(rq);
	char *s;

	if (o)
		json_object_set_new(o, "updated", json_real(wall()));
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

static void put_progress(struct pando_rebuild *rq)
{
	pando_progress_put(rq->etcd, rq->lease, &rq->progress, progress_json(rq));
}

/* Under rq->lock: the state from what is left. */
static void settle_state(struct pando_rebuild *rq, int64_t listed, bool new_second)
{
	bool work = listed > 0 || rq->qlen || rq->nbusy;

	if (work)
		start_counting(rq);
	if (listed >= 0)
		rq->files_total = rq->files_done + rq->files_failed + (uint64_t)listed;
	snprintf(rq->state, sizeof(rq->state), "%s", work ? "rebuilding" : "idle");
	if (new_second)
		sample_rate(rq);
}

static void tick(struct pando_rebuild *rq, unsigned n)
{
	uint64_t stale = 0;
	int64_t listed;

	bool new_second = n % TICKS_PER_S == 0;

	if ((new_second || !rq->lease) && etcd_lease_keep(rq->etcd, LEASE_TTL_S, &rq->lease) != 0)
		return; /* etcd away: try again next tick */
	if (read_jobs(rq) != 0)
		return;
	scan_jobs(rq);
	if (n % STALE_SCAN_EVERY == 0)
		pando_rebuild_scan_stale(rq, rq->etcd, &stale);
	listed = claim_tasks(rq);
	pthread_mutex_lock(&rq->lock);
	settle_state(rq, listed, new_second);
	pthread_mutex_unlock(&rq->lock);
	put_progress(rq);
}

static void *dispatcher_main(void *arg)
{
	struct pando_rebuild *rq = arg;
	struct timespec ts = { TICK_MS / 1000, (TICK_MS % 1000) * 1000000L };

	for (unsigned n = 0; !atomic_load(&rq->pace.stop); n++) {
		tick(rq, n);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void rebuild_free(struct pando_rebuild *rq)
{
	if (rq->etcd)
		etcd_client_free(rq->etcd);
	if (rq->wetcd)
		etcd_client_free(rq->wetcd);
	pthread_mutex_destroy(&rq->lock);
	pthread_cond_destroy(&rq->cond);
	pthread_mutex_destroy(&rq->pace.lock);
	pando_progress_key_free(&rq->progress);
	free(rq->workers);
	free(rq->prefix);
	free(rq->name);
	free(rq);
}

int pando_rebuild_start(struct pando_mds *mds, struct pando_rebuild **out)
{
	struct pando_rebuild *rq = mds_calloc(1, sizeof(*rq));
	int rc;

	rq->mds = mds;
	rq->prefix = mds_strdup(mds->cfg.etcd_prefix);
	rq->name = mds_strdup(pando_presence_name(mds->presence));
	rq->parallel = mds->cfg.rebuild_parallel ? mds->cfg.rebuild_parallel : 1;
	rq->pace.bytes_per_s = (uint64_t)mds->cfg.rebuild_bandwidth_mb << 20;
	snprintf(rq->state, sizeof(rq->state), "idle");
	snprintf(rq->progress.key, sizeof(rq->progress.key), "%srebuild/progress/%s", rq->prefix,
		 rq->name);
	pthread_mutex_init(&rq->lock, NULL);
	pthread_cond_init(&rq->cond, NULL);
	pthread_mutex_init(&rq->pace.lock, NULL);
	rc = pando_etcd_client_new(mds, 2000, "rebuild", &rq->etcd);
	if (!rc)
		rc = pando_etcd_client_new(mds, 2000, "rebuild", &rq->wetcd);
	if (rc) {
		rebuild_free(rq);
		return rc;
	}
	rq->workers = mds_calloc(rq->parallel, sizeof(pthread_t));
	for (uint32_t i = 0; i < rq->parallel; i++)
		pthread_create(&rq->workers[i], NULL, worker_main, rq);
	pthread_create(&rq->dispatcher, NULL, dispatcher_main, rq);
	mds_log(MDS_LOG_EVENT, __func__, "pando: rebuild service: %u workers, bandwidth %s%u MB/s",
		rq->parallel, rq->pace.bytes_per_s ? "" : "unlimited ",
		mds->cfg.rebuild_bandwidth_mb);
	*out = rq;
	return 0;
}

void pando_rebuild_stop(struct pando_rebuild *rq)
{
	if (!rq)
		return;
	atomic_store(&rq->pace.stop, true);
	pthread_mutex_lock(&rq->lock);
	pthread_cond_broadcast(&rq->cond);
	pthread_mutex_unlock(&rq->lock);
	pthread_join(rq->dispatcher, NULL);
	for (uint32_t i = 0; i < rq->parallel; i++)
		pthread_join(rq->workers[i], NULL);
	if (rq->lease)
		etcd_lease_revoke(rq->etcd, rq->lease);
	rebuild_free(rq);
}
