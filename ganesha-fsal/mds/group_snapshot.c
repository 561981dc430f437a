/* The group's snapshot on the OSDs (group_snapshot.h). */
#include "group_snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "etcd_client.h"
#include "journal.h"
#include "journal_segment.h"
#include "mds.h"
#include "objio.h"
#include "snapshot_pack.h"
#include "ticker.h"

#define FETCH_LOG_S 10
/* Each snapshot flushes the store and copies it whole to the OSDs: one
 * every few seconds at most, however often it is asked for. */
#define GROUP_SNAPSHOT_GAP_S 5
/* How often the active looks for copies of the snapshot and the journal
 * on OSDs that are out. */
#define GROUP_REBUILD_S 5

static int key_of(const struct pando_mds *mds, const char *what, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%sgroups/%s/%s", mds->cfg.etcd_prefix, mds->cfg.mds_group,
			 what);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int group_snapshot_listing_parse(const char *value, size_t len, struct group_snapshot_listing *s)
{
	json_t *o = len <= JOURNAL_VALUE_MAX ? json_loadb(value, len, 0, NULL) : NULL;
	uint64_t at = 0;
	int rc = -EINVAL;

	memset(s, 0, sizeof(*s));
	if (journal_json_count(o, "index", &s->index) && journal_json_count(o, "seq", &s->seq) &&
	    journal_json_count(o, "bytes", &s->bytes) && journal_json_count(o, "at", &at) &&
	    s->index)
		rc = journal_map_unhex(json_string_value(json_object_get(o, "map")), &s->map);
	s->at = (int64_t)at;
	json_decref(o);
	return rc;
}

char *group_snapshot_listing_format(const struct group_snapshot_listing *s)
{
	char *hex = journal_map_hex(s->map), *value;
	json_t *o = hex ? json_pack("{sI sI sI sI ss}", "index", (json_int_t)s->index, "seq",
				    (json_int_t)s->seq, "bytes", (json_int_t)s->bytes, "at",
				    (json_int_t)s->at, "map", hex)
			: NULL;

	value = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	free(hex);
	return value;
}

/* 0, -ENOENT (none), -EINVAL (not a listing), or etcd's errors. */
static int listing_get(struct etcd_client *c, const char *key, struct group_snapshot_listing *s)
{
	char *value = NULL;
	size_t len = 0;
	int rc = etcd_get(c, key, &value, &len, NULL);

	memset(s, 0, sizeof(*s));
	if (!rc)
		rc = group_snapshot_listing_parse(value, len, s);
	free(value);
	return rc;
}

static int listing_put(struct etcd_client *c, const char *key,
		       const struct group_snapshot_listing *s)
{
	char *value = group_snapshot_listing_format(s);
	int rc = value ? etcd_put(c, key, value, strlen(value), 0) : -EINVAL;

	free(value);
	return rc;
}

/* The pack's bytes on the snapshot's object. */
struct object {
	struct objio io;
	const struct pando_storage_map *map;
	uint64_t size;
};

static int object_write(void *arg, uint64_t off, const void *buf, size_t n)
{
	struct object *o = arg;

	return objio_write(&o->io, o->map, off, buf, n, false);
}

static int object_read(void *arg, uint64_t off, void *buf, size_t n)
{
	struct object *o = arg;
	size_t got = 0;
	int rc = objio_read(&o->io, o->map, o->size, off, buf, n, &got);

	return rc ? rc : got == n ? 0 : -EIO;
}

static uint64_t owner_of(uint64_t index)
{
	return JOURNAL_OBJECT_BIT | GROUP_SNAPSHOT_OBJECT_BIT | index;
}

/* dir packed onto a new object of JOURNAL_COPIES mirrors, stable on every
 * copy; s->map and s->bytes set.  Nothing left on the OSDs on failure. */
static int store_object(struct pando_mds *mds, const char *dir, struct group_snapshot_listing *s)
{
	struct object o = { .io = { .conns = mds->conns, .owner = owner_of(s->index) } };
	int rc = pando_journal_place(mds,
				     JOURNAL_OBJECT_BIT | GROUP_SNAPSHOT_OBJECT_BIT | s->index << 2,
				     s->index, &s->map);

	if (!rc)
		rc = objio_create(&o.io, s->map);
	o.map = s->map;
	if (!rc)
		rc = snapshot_pack(dir, s->seq, object_write, &o, &s->bytes);
	if (!rc)
		rc = objio_flush(&o.io, s->map);
	if (rc && s->map) {
		objio_remove(&o.io, s->map);
		pando_map_free(s->map);
		s->map = NULL;
	}
	return rc;
}

struct group_snapshot_server {
	struct pando_mds *mds;
	struct pando_ticker *ticker;
	struct etcd_client *etcd;
	time_t next;  /* no snapshot before, whoever asks (GROUP_SNAPSHOT_GAP_S) */
	time_t due;   /* the next one on schedule (Snapshot_Interval) */
	uint64_t seq; /* the listed one's: on schedule only once the store is past it */
	int failures; /* in a row: one line for the first, then every tenth */
	time_t rebuild_next;
	int rebuild_failures; /* the same, for rebuild_tick */
	char want_key[320], key[320], dir[PATH_MAX];
};

/* The new snapshot listed, the request answered, the one before gone. */
static int publish(struct group_snapshot_server *g, struct group_snapshot_listing *s,
		   struct group_snapshot_listing *old)
{
	struct objio io = { .conns = g->mds->conns, .owner = owner_of(old->index) };
	int rc = listing_put(g->etcd, g->key, s);

	if (rc)
		return rc;
	etcd_delete(g->etcd, g->want_key);
	if (old->map && objio_remove(&io, old->map))
		mds_log(MDS_LOG_WARN, __func__,
			"pando: group %s: snapshot %" PRIu64
			" replaced, some of its copies left on the OSDs",
			g->mds->cfg.mds_group, old->index);
	return 0;
}

static int make(struct group_snapshot_server *g, const char *why, uint64_t *seq)
{
	struct group_snapshot_listing old, s = { 0 };
	struct objio io = { .conns = g->mds->conns };
	int rc = listing_get(g->etcd, g->key, &old);

	if (rc == -ENOENT || rc == -EINVAL) /* none, or one no standby can use */
		rc = 0;
	snapshot_dir_remove(g->dir);
	if (!rc)
		rc = ns_snapshot(g->mds->ns, g->dir, &s.seq);
	s.index = old.index + 1;
	s.at = (int64_t)time(NULL);
	if (!rc)
		rc = store_object(g->mds, g->dir, &s);
	if (!rc) {
		rc = publish(g, &s, &old);
		io.owner = owner_of(s.index);
		if (rc)
			objio_remove(&io, s.map);
	}
	snapshot_dir_remove(g->dir);
	if (!rc)
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: group %s: snapshot %" PRIu64 " at seq %" PRIu64 " (%" PRIu64
			" bytes) on OSDs %u, %u, %u %s",
			g->mds->cfg.mds_group, s.index, s.seq, s.bytes, s.map->comp[0].osd_id,
			s.map->comp[1].osd_id, s.map->comp[2].osd_id, why);
	*seq = s.seq;
	pando_map_free(s.map);
	pando_map_free(old.map);
	return rc;
}

/* Whether Snapshot_Interval says a snapshot is due: its time has come
 * and the store holds records the listed one does not. */
static bool due(struct group_snapshot_server *g)
{
	uint64_t seq = 0, term = 0;

	if (!g->mds->cfg.snapshot_interval_s || time(NULL) < g->due)
		return false;
	if (ns_applied(g->mds->ns, &seq, &term) == 0 && seq > g->seq)
		return true;
	g->due = time(NULL) + g->mds->cfg.snapshot_interval_s;
	return false;
}

static char *listing_format(const void *listing, const struct pando_storage_map *map)
{
	struct group_snapshot_listing s = *(const struct group_snapshot_listing *)listing;

	s.map = (struct pando_storage_map *)map;
	return group_snapshot_listing_format(&s);
}

/* The listed snapshot's copies that are out, rebuilt (*rebuilt). */
static int rebuild_snapshot(struct group_snapshot_server *g, size_t *rebuilt)
{
	struct group_snapshot_listing s = { 0 };
	char *value = NULL;
	size_t len = 0;
	int64_t rev = 0;
	int rc = etcd_get(g->etcd, g->key, &value, &len, &rev);

	*rebuilt = 0;
	if (!rc)
		rc = group_snapshot_listing_parse(value, len, &s);
	if (!rc && pando_journal_map_degraded(g->mds, s.map))
		rc = pando_journal_relist(g->mds, g->etcd, g->key, rev, owner_of(s.index), s.map,
					  s.index, listing_format, &s, rebuilt);
	free(value);
	pando_map_free(s.map);
	return rc == -ENOENT || rc == -EEXIST ? 0 : rc; /* none, or a new one listed */
}

/* What a member starting again reads, the snapshot and the journal's
 * segments, back on JOURNAL_COPIES copies each; here, in the thread that
 * makes and replaces snapshots, so a rebuilt copy is never left behind by
 * a snapshot's replacement. */
static void rebuild_tick(struct group_snapshot_server *g)
{
	size_t snap = 0, segs = 0;
	int rc, rc2;

	if (time(NULL) < g->rebuild_next)
		return;
	g->rebuild_next = time(NULL) + GROUP_REBUILD_S;
	rc = rebuild_snapshot(g, &snap);
	rc2 = pando_journal_rebuild(g->mds, g->etcd, g->mds->cfg.mds_group, &segs);
	if (!rc)
		rc = rc2;
	if (rc && g->rebuild_failures++ % 10 == 0)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: group %s: cannot rebuild every copy on an OSD that is out of its"
			" snapshot and journal: %s (%d time(s) in a row); trying again every %d s",
			g->mds->cfg.mds_group, strerror(-rc), g->rebuild_failures, GROUP_REBUILD_S);
	if (!rc)
		g->rebuild_failures = 0;
}

static bool serve_tick(void *arg)
{
	struct group_snapshot_server *g = arg;
	uint64_t seq = 0;
	char *value = NULL;
	size_t len = 0;
	int rc;
	bool asked;

	rebuild_tick(g);
	rc = etcd_get(g->etcd, g->want_key, &value, &len, NULL);
	asked = rc == 0;

	free(value);
	if ((!asked && !due(g)) || time(NULL) < g->next)
		return true; /* none asked or due, etcd away, or too soon: look again */
	rc = make(g, asked ? "for a new member" : "on schedule", &seq);
	g->next = time(NULL) + GROUP_SNAPSHOT_GAP_S;
	if (rc && g->failures++ % 10 == 0)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: group %s: cannot make a snapshot: %s"
			" (%d time(s) in a row); trying again every %d s",
			g->mds->cfg.mds_group, strerror(-rc), g->failures, GROUP_SNAPSHOT_GAP_S);
	if (!rc) {
		g->failures = 0;
		g->seq = seq;
		g->due = time(NULL) + g->mds->cfg.snapshot_interval_s;
	}
	return true;
}

/* The schedule from the listed snapshot, if any: due an interval after
 * it was listed (or after now). */
static void schedule(struct group_snapshot_server *g)
{
	struct group_snapshot_listing s;
	int rc = listing_get(g->etcd, g->key, &s);

	g->seq = rc ? 0 : s.seq;
	g->due = (rc ? time(NULL) : (time_t)s.at) + g->mds->cfg.snapshot_interval_s;
	if (!rc)
		pando_map_free(s.map);
}

int group_snapshot_serve(struct pando_mds *mds, struct group_snapshot_server **out)
{
	struct group_snapshot_server *g = mds_calloc(1, sizeof(*g));
	int n = snprintf(g->dir, sizeof(g->dir), "%s.snapshot", mds->cfg.db_path);
	int rc = n < 0 || (size_t)n >= sizeof(g->dir) ? -ENAMETOOLONG : 0;

	g->mds = mds;
	if (!rc)
		rc = key_of(mds, "snapshot", g->key, sizeof(g->key));
	if (!rc)
		rc = key_of(mds, "snapshot_wanted", g->want_key, sizeof(g->want_key));
	if (!rc)
		rc = pando_etcd_client_new(mds, 2000, "the group's snapshot server", &g->etcd);
	if (!rc)
		schedule(g);
	if (!rc)
		rc = pando_ticker_start(serve_tick, g, GROUP_SNAPSHOT_POLL_MS, &g->ticker);
	if (rc) {
		mds_log(MDS_LOG_CRIT, __func__, "pando: group %s: cannot serve snapshots: %s",
			mds->cfg.mds_group, strerror(-rc));
		group_snapshot_serve_stop(g);
		g = NULL;
	}
	*out = g;
	return rc;
}

void group_snapshot_serve_stop(struct group_snapshot_server *g)
{
	if (!g)
		return;
	pando_ticker_stop(g->ticker);
	if (g->etcd)
		etcd_client_free(g->etcd);
	free(g);
}

/* s unpacked into dir from the first copy that gives a well-formed pack:
 * a copy whose bytes fail a CRC is skipped for the next. */
static int unpack(struct pando_mds *mds, const struct group_snapshot_listing *s, const char *dir,
		  uint64_t *seq)
{
	struct object o = { .io = { .conns = mds->conns, .owner = owner_of(s->index) },
			    .map = s->map,
			    .size = s->bytes };
	int rc = -EIO;

	for (uint32_t c = 0; c < pando_map_width(s->map) && c < OBJIO_MAX_SKIP; c++) {
		rc = snapshot_unpack(object_read, &o, s->bytes, dir, seq);
		if (rc != -EINVAL)
			return rc;
		mds_log(MDS_LOG_WARN, __func__,
			"pando: group %s: snapshot %" PRIu64 ": the copy on OSD %u: %s",
			mds->cfg.mds_group, s->index, s->map->comp[c].osd_id, strerror(-rc));
		o.io.skip[o.io.nskip++] = s->map->comp[c].osd_id;
	}
	return rc;
}

/* 0 when the journal still holds every record after seq: its first
 * segment (the only end trimmed) starts at seq + 1 or before; -EAGAIN
 * when not, or etcd's errors. */
static int journal_covers(struct pando_mds *mds, struct etcd_client *c, uint64_t seq)
{
	struct journal_segment *segs = NULL;
	size_t n = 0;
	char prefix[320];
	int rc = journal_segment_prefix(mds->cfg.etcd_prefix, mds->cfg.mds_group, prefix,
					sizeof(prefix));

	if (!rc)
		rc = journal_segments_list(c, prefix, &segs, &n);
	if (!rc && (n == 0 || segs[0].first_seq > seq + 1))
		rc = -EAGAIN;
	journal_segments_free(segs, n);
	return rc;
}

int group_snapshot_get(struct pando_mds *mds, struct etcd_client *c, uint64_t min_index,
		       bool covered, const char *dir, uint64_t *seq)
{
	struct group_snapshot_listing s;
	char key[320];
	int rc = key_of(mds, "snapshot", key, sizeof(key));

	if (rc)
		return rc;
	rc = listing_get(c, key, &s);
	if (!rc && s.index < min_index)
		rc = -EAGAIN;
	if (!rc && covered)
		rc = journal_covers(mds, c, s.seq);
	if (!rc)
		rc = unpack(mds, &s, dir, seq);
	pando_map_free(s.map);
	return rc;
}

int group_snapshot_hold(struct pando_mds *mds, struct etcd_client *c, int64_t now, uint64_t *floor)
{
	struct group_snapshot_listing s;
	char key[320];
	int rc = key_of(mds, "snapshot", key, sizeof(key));

	if (!rc)
		rc = listing_get(c, key, &s);
	if (!rc && now - s.at < GROUP_SNAPSHOT_HOLD_S && s.seq < *floor)
		*floor = s.seq;
	if (!rc)
		pando_map_free(s.map);
	return rc == -ENOENT || rc == -EINVAL ? 0 : rc;
}

/* The standby's side. */
struct fetch {
	struct pando_mds *mds;
	struct etcd_client *etcd;
	const char *name;
	char key[320], want_key[320], dir[PATH_MAX];
};

/* The snapshot's copy in place of Db_Path (absent, or an empty directory). */
static int install(struct fetch *f)
{
	if (rmdir(f->mds->cfg.db_path) && errno != ENOENT)
		return -errno;
	if (rename(f->dir, f->mds->cfg.db_path))
		return -errno;
	return pando_sync_dir_of(f->mds->cfg.db_path);
}

static int ask(struct fetch *f, uint64_t *before)
{
	struct group_snapshot_listing s;
	json_t *o = json_pack("{ss}", "from", f->name);
	char *value = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc = listing_get(f->etcd, f->key, &s);

	*before = s.index;
	pando_map_free(s.map);
	if (rc == -ENOENT || rc == -EINVAL)
		rc = 0;
	if (!rc)
		rc = value ? etcd_put(f->etcd, f->want_key, value, strlen(value), 0) : -EINVAL;
	free(value);
	json_decref(o);
	return rc;
}

/* Until a snapshot later than before is unpacked, or stop() says so;
 * from GROUP_SNAPSHOT_FALLBACK_S on, the one listed when it asked will
 * do (group_snapshot.h). */
static int wait_for(struct fetch *f, uint64_t before, bool (*stop)(void), uint64_t *seq)
{
	time_t asked = time(NULL), logged = asked;
	bool said = false;

	for (;;) {
		bool fallback = before && time(NULL) - asked >= GROUP_SNAPSHOT_FALLBACK_S;
		int rc = group_snapshot_get(f->mds, f->etcd, fallback ? before : before + 1,
					    fallback, f->dir, seq);

		if (fallback && !said)
			mds_log(MDS_LOG_WARN, __func__,
				"pando: group %s: no active made a snapshot in %d s: %s takes "
				"snapshot %" PRIu64 " if the journal still holds what follows it",
				f->mds->cfg.mds_group, GROUP_SNAPSHOT_FALLBACK_S, f->name, before);
		said |= fallback;
		if (!rc)
			return 0;
		if (stop())
			return -EINTR;
		if (time(NULL) - logged >= FETCH_LOG_S) {
			mds_log(MDS_LOG_WARN, __func__,
				"pando: group %s: still waiting for the active's snapshot (%s)",
				f->mds->cfg.mds_group,
				rc != -EAGAIN && rc != -ENOENT ? strerror(-rc)
				: fallback ? "the one listed is too old for the journal"
					   : "none yet");
			logged = time(NULL);
		}
		usleep(GROUP_SNAPSHOT_POLL_MS * 1000);
	}
}

int group_snapshot_fetch(struct pando_mds *mds, const char *name, bool (*stop)(void), uint64_t *seq)
{
	struct fetch f = { .mds = mds, .name = name };
	uint64_t before = 0;
	int n = snprintf(f.dir, sizeof(f.dir), "%s.fetch", mds->cfg.db_path);
	int rc = n < 0 || (size_t)n >= sizeof(f.dir) ? -ENAMETOOLONG : 0;

	if (!rc)
		rc = key_of(mds, "snapshot", f.key, sizeof(f.key));
	if (!rc)
		rc = key_of(mds, "snapshot_wanted", f.want_key, sizeof(f.want_key));
	if (!rc)
		rc = pando_etcd_client_new(mds, 2000, "the standby's snapshot fetch", &f.etcd);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: group %s: no store at %s: %s asks the active for a snapshot",
		mds->cfg.mds_group, mds->cfg.db_path, name);
	while (!rc && (rc = ask(&f, &before)) != 0 && !stop()) {
		mds_log(MDS_LOG_WARN, __func__, "pando: group %s: cannot ask for a snapshot: %s",
			mds->cfg.mds_group, strerror(-rc));
		sleep(1);
		rc = 0;
	}
	if (rc && stop())
		rc = -EINTR;
	snapshot_dir_remove(f.dir); /* a crashed fetch's */
	if (!rc)
		rc = wait_for(&f, before, stop, seq);
	if (!rc)
		rc = install(&f);
	if (!rc)
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: group %s: %s starts from snapshot at seq %" PRIu64,
			mds->cfg.mds_group, name, *seq);
	else if (rc != -EINTR)
		mds_log(MDS_LOG_CRIT, __func__, "pando: group %s: cannot start from a snapshot: %s",
			mds->cfg.mds_group, strerror(-rc));
	snapshot_dir_remove(f.dir);
	if (f.etcd)
		etcd_client_free(f.etcd);
	return rc;
}
