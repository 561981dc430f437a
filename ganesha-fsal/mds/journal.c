/* The journal's writer (journal.h): appends queue records, one thread
 * writes them out to every copy and releases the waiters. */
#include "journal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd_client.h"
#include "journal_segment.h"
#include "mds.h"
#include "mds_clock.h"
#include "objio.h"
#include "pando/placement.h"
#include "view.h"

#define JOURNAL_PENDING_MAX (64u << 20)
#define JOURNAL_STRIPE_UNIT (1u << 20)
#define JOURNAL_ROLLS_MAX 3 /* new segments for one write whose copies fail */
/* How long a write that cannot reach its copies is tried again before the
 * journal fails for good: longer than the OSD connections' back-off after
 * a failure (2 s), so that OSDs restarting together cost a wait, not the
 * lead. */
#define JOURNAL_GIVE_UP_MS 10000
#define JOURNAL_RETRY_MS 250
/* How often an idle writer looks at its segment's copies. */
#define JOURNAL_IDLE_MS 1000

struct pando_journal {
	struct pando_mds *mds;
	struct etcd_client *etcd;
	char prefix[256];
	uint64_t term, segment_bytes;
	bool (*leading)(void *arg);
	void *leading_arg;
	uint64_t (*trim_floor)(void *arg);
	void *trim_arg;
	void (*failed_fn)(void *arg);
	void *failed_arg;
	/* the writer thread's own */
	struct journal_segment seg; /* map NULL until the first write */
	uint64_t off;               /* bytes written into seg */
	bool trim_due;              /* a new segment: trim once its waiters are released */
	bool stay;                  /* seg has a copy out and no new one could be placed */
	uint64_t next_index;
	/* OSDs of copies whose write failed since the last write that went
	 * through: a new segment's copies go elsewhere. */
	uint32_t avoid[JOURNAL_ROLLS_MAX * JOURNAL_COPIES];
	size_t navoid;

	struct ns_journal hook; /* pando_journal_ns */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* pending grew, durable moved, failed, stop */
	uint8_t *pending;
	size_t npending, cap;
	uint64_t first, last; /* seqs of the first and last pending record */
	uint64_t durable;     /* every record up to it is on every copy */
	int failed;
	bool stop;
};

static bool avoided(const struct pando_journal *j, uint32_t osd_id)
{
	for (size_t i = 0; i < j->navoid; i++)
		if (j->avoid[i] == osd_id)
			return true;
	return false;
}

/* Copy c of map on an OSD the journal does not avoid: -ENOSPC if no
 * other qualifies (placement's own constraints: one copy per domain). */
static int place_around(const struct pando_journal *j, const struct pando_view *v, uint64_t index,
			struct pando_storage_map *map, int c)
{
	uint32_t osd_id = map->comp[c].osd_id;

	for (uint64_t seed = index; avoided(j, osd_id) && seed < index + JOURNAL_COPIES; seed++) {
		int rc = pando_place_replacement(v->placement, map, 0, (uint32_t)c, seed, &osd_id);

		if (rc)
			return rc;
	}
	if (avoided(j, osd_id))
		return -ENOSPC;
	return pando_map_replace_component(map, 0, (uint32_t)c, osd_id, map->comp[c].object_id);
}

int pando_journal_place(struct pando_mds *mds, uint64_t first_object_id, uint64_t seed,
			struct pando_storage_map **map)
{
	const struct pando_view *v = pando_view_get(mds);
	struct pando_layout_request req = {
		.raid = PANDO_RAID1,
		.copies = JOURNAL_COPIES,
		.data = 1,
		.stripe_unit = JOURNAL_STRIPE_UNIT,
		.max_groups = 1,
		.seed = seed,
		.partition_id = mds->conf.map.partition,
		.first_object_id = first_object_id,
	};

	*map = NULL;
	return v->placement ? pando_place(v->placement, &req, map) : -ENOSPC;
}

/* Segment index's map, its copies away from the OSDs the journal avoids. */
static int place(struct pando_journal *j, uint64_t index, struct pando_storage_map **map)
{
	const struct pando_view *v = pando_view_get(j->mds);
	int rc = pando_journal_place(j->mds, JOURNAL_OBJECT_BIT | index << 2, index, map);

	for (int c = 0; !rc && c < JOURNAL_COPIES; c++)
		rc = place_around(j, v, index, *map, c);
	if (rc && *map) {
		pando_map_free(*map);
		*map = NULL;
	}
	return rc;
}

/* A new segment for the records from seq first on: placed, its objects
 * made, listed in etcd, and only then written to. */
static int open_segment(struct pando_journal *j, uint64_t first)
{
	struct journal_segment s = { .index = j->next_index, .term = j->term, .first_seq = first };
	struct objio io = { .conns = j->mds->conns, .owner = JOURNAL_OBJECT_BIT | s.index };
	int rc = place(j, s.index, &s.map);

	if (!rc)
		rc = objio_create(&io, s.map);
	if (!rc)
		rc = journal_segment_put(j->etcd, j->prefix, &s);
	if (rc) {
		pando_map_free(s.map);
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: journal: cannot open segment %" PRIu64 " (term %" PRIu64 "): %s",
			s.index, j->term, strerror(-rc));
		return rc;
	}
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: journal: segment %" PRIu64 " (term %" PRIu64 ") from seq %" PRIu64
		" on OSDs %u, %u, %u",
		s.index, j->term, first, s.map->comp[0].osd_id, s.map->comp[1].osd_id,
		s.map->comp[2].osd_id);
	pando_map_free(j->seg.map);
	j->seg = s;
	j->off = 0;
	j->next_index++;
	j->stay = false;
	return 0;
}

/* A segment with a copy on an OSD that is out is left for a new one (the
 * active rebuilds its copies); where none can be placed, the writer stays
 * in it, on the copies it has, until the next segment. */
static void leave_degraded(struct pando_journal *j, uint64_t first)
{
	uint64_t index = j->seg.index;

	if (j->stay || !j->seg.map || !pando_journal_map_degraded(j->mds, j->seg.map))
		return;
	if (open_segment(j, first) == 0) {
		j->trim_due = true;
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: journal: segment %" PRIu64 " has a copy on an OSD that is out:"
			" the journal goes on in segment %" PRIu64,
			index, j->seg.index);
		return;
	}
	j->stay = true;
	mds_log(MDS_LOG_WARN, __func__,
		"pando: journal: segment %" PRIu64 " has a copy on an OSD that is out and no"
		" new segment can be placed: the journal stays in it, on the copies it has",
		index);
}

/* Segment index, which no one will read again: its key first, so no
 * reader starts on it, then the objects of the map it listed then (a
 * rebuild may have listed new copies since the trim's listing; a copy
 * whose OSD is away stays there, as the journal's, which pando-fsck counts
 * and leaves).  -EEXIST: listed anew between the two, left for the next
 * trim. */
static int trim_one(struct pando_journal *j, uint64_t index)
{
	struct objio io = { .conns = j->mds->conns, .owner = JOURNAL_OBJECT_BIT | index };
	struct journal_segment s = { 0 };
	char key[sizeof(j->prefix) + 20], *value = NULL;
	size_t len = 0;
	int64_t rev = 0;
	int rc;

	snprintf(key, sizeof(key), "%s%016" PRIx64, j->prefix, index);
	rc = etcd_get(j->etcd, key, &value, &len, &rev);
	if (!rc)
		rc = journal_segment_parse(value, len, &s);
	if (!rc)
		rc = etcd_delete_if(j->etcd, key, rev);
	if (!rc && objio_remove(&io, s.map) != 0)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: journal: segment %" PRIu64
			" trimmed, some of its copies left on the OSDs",
			index);
	free(value);
	pando_map_free(s.map);
	return rc;
}

/* The segments before the current one whose records every member has
 * applied: those whose successor starts at or below floor + 1. */
static void trim(struct pando_journal *j)
{
	uint64_t floor = j->trim_floor ? j->trim_floor(j->trim_arg) : 0;
	struct journal_segment *segs = NULL;
	size_t n = 0, done = 0;
	int rc = floor ? journal_segments_list(j->etcd, j->prefix, &segs, &n) : 0;

	for (size_t i = 0; !rc && i + 1 < n; i++) {
		if (segs[i + 1].index > j->seg.index || segs[i + 1].first_seq > floor + 1)
			break;
		rc = trim_one(j, segs[i].index);
		done += !rc;
	}
	if (rc && rc != -EEXIST)
		mds_log(MDS_LOG_WARN, __func__, "pando: journal %s: trimming: %s", j->prefix,
			strerror(-rc));
	else if (done)
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: journal %s: %zu segment(s) trimmed, every member past seq %" PRIu64,
			j->prefix, done, floor);
	journal_segments_free(segs, n);
}

/* One copy's part of a write: each copy on a thread of its own, so a
 * group commit costs the slowest copy's write, not the three in turn. */
struct copy_write {
	struct pando_journal *j;
	const struct pando_component *k;
	const uint8_t *buf;
	size_t n;
	int rc;
};

static void *write_copy(void *arg)
{
	struct copy_write *w = arg;
	struct objio io = { .conns = w->j->mds->conns };

	w->rc = objio_component_write(&io, w->j->seg.map->partition_id, w->k, w->j->off, w->buf,
				      w->n);
	return NULL;
}

/* buf[n] at j->off on every copy of the segment, durable on return;
 * the OSDs of the copies that failed go into j->avoid. */
static int write_copies(struct pando_journal *j, const uint8_t *buf, size_t n)
{
	struct copy_write w[JOURNAL_COPIES];
	pthread_t t[JOURNAL_COPIES];
	bool threaded[JOURNAL_COPIES] = { false };
	int rc = 0;

	for (int c = 0; c < JOURNAL_COPIES; c++) {
		w[c] = (struct copy_write){ .j = j, .k = &j->seg.map->comp[c], .buf = buf, .n = n };
		threaded[c] = pthread_create(&t[c], NULL, write_copy, &w[c]) == 0;
		if (!threaded[c])
			write_copy(&w[c]);
	}
	for (int c = 0; c < JOURNAL_COPIES; c++) {
		if (threaded[c])
			pthread_join(t[c], NULL);
		if (w[c].rc && j->navoid < sizeof(j->avoid) / sizeof(j->avoid[0]))
			j->avoid[j->navoid++] = w[c].k->osd_id;
		if (!rc)
			rc = w[c].rc;
	}
	return rc;
}

/* Ends the segment at j->off after a write to it failed on a copy: the
 * records of that write go whole into the next segment, from its start.
 * Some of them may be on the copies that took them here, after the last
 * record every copy has; a reader finds them there and again at the next
 * segment's start, the same bytes under the same seqs, and applies them
 * once (enter() in journal_reader.c). */
static void end_segment(struct pando_journal *j, uint64_t first, int rc)
{
	mds_log(MDS_LOG_WARN, __func__,
		"pando: journal: segment %" PRIu64 " (term %" PRIu64 "): writing seq %" PRIu64
		" on a copy failed (%s): it ends there, and the"
		" journal goes on in a new segment away from OSD %u",
		j->seg.index, j->term, first, strerror(-rc), j->avoid[j->navoid - 1]);
	pando_map_free(j->seg.map);
	j->seg.map = NULL;
	j->off = 0;
}

/* Records [first, ...] in buf[n], to every copy, durable on return.  A
 * copy that fails moves the journal to a new segment on other OSDs, up to
 * JOURNAL_ROLLS_MAX times; what cannot be placed fails the write. */
static int write_out(struct pando_journal *j, const uint8_t *buf, size_t n, uint64_t first)
{
	int rc = 0;

	for (int roll = 0;; roll++) {
		if (!j->seg.map || (j->off && j->off + n > j->segment_bytes)) {
			rc = open_segment(j, first);
			j->trim_due = !rc;
		} else {
			leave_degraded(j, first);
		}
		if (!rc)
			rc = write_copies(j, buf, n);
		if (!rc) {
			j->off += n;
			j->navoid = 0;
			return 0;
		}
		if (!j->seg.map || !j->navoid || roll == JOURNAL_ROLLS_MAX)
			return rc;
		end_segment(j, first, rc);
	}
}

static bool stopping(struct pando_journal *j)
{
	bool stop;

	pthread_mutex_lock(&j->lock);
	stop = j->stop;
	pthread_mutex_unlock(&j->lock);
	return stop;
}

/* write_out, tried again every JOURNAL_RETRY_MS, away from no OSD, for up
 * to JOURNAL_GIVE_UP_MS or until the journal is closed. */
static int write_patiently(struct pando_journal *j, const uint8_t *buf, size_t n, uint64_t first)
{
	int64_t give_up = mds_mono_ms() + JOURNAL_GIVE_UP_MS;
	int rc = write_out(j, buf, n, first);

	if (rc)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: journal: writing seq %" PRIu64
			" reached too few OSDs (%s): trying again for up to %d s",
			first, strerror(-rc), JOURNAL_GIVE_UP_MS / 1000);
	while (rc && mds_mono_ms() < give_up && !stopping(j)) {
		usleep(JOURNAL_RETRY_MS * 1000);
		j->navoid = 0; /* the OSDs failed may be back */
		rc = write_out(j, buf, n, first);
	}
	return rc;
}

/* Takes what is pending: NULL when the journal stops, or, with *idle,
 * when nothing came for JOURNAL_IDLE_MS. */
static uint8_t *take(struct pando_journal *j, size_t *n, uint64_t *first, uint64_t *last,
		     int *failed, bool *idle)
{
	struct timespec until;
	uint8_t *buf = NULL;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += JOURNAL_IDLE_MS / 1000;
	*idle = false;
	pthread_mutex_lock(&j->lock);
	while (!j->stop && !j->npending && !*idle)
		*idle = pthread_cond_timedwait(&j->cond, &j->lock, &until) == ETIMEDOUT;
	*idle = *idle && !j->stop && !j->npending;
	if (j->npending) {
		buf = j->pending;
		*n = j->npending;
		*first = j->first;
		*last = j->last;
		j->pending = NULL;
		j->npending = j->cap = 0;
		pthread_cond_broadcast(&j->cond); /* room for blocked appends */
	}
	*failed = j->failed;
	pthread_mutex_unlock(&j->lock);
	return buf;
}

/* An idle writer leaves a segment with a copy on an OSD that is out too,
 * so that the active can rebuild that one's copies (it never touches the
 * segment being written); the next one's records start after the last
 * written. */
static void idle_upkeep(struct pando_journal *j)
{
	uint64_t durable;

	pthread_mutex_lock(&j->lock);
	durable = j->durable;
	pthread_mutex_unlock(&j->lock);
	leave_degraded(j, durable + 1);
	if (j->trim_due) {
		j->trim_due = false;
		trim(j);
	}
}

static void *writer(void *arg)
{
	struct pando_journal *j = arg;
	uint64_t first, last;
	uint8_t *buf;
	size_t n;
	int failed;
	bool idle;

	while ((buf = take(j, &n, &first, &last, &failed, &idle)) || idle) {
		bool unsure, gave_up = false;
		int rc;

		if (!buf) {
			if (!failed)
				idle_upkeep(j);
			continue;
		}
		rc = failed ? failed : write_patiently(j, buf, n, first);
		unsure = !rc && j->leading && !j->leading(j->leading_arg);

		free(buf);
		pthread_mutex_lock(&j->lock);
		if (unsure && !j->failed) {
			j->failed = -ESHUTDOWN;
			mds_log(MDS_LOG_CRIT, __func__,
				"pando: journal: term %" PRIu64
				" no longer sure that it leads after"
				" writing seq %" PRIu64 "..%" PRIu64
				": the journal stops, no change can be acknowledged",
				j->term, first, last);
		} else if (rc && !j->failed) {
			j->failed = j->failed_fn ? -ESHUTDOWN : -EIO;
			gave_up = j->failed_fn != NULL && !j->stop; /* a clean stop goes on */
			mds_log(MDS_LOG_CRIT, __func__,
				"pando: journal: writing seq %" PRIu64 "..%" PRIu64
				" failed (%s): the journal stops, no change can be acknowledged",
				first, last, strerror(-rc));
		}
		if (unsure)
			rc = -ESHUTDOWN;
		if (!rc)
			j->durable = last;
		pthread_cond_broadcast(&j->cond);
		pthread_mutex_unlock(&j->lock);
		if (gave_up)
			j->failed_fn(j->failed_arg);
		if (j->trim_due && !rc) {
			j->trim_due = false;
			trim(j);
		}
	}
	return NULL;
}

int pando_journal_append(struct pando_journal *j, uint64_t seq, const void *batch, size_t len)
{
	size_t size = journal_record_size((uint32_t)len), used;
	int rc;

	if (len > JOURNAL_RECORD_MAX)
		return -EFBIG;
	pthread_mutex_lock(&j->lock);
	while (!j->failed && j->npending > JOURNAL_PENDING_MAX)
		pthread_cond_wait(&j->cond, &j->lock);
	rc = j->failed;
	if (!rc && j->npending + size > j->cap) {
		j->cap = (j->npending + size) * 2;
		j->pending = mds_realloc(j->pending, j->cap);
	}
	if (!rc)
		rc = journal_record_encode(seq, j->term, batch, (uint32_t)len,
					   j->pending + j->npending, j->cap - j->npending, &used);
	if (!rc) {
		if (!j->npending)
			j->first = seq;
		j->last = seq;
		j->npending += used;
		pthread_cond_broadcast(&j->cond);
	}
	pthread_mutex_unlock(&j->lock);
	return rc;
}

int pando_journal_sync(struct pando_journal *j, uint64_t seq)
{
	int rc;

	pthread_mutex_lock(&j->lock);
	while (!j->failed && j->durable < seq)
		pthread_cond_wait(&j->cond, &j->lock);
	rc = j->durable >= seq ? 0 : j->failed;
	pthread_mutex_unlock(&j->lock);
	return rc;
}

uint64_t pando_journal_durable(struct pando_journal *j)
{
	uint64_t seq;

	pthread_mutex_lock(&j->lock);
	seq = j->durable;
	pthread_mutex_unlock(&j->lock);
	return seq;
}

static int hook_append(void *arg, uint64_t seq, const void *batch, size_t len)
{
	return pando_journal_append(arg, seq, batch, len);
}

static int hook_sync(void *arg, uint64_t seq)
{
	return pando_journal_sync(arg, seq);
}

const struct ns_journal *pando_journal_ns(struct pando_journal *j)
{
	return &j->hook;
}

/* The next segment's index: one past the last listed. */
static int next_index(struct pando_journal *j)
{
	struct journal_segment *segs = NULL;
	size_t n = 0;
	int rc = journal_segments_list(j->etcd, j->prefix, &segs, &n);

	if (!rc)
		j->next_index = n ? segs[n - 1].index + 1 : 1;
	journal_segments_free(segs, n);
	return rc;
}

static void journal_free(struct pando_journal *j)
{
	pando_map_free(j->seg.map);
	if (j->etcd)
		etcd_client_free(j->etcd);
	free(j->pending);
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

int pando_journal_open(struct pando_mds *mds, const struct pando_journal_options *opt,
		       struct pando_journal **out)
{
	struct pando_journal *j = mds_calloc(1, sizeof(*j));
	pthread_condattr_t ca;
	int rc;

	j->mds = mds;
	j->term = opt->term;
	j->leading = opt->leading;
	j->leading_arg = opt->leading_arg;
	j->trim_floor = opt->trim_floor;
	j->trim_arg = opt->trim_arg;
	j->failed_fn = opt->failed;
	j->failed_arg = opt->failed_arg;
	j->hook = (struct ns_journal){
		.append = hook_append, .sync = hook_sync, .arg = j, .term = opt->term
	};
	j->segment_bytes = opt->segment_bytes ? opt->segment_bytes : JOURNAL_SEGMENT_BYTES;
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cond, &ca);
	pthread_condattr_destroy(&ca);
	rc = journal_segment_prefix(mds->cfg.etcd_prefix, opt->group, j->prefix, sizeof(j->prefix));
	if (!rc)
		rc = pando_etcd_client_new(mds, 2000, "the journal's etcd client", &j->etcd);
	if (!rc)
		rc = next_index(j);
	if (!rc)
		rc = -pthread_create(&j->thread, NULL, writer, j);
	if (rc) {
		mds_log(MDS_LOG_CRIT, __func__, "pando: journal %s: cannot open: %s", j->prefix,
			strerror(-rc));
		journal_free(j);
		return rc;
	}
	*out = j;
	return 0;
}

void pando_journal_close(struct pando_journal *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stop = true;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	pthread_join(j->thread, NULL);
	journal_free(j);
}
