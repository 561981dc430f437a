/* Background scrub (../README.md, "Scrub"): every file's components
 * compared extent by extent through the OSDs' checksums
 * (../cluster/scrub_io.h), a bad extent rewritten from a good mirror.
 *
 * One thread per engine.  A pass walks the storage maps in inode order,
 * about a second of work per tick, and keeps its place in
 * <Db_Path>.scrub, so a restart resumes it.  A file is scrubbed frozen
 * (no writer may race a repair); a file with writers at work is left for
 * the next pass, and a scrub yields a file as soon as a client wants to
 * write it.  Passes run every Scrub_Interval hours, or when the mgr asks
 * (scrub/request); progress goes to scrub/progress/<mds> and dbus. */
#include "mds.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd_client.h"
#include "grants.h"
#include "progress_put.h"
#include "rebuild.h"
#include "scrub.h"
#include "scrub_io.h"

#define LEASE_TTL_S 10
#define TICK_S 1
#define SAVE_EVERY_S 5

struct scrub_counts {
	uint64_t pass, cursor, files_total, files_done, bytes_done;
	uint64_t mismatches, repaired, unrepairable, repair_failed, yielded;
	double started, last_pass_end;
	int64_t request_seen;
	bool running;
};

struct pando_scrub {
	struct pando_mds *mds;
	struct etcd_client *etcd; /* NULL without Etcd */
	char *prefix, *name, *path;
	int64_t lease;
	uint32_t interval_s;
	struct pando_rebuild_pace pace;
	pthread_t thread;
	atomic_int asked; /* dbus: 1 start, 2 stop; the thread acts */
	struct pando_progress_key progress;
	pthread_mutex_t lock; /* c, written by the thread only */
	struct scrub_counts c;
	time_t saved_at;
};

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static json_t *counts_json(const struct scrub_counts *c)
{
	return json_pack("{sb sI sI sI sI sI sI sI sI sI sI sf sf sI}", "running", c->running,
			 "pass", (json_int_t)c->pass, "cursor", (json_int_t)c->cursor,
			 "files_total", (json_int_t)c->files_total, "files_done",
			 (json_int_t)c->files_done, "bytes_done", (json_int_t)c->bytes_done,
			 "mismatches", (json_int_t)c->mismatches, "repaired",
			 (json_int_t)c->repaired, "unrepairable", (json_int_t)c->unrepairable,
			 "repair_failed", (json_int_t)c->repair_failed, "yielded",
			 (json_int_t)c->yielded, "started", c->started, "last_pass_end",
			 c->last_pass_end, "request_seen", (json_int_t)c->request_seen);
}

/* The place in the pass, written atomically (tmp, fsync, rename). */
static void save(struct pando_scrub *s)
{
	char tmp[PATH_MAX];
	json_t *o;
	char *text;
	int fd;

	pthread_mutex_lock(&s->lock);
	o = counts_json(&s->c);
	pthread_mutex_unlock(&s->lock);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->path);
	fd = text ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
	if (fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && !fsync(fd) &&
	    !close(fd))
		fd = rename(tmp, s->path) ? -1 : 0;
	else if (fd >= 0)
		close(fd);
	if (fd < 0)
		mds_log(MDS_LOG_WARN, __func__, "pando: scrub: cannot keep its place in %s",
			s->path);
	free(text);
	s->saved_at = time(NULL);
}

static void load(struct pando_scrub *s)
{
	json_t *o = json_load_file(s->path, 0, NULL);
	struct scrub_counts *c = &s->c;
	json_int_t v[11] = { 0 };
	int running = 0;

	if (!o)
		return;
	if (!json_unpack(o, "{sb sI sI sI sI sI sI sI sI sI sI sF sF sI}", "running", &running,
			 "pass", &v[0], "cursor", &v[1], "files_total", &v[2], "files_done", &v[3],
			 "bytes_done", &v[4], "mismatches", &v[5], "repaired", &v[6],
			 "unrepairable", &v[7], "repair_failed", &v[8], "yielded", &v[9], "started",
			 &c->started, "last_pass_end", &c->last_pass_end, "request_seen", &v[10])) {
		*c = (struct scrub_counts){ .running = running,
					    .pass = v[0],
					    .cursor = v[1],
					    .files_total = v[2],
					    .files_done = v[3],
					    .bytes_done = v[4],
					    .mismatches = v[5],
					    .repaired = v[6],
					    .unrepairable = v[7],
					    .repair_failed = v[8],
					    .yielded = v[9],
					    .started = c->started,
					    .last_pass_end = c->last_pass_end,
					    .request_seen = v[10] };
		if (c->running)
			mds_log(MDS_LOG_EVENT, __func__,
				"pando: scrub pass %" PRIu64 " resumes after inode %" PRIu64,
				c->pass, c->cursor);
	}
	json_decref(o);
}

static int count_map(void *arg, uint64_t ino, const void *blob, size_t len)
{
	(*(uint64_t *)arg)++;
	return 0;
}

static void begin_pass(struct pando_scrub *s, const char *why)
{
	uint64_t files = 0;

	ns_map_list(s->mds->ns, count_map, &files);
	pthread_mutex_lock(&s->lock);
	s->c = (struct scrub_counts){ .running = true,
				      .pass = s->c.pass + 1,
				      .files_total = files,
				      .started = wall(),
				      .last_pass_end = s->c.last_pass_end,
				      .request_seen = s->c.request_seen };
	pthread_mutex_unlock(&s->lock);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: scrub pass %" PRIu64 " begins (%s): %" PRIu64 " files", s->c.pass, why,
		files);
	save(s);
}

static void end_pass(struct pando_scrub *s, const char *how)
{
	pthread_mutex_lock(&s->lock);
	s->c.running = false;
	s->c.last_pass_end = wall();
	pthread_mutex_unlock(&s->lock);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: scrub pass %" PRIu64 " %s: %" PRIu64 " files, %" PRIu64
		" bytes read, %" PRIu64 " bad extents (%" PRIu64 " repaired, %" PRIu64
		" unrepairable, %" PRIu64 " repairs failed), %" PRIu64 " files busy",
		s->c.pass, how, s->c.files_done, s->c.bytes_done, s->c.mismatches, s->c.repaired,
		s->c.unrepairable, s->c.repair_failed, s->c.yielded);
	save(s);
}

struct file_scrub {
	struct pando_scrub *s;
	uint64_t ino;
	double until;
};

static const char *what_name(enum objio_scrub_what w)
{
	switch (w) {
	case OBJIO_SCRUB_MISMATCH:
		return "does not match its checksum";
	case OBJIO_SCRUB_UNREADABLE:
		return "cannot be read";
	case OBJIO_SCRUB_DIVERGED:
		return "differs from the other mirror";
	default:
		return "could not be checked";
	}
}

static void report(void *arg, const struct objio_scrub_problem *p)
{
	struct file_scrub *fs = arg;

	if (p->what == OBJIO_SCRUB_UNREACHABLE)
		return; /* rebuild's business, not a scrub finding */
	mds_log(MDS_LOG_WARN, __func__,
		"pando: scrub: inode %" PRIu64 " extent %" PRIu64 " on OSD %u "
		"(object %" PRIu64 ") %s: %s",
		fs->ino, p->extent, p->osd_id, p->object_id, what_name(p->what),
		p->outcome == OBJIO_SCRUB_REPAIRED       ? "repaired from a good mirror"
		: p->outcome == OBJIO_SCRUB_UNREPAIRABLE ? "UNREPAIRABLE (no good copy)"
							 : "repair FAILED");
}

/* Paced; gives the file back to a client that wants to write it. */
static int pace(void *arg, uint64_t bytes)
{
	struct file_scrub *fs = arg;

	pando_rebuild_pace(&fs->s->pace, bytes);
	if (atomic_load(&fs->s->pace.stop))
		return -EINTR;
	return pando_grants_wanted(fs->s->mds->grants, fs->ino) ? -EAGAIN : 0;
}

static int scrub_file(struct file_scrub *fs, const struct pando_storage_map *map,
		      struct objio_scrub_result *res)
{
	struct pando_scrub *s = fs->s;
	uint64_t ino = fs->ino;
	struct ns_attr a;
	struct objio io;
	int rc = ns_getattr(s->mds->ns, ino, &a);

	*res = (struct objio_scrub_result){
		.report = report, .report_arg = fs, .pace = pace, .pace_arg = fs
	};
	if (rc || map->shape.raid == PANDO_RS)
		return 0; /* gone since the listing; RS: not yet */
	if (pando_grants_busy(s->mds->grants, ino))
		return -EAGAIN;
	rc = pando_grants_freeze(s->mds->grants, ino, "scrub");
	if (rc)
		return rc == -ETIMEDOUT ? -EAGAIN : rc;
	rc = pando_objio_init(s->mds, ino, &io);
	if (!rc)
		rc = objio_scrub(&io, map, a.size, res);
	pando_grants_thaw(s->mds->grants, ino);
	return rc;
}

static void count(struct pando_scrub *s, uint64_t ino, int rc, const struct objio_scrub_result *r)
{
	pthread_mutex_lock(&s->lock);
	s->c.cursor = ino;
	s->c.files_done++;
	s->c.bytes_done += r->bytes_read;
	s->c.mismatches += r->mismatches;
	s->c.repaired += r->repaired;
	s->c.unrepairable += r->unrepairable;
	s->c.repair_failed += r->repair_failed;
	s->c.yielded += rc == -EAGAIN;
	pthread_mutex_unlock(&s->lock);
}

static int visit(void *arg, uint64_t ino, const void *blob, size_t len)
{
	struct file_scrub *fs = arg;
	struct pando_scrub *s = fs->s;
	struct pando_storage_map *map;
	struct objio_scrub_result r = { 0 };
	int rc;

	if (atomic_load(&s->pace.stop) || !s->c.running)
		return 1;
	if (pando_map_decode(blob, len, &map) == 0) {
		fs->ino = ino;
		rc = scrub_file(fs, map, &r);
		pando_map_free(map);
		if (rc == -EINTR)
			return 1;
		if (rc && rc != -EAGAIN)
			mds_log(MDS_LOG_WARN, __func__,
				"pando: scrub of inode %" PRIu64 " failed (%d)", ino, rc);
		count(s, ino, rc, &r);
	}
	if (time(NULL) - s->saved_at >= SAVE_EVERY_S)
		save(s);
	return wall() >= fs->until;
}

/* About a second of the pass; the pass ends when the walk does. */
static void step(struct pando_scrub *s)
{
	struct file_scrub fs = { .s = s, .until = wall() + TICK_S };
	int rc = ns_map_list_from(s->mds->ns, s->c.cursor, visit, &fs);

	if (rc == 0 && s->c.running)
		end_pass(s, "done");
}

/* scrub/request from the mgr: a newer id starts or stops a pass. */
static void read_request(struct pando_scrub *s)
{
	char key[256], *value = NULL;
	json_int_t id = 0;
	const char *action = "";
	size_t len;
	json_t *o;

	snprintf(key, sizeof(key), "%sscrub/request", s->prefix);
	if (etcd_get(s->etcd, key, &value, &len, NULL) != 0)
		return;
	o = json_loadb(value, len, 0, NULL);
	free(value);
	if (!o || json_unpack(o, "{sI ss}", "id", &id, "action", &action) ||
	    id <= s->c.request_seen) {
		json_decref(o);
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->c.request_seen = id;
	pthread_mutex_unlock(&s->lock);
	if (!strcmp(action, "start") && !s->c.running)
		begin_pass(s, "asked");
	else if (!strcmp(action, "stop") && s->c.running)
		end_pass(s, "stopped when asked");
	json_decref(o);
}

static json_t *progress_json(struct pando_scrub *s)
{
	json_t *o;

	pthread_mutex_lock(&s->lock);
	o = counts_json(&s->c);
	pthread_mutex_unlock(&s->lock);
	if (!o)
		return NULL;
	json_object_set_new(o, "state", json_string(s->c.running ? "running" : "idle"));
	json_object_set_new(o, "bandwidth_bps", json_integer((json_int_t)s->pace.bytes_per_s));
	return o;
}

static void put_progress(struct pando_scrub *s)
{
	if (etcd_lease_keep(s->etcd, LEASE_TTL_S, &s->lease) == 0)
		pando_progress_put(s->etcd, s->lease, &s->progress, progress_json(s));
}

static void dbus_request(struct pando_scrub *s);

static void *scrub_main(void *arg)
{
	struct pando_scrub *s = arg;
	struct timespec idle = { TICK_S, 0 };

	while (!atomic_load(&s->pace.stop)) {
		if (s->etcd)
			read_request(s);
		dbus_request(s);
		if (!s->c.running && s->interval_s && wall() - s->c.last_pass_end >= s->interval_s)
			begin_pass(s, "interval");
		if (s->c.running)
			step(s);
		else
			nanosleep(&idle, NULL);
		if (s->etcd)
			put_progress(s);
	}
	save(s);
	return NULL;
}

char *pando_scrub_progress(struct pando_scrub *s)
{
	return pando_progress_text(progress_json(s));
}

void pando_scrub_request(struct pando_scrub *s, bool start)
{
	atomic_store(&s->asked, start ? 1 : 2);
}

static void dbus_request(struct pando_scrub *s)
{
	int asked = atomic_exchange(&s->asked, 0);

	if (asked == 1 && !s->c.running)
		begin_pass(s, "asked over dbus");
	else if (asked == 2 && s->c.running)
		end_pass(s, "stopped when asked");
}

int pando_scrub_start(struct pando_mds *mds, struct pando_scrub **out)
{
	struct pando_scrub *s = mds_calloc(1, sizeof(*s));
	size_t n = strlen(mds->cfg.db_path) + 8;
	int rc = 0;

	s->mds = mds;
	s->interval_s = mds->cfg.scrub_interval_h * 3600;
	s->pace.bytes_per_s = (uint64_t)mds->cfg.scrub_bandwidth_mb << 20;
	s->path = mds_malloc(n);
	snprintf(s->path, n, "%s.scrub", mds->cfg.db_path);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->pace.lock, NULL);
	load(s);
	if (!s->c.last_pass_end)
		s->c.last_pass_end = wall(); /* the first pass an interval from now */
	if (mds->cfg.etcd[0]) {
		s->prefix = mds_strdup(mds->cfg.etcd_prefix);
		s->name = mds_strdup(pando_presence_name(mds->presence));
		snprintf(s->progress.key, sizeof(s->progress.key), "%sscrub/progress/%s", s->prefix,
			 s->name);
		rc = pando_etcd_client_new(mds, 2000, "scrub", &s->etcd);
	}
	if (!rc)
		rc = -pthread_create(&s->thread, NULL, scrub_main, s);
	if (rc) {
		if (s->etcd)
			etcd_client_free(s->etcd);
		free(s->prefix);
		free(s->name);
		free(s->path);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void pando_scrub_stop(struct pando_scrub *s)
{
	if (!s)
		return;
	atomic_store(&s->pace.stop, true);
	pthread_join(s->thread, NULL);
	if (s->etcd && s->lease)
		etcd_lease_revoke(s->etcd, s->lease);
	if (s->etcd)
		etcd_client_free(s->etcd);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->pace.lock);
	pando_progress_key_free(&s->progress);
	free(s->prefix);
	free(s->name);
	free(s->path);
	free(s);
}
