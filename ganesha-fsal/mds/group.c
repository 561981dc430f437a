/* A manager group (Mds_Group): managers on several hosts, one active,
 * the others standbys that follow its journal and take over when it
 * goes.  Leadership is an etcd election (election.h) at
 * <Etcd_Prefix>groups/<group>/active; the active journals every batch
 * its store commits (journal.h) and acknowledges it only once the
 * journal holds it; a standby applies the journal to its own store, and
 * when it wins, reads the journal to its end before it opens its own in
 * the new term.  An active that loses leadership stops the process at
 * once: what it has not acknowledged, the journal may or may not hold,
 * and it must serve nothing more.
 *
 * Every member keeps <Etcd_Prefix>groups/<group>/members/<name> alive
 * under a lease: {"name", "role": "active" or "standby", "seq": the last
 * journal record its store holds, "term", "since": when the active took
 * over (unix time; 0 for a standby)}, and puts the same seq without a
 * lease (held.h).  The active trims the journal segments every standby
 * has applied, none that a member down for less than PANDO_HELD_KEEP_S
 * needs, and none that the group's snapshot or one made here in the last
 * GROUP_SNAPSHOT_HOLD_S needs (a member starting from it has not joined
 * yet).  The active also
 * heeds a planned switchover (handover.h): asked, it stops the server as
 * SIGTERM does.  The address clients mount follows the lead
 * (service_address.h): taken before the active serves, released when a
 * member starts and whenever an active stops being one.  A member that
 * starts with no store at its Db_Path while the group has a journal
 * begins from a snapshot the active keeps on the OSDs for it
 * (group_snapshot.h). */
#include "mds.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "election.h"
#include "etcd_client.h"
#include "group_snapshot.h"
#include "handover.h"
#include "held.h"
#include "journal.h"
#include "journal_segment.h"
#include "reclaim.h"
#include "service_address.h"
#include "snapshot_pack.h"

#define FOLLOW_POLL_MS 100 /* between a standby's passes, each to the journal's end */
#define FOLLOW_LOG_S 10
#define MEMBER_TTL_S 5
#define MEMBER_INTERVAL_S 1
#define JOURNAL_FAILED_REPLY_MS 500

struct pando_group {
	struct pando_mds *mds;
	struct pando_election *election;
	struct pando_journal *journal; /* set before active */
	struct etcd_presence *member;
	struct pando_held *held;                 /* what its store holds, past its lease */
	struct etcd_client *etcd;                /* the trim floor's */
	struct pando_handover *handover;         /* the active's */
	struct group_snapshot_server *snapshots; /* the active's */
	atomic_bool active;                      /* took over: losing the lead ends the process */
	atomic_bool leaving;  /* it resigns: pando_group_free, a failed journal */
	_Atomic uint64_t seq; /* a standby's last record applied */
	_Atomic int64_t term;
	_Atomic int64_t since;         /* when it took over (unix time); 0 a standby */
	_Atomic uint64_t snapshot_seq; /* the last store_snapshot's, and when */
	_Atomic int64_t snapshot_at;
	char key[320];
	char members[320]; /* <prefix>groups/<group>/members/ */
	char member_key[600];
	char helds[320]; /* <prefix>groups/<group>/held/ */
	char held_key[600];
	char name[256];
	char active_value[300]; /* the active key's value: {"name": name} */
};

/* The last journal record this member's store holds. */
static uint64_t member_seq(void *arg)
{
	struct pando_group *g = arg;

	return atomic_load(&g->active) ? pando_journal_durable(g->journal) : atomic_load(&g->seq);
}

static char *member_fill(void *arg)
{
	struct pando_group *g = arg;
	bool active = atomic_load(&g->active);
	uint64_t seq = member_seq(g);
	json_t *o = json_pack("{ss ss sI sI sI}", "name", g->name, "role",
			      active ? "active" : "standby", "seq", (json_int_t)seq, "term",
			      (json_int_t)atomic_load(&g->term), "since",
			      (json_int_t)atomic_load(&g->since));
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(o);
	return text;
}

static void member_log(void *arg, int level, const char *msg)
{
	struct pando_group *g = arg;

	mds_log(level ? MDS_LOG_WARN : MDS_LOG_EVENT, "member", "pando: group member %s: %s",
		g->member_key, msg);
}

static int start_member(struct pando_group *g)
{
	struct etcd_options eo;
	struct etcd_presence_options o = { .etcd = &eo,
					   .key = g->member_key,
					   .ttl_s = MEMBER_TTL_S,
					   .interval_s = MEMBER_INTERVAL_S,
					   .fill = member_fill,
					   .log = member_log,
					   .arg = g };
	int rc;

	pando_etcd_options(g->mds, 0, &eo);
	rc = etcd_presence_start(&o, &g->member);
	if (rc) {
		pando_etcd_new_failed(g->mds, "the group's member key", rc);
		return rc;
	}
	rc = pando_held_start(&eo, g->held_key, member_seq, g, &g->held);
	if (rc) {
		pando_etcd_new_failed(g->mds, "the group's held record", rc);
		return rc;
	}
	return g->etcd ? 0
		       : pando_etcd_client_new(g->mds, 2000, "the group's etcd client", &g->etcd);
}

struct floor_scan {
	uint64_t floor;
	bool any;
};

static int floor_member(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct floor_scan *f = arg;
	json_t *o = len <= JOURNAL_VALUE_MAX ? json_loadb(value, len, 0, NULL) : NULL;
	const char *role = json_string_value(json_object_get(o, "role"));
	uint64_t seq;

	if (role && !strcmp(role, "standby") && journal_json_count(o, "seq", &seq) &&
	    (!f->any || seq < f->floor)) {
		f->floor = seq;
		f->any = true;
	}
	json_decref(o);
	return 0;
}

/* The journal's trim floor (journal.h): the lowest seq of the standbys,
 * of the members down for less than PANDO_HELD_KEEP_S (held.h) and of a
 * recent snapshot; the active's own with none; 0 (trim nothing) when
 * etcd cannot say. */
static uint64_t trim_floor(void *arg)
{
	struct pando_group *g = arg;
	struct floor_scan f = { 0 };
	uint64_t snap = atomic_load(&g->snapshot_seq);
	unsigned bad = 0;

	if (etcd_list(g->etcd, g->members, 0, floor_member, &f, NULL) != 0)
		return 0;
	if (!f.any)
		f.floor = pando_journal_durable(g->journal);
	if (pando_held_floor(g->etcd, g->helds, g->name, time(NULL), &f.floor, &bad) != 0)
		return 0;
	if (bad)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: group %s: %u malformed record(s) under %s left out of the trim floor",
			g->mds->cfg.mds_group, bad, g->helds);
	if (time(NULL) - atomic_load(&g->snapshot_at) < GROUP_SNAPSHOT_HOLD_S && snap < f.floor)
		f.floor = snap;
	if (group_snapshot_hold(g->mds, g->etcd, time(NULL), &f.floor) != 0)
		return 0;
	return f.floor;
}

/* Service_Address_Command with verb: "take" failing fails the takeover;
 * "release" failing is only logged, as nothing better can be done. */
static int service_address(struct pando_group *g, const char *verb)
{
	const char *cmd = g->mds->cfg.service_address_command;
	char why[160] = "";
	int rc;

	if (!cmd || !cmd[0])
		return 0;
	rc = pando_service_address(cmd, verb, PANDO_SERVICE_ADDRESS_TIMEOUT_MS, why, sizeof(why));
	mds_log(rc ? MDS_LOG_CRIT : MDS_LOG_EVENT, __func__, "pando: group %s: %s: `%s %s` %s%s",
		g->mds->cfg.mds_group, g->name, cmd, verb, rc ? "failed: " : "done", why);
	return rc;
}

static void election_log(void *arg, int level, const char *msg)
{
	struct pando_group *g = arg;

	mds_log(level ? MDS_LOG_WARN : MDS_LOG_EVENT, "election", "pando: group %s: %s",
		g->mds->cfg.mds_group, msg);
}

static void election_changed(void *arg, bool leading, int64_t term, const char *leader)
{
	struct pando_group *g = arg;

	if (leading || !atomic_load(&g->active) || atomic_load(&g->leaving)) {
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: group %s: the active is %s (term %" PRId64 ")",
			g->mds->cfg.mds_group, leader[0] ? leader : "none yet", term);
		return;
	}
	mds_log(MDS_LOG_CRIT, __func__,
		"pando: group %s: %s is no longer the active (now %s, term %" PRId64
		"): stopping at once, so that it acknowledges and serves nothing more",
		g->mds->cfg.mds_group, g->name, leader[0] ? leader : "none", term);
	service_address(g, "release");
	_exit(EXIT_FAILURE);
}

static bool still_leading(void *arg)
{
	struct pando_group *g = arg;

	return pando_election_leading(g->election, NULL);
}

static int start_election(struct pando_group *g)
{
	struct pando_mds *mds = g->mds;
	struct etcd_options eo;
	struct pando_election_options o = {
		.etcd = &eo,
		.key = g->key,
		.value = g->active_value,
		.changed = election_changed,
		.log = election_log,
		.arg = g,
	};
	int rc;

	pando_etcd_options(mds, 0, &eo);
	rc = pando_election_start(&o, &g->election);
	if (rc)
		pando_etcd_new_failed(mds, "the group's election", rc);
	return rc;
}

static int apply_one(void *arg, const struct journal_record *r)
{
	int rc = ns_apply(arg, r->payload, r->len);

	return rc == -EALREADY ? 0 : rc;
}

/* A standby in Ganesha's start, before its signal thread runs: SIGTERM
 * stays pending, so it looks for it itself. */
static bool stop_asked(void)
{
	sigset_t set;

	return sigpending(&set) == 0 && (sigismember(&set, SIGTERM) || sigismember(&set, SIGINT));
}

/* Whether rc says the store cannot follow the journal but a snapshot
 * can: it holds records a later term never had (-ESTALE, or a batch
 * missing before the next, -ERANGE), or the journal no longer holds the
 * records after it (-ESTALE). */
static bool needs_snapshot(int rc)
{
	return rc == -ESTALE || rc == -ERANGE;
}

static void follow_failed(struct pando_group *g, uint64_t seq, int rc)
{
	if (needs_snapshot(rc))
		mds_log(MDS_LOG_WARN, __func__,
			"pando: group %s: the store %s cannot follow the journal after seq %" PRIu64
			" (%s)",
			g->mds->cfg.mds_group, g->mds->cfg.db_path, seq, strerror(-rc));
	else if (rc == -ENOENT)
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: group %s: the store %s cannot follow the journal after seq %" PRIu64
			": it was never journaled (another file system's?); move it aside and"
			" start again, to begin from the group's snapshot",
			g->mds->cfg.mds_group, g->mds->cfg.db_path, seq);
	else if (rc != -EINTR)
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: group %s: following the journal after seq %" PRIu64 ": %s",
			g->mds->cfg.mds_group, seq, strerror(-rc));
}

/* One pass of a standby: the records there are now, applied.  Errors of
 * the OSDs and etcd are waited out; what the store refuses is not.  One
 * line every FOLLOW_LOG_S says where it is, and what it waits for. */
static int follow_once(struct pando_group *g, struct pando_journal_reader *r, size_t *n,
		       time_t *logged)
{
	int rc = pando_journal_read(r, apply_one, g->mds->ns, n);

	if (rc == -ESTALE || rc == -ENOENT || rc == -ERANGE || rc == -EINVAL || rc == -EROFS ||
	    rc == -EPERM)
		return rc;
	if (time(NULL) - *logged >= FOLLOW_LOG_S) {
		mds_log(rc ? MDS_LOG_WARN : MDS_LOG_EVENT, __func__,
			"pando: group %s: standby at seq %" PRIu64 "%s%s", g->mds->cfg.mds_group,
			pando_journal_reader_seq(r), rc ? ", waiting: " : "",
			rc ? strerror(-rc) : "");
		*logged = time(NULL);
	}
	return rc ? -EAGAIN : 0;
}

/* A pass, made durable once, before the member says how far it is: the
 * trim floor reads that, and a crash may take back what the store, opened
 * nosync, applied since the last pass. */
static int follow_pass(struct pando_group *g, struct pando_journal_reader *r, size_t *n,
		       time_t *logged)
{
	int rc = follow_once(g, r, n, logged);
	int synced = *n ? ns_sync(g->mds->ns) : 0;

	if (!synced)
		atomic_store(&g->seq, pando_journal_reader_seq(r));
	return synced ? synced : rc;
}

/* Applies the journal until this manager leads, then to its end: every
 * record the last active acknowledged is on the copies before its lease
 * expired, so before this one could win. */
static int follow(struct pando_group *g, int64_t *term)
{
	struct pando_journal_reader *r = NULL;
	uint64_t seq = 0, held_term = 0;
	time_t logged = 0;
	int rc = ns_applied(g->mds->ns, &seq, &held_term);
	bool never = rc == -ENOENT;

	if (never) /* never journaled: it founds the group or is refused */
		rc = 0;
	if (!rc)
		rc = pando_journal_reader_new(g->mds, g->mds->cfg.mds_group, seq, held_term, &r);
	while (!rc) {
		bool leads = pando_election_leading(g->election, term);
		size_t n = 0;

		rc = follow_pass(g, r, &n, &logged);
		if (!rc && leads)
			break;
		if (rc == -EAGAIN)
			rc = 0;
		if (!rc && stop_asked())
			rc = -EINTR;
		else if (!rc)
			usleep(FOLLOW_POLL_MS * 1000);
	}
	if (r)
		seq = pando_journal_reader_seq(r);
	if (never && seq == 0 && needs_snapshot(rc))
		rc = -ENOENT; /* not the group's store at all: left as it is */
	if (rc)
		follow_failed(g, seq, rc);
	pando_journal_reader_free(r);
	return rc;
}

static void handover_log(void *arg, int level, const char *msg)
{
	struct pando_group *g = arg;

	mds_log(level ? MDS_LOG_WARN : MDS_LOG_EVENT, "handover", "pando: group %s: %s",
		g->mds->cfg.mds_group, msg);
}

static void handover_asked(void *arg)
{
	struct pando_group *g = arg;

	g->mds->host->shutdown(g->mds);
}

/* The active heeds `pando mds failover` (handover.h). */
static int start_handover(struct pando_group *g, int64_t term)
{
	struct pando_mds *mds = g->mds;
	struct etcd_options eo;
	char key[320];
	struct pando_handover_options o = { .etcd = &eo,
					    .key = key,
					    .name = g->name,
					    .term = term,
					    .stop = handover_asked,
					    .log = handover_log,
					    .arg = g };
	int n = snprintf(key, sizeof(key), "%sgroups/%s/handover", mds->cfg.etcd_prefix,
			 mds->cfg.mds_group);
	int rc = n < 0 || (size_t)n >= sizeof(key) ? -ENAMETOOLONG : 0;

	pando_etcd_options(mds, 2000, &eo);
	if (!rc)
		rc = pando_handover_start(&o, &g->handover);
	if (rc)
		pando_etcd_new_failed(mds, "the group's handover watcher", rc);
	return rc;
}

/* The journal failed for good (journal.h): what it holds is left to the
 * next active, which may reach the OSDs this one cannot, so this one
 * resigns at once, rather than waiting out its lease, and stops, as an
 * active that lost the lead does, once the replies to the changes it
 * refused (DELAY) had JOURNAL_FAILED_REPLY_MS to go out; started again,
 * it starts from the group's snapshot if its store holds what the
 * journal does not. */
static void journal_failed(void *arg)
{
	struct pando_group *g = arg;

	mds_log(MDS_LOG_CRIT, __func__,
		"pando: group %s: %s cannot write the journal: it leaves the lead to a standby"
		" and stops",
		g->mds->cfg.mds_group, g->name);
	atomic_store(&g->leaving, true); /* resigning is no lead lost */
	pando_election_stop(g->election);
	usleep(JOURNAL_FAILED_REPLY_MS * 1000);
	service_address(g, "release");
	_exit(EXIT_FAILURE);
}

/* The store again, now journaled in this manager's term. */
static int take_over(struct pando_group *g, int64_t term)
{
	struct pando_mds *mds = g->mds;
	const struct pando_journal_options jo = { .group = mds->cfg.mds_group,
						  .term = (uint64_t)term,
						  .leading = still_leading,
						  .leading_arg = g,
						  .trim_floor = trim_floor,
						  .trim_arg = g,
						  .failed = journal_failed,
						  .failed_arg = g };
	uint64_t seq = 0;
	int rc;

	ns_close(mds->ns);
	mds->ns = NULL;
	rc = pando_journal_open(mds, &jo, &g->journal);
	if (!rc)
		rc = pando_store_open(mds, pando_journal_ns(g->journal), false);
	if (rc)
		return rc;
	atomic_store(&g->term, term);
	atomic_store(&g->since, (int64_t)time(NULL));
	atomic_store(&g->active, true);
	/* A lead lost before active was set went by unseen (election_changed). */
	if (!pando_election_leading(g->election, NULL)) {
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: group %s: %s is no longer the active (lost while taking over):"
			" stopping at once",
			mds->cfg.mds_group, g->name);
		service_address(g, "release");
		_exit(EXIT_FAILURE);
	}
	etcd_presence_kick(g->member);
	rc = service_address(g, "take");
	if (!rc)
		rc = start_handover(g, term);
	if (!rc)
		rc = group_snapshot_serve(mds, &g->snapshots);
	if (rc)
		return rc;
	ns_applied_seq(mds->ns, &seq);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: group %s: %s is the active, term %" PRId64 ", from seq %" PRIu64,
		mds->cfg.mds_group, g->name, term, seq);
	return 0;
}

/* {"name": ...} as JSON, which the election keeps under 256 bytes. */
static int active_value(struct pando_group *g)
{
	json_t *o = json_pack("{ss}", "name", g->name);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc = text && strlen(text) < 256 ? 0 : -EINVAL;

	if (!rc)
		snprintf(g->active_value, sizeof(g->active_value), "%s", text);
	else
		mds_log(MDS_LOG_CRIT, __func__, "pando: Mds_Name \"%s\" is too long for a group",
			g->name);
	free(text);
	json_decref(o);
	return rc;
}

static int group_new(struct pando_mds *mds, struct pando_group **out)
{
	struct pando_group *g = mds_calloc(1, sizeof(*g));
	int n = snprintf(g->key, sizeof(g->key), "%sgroups/%s/active", mds->cfg.etcd_prefix,
			 mds->cfg.mds_group);

	g->mds = mds;
	pando_mds_name(mds, g->name, sizeof(g->name));
	snprintf(g->members, sizeof(g->members), "%sgroups/%s/members/", mds->cfg.etcd_prefix,
		 mds->cfg.mds_group);
	snprintf(g->member_key, sizeof(g->member_key), "%s%s", g->members, g->name);
	snprintf(g->helds, sizeof(g->helds), "%sgroups/%s/held/", mds->cfg.etcd_prefix,
		 mds->cfg.mds_group);
	snprintf(g->held_key, sizeof(g->held_key), "%s%s", g->helds, g->name);
	*out = g;
	if (!mds->cfg.etcd[0] || n < 0 || (size_t)n >= sizeof(g->key) ||
	    strchr(mds->cfg.mds_group, '/')) {
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: Mds_Group = \"%s\" needs Etcd, and a name without '/'",
			mds->cfg.mds_group);
		return -EINVAL;
	}
	return active_value(g);
}

/* Db_Path absent or an empty directory. */
static bool store_missing(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return errno == ENOENT;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Whether the group has a journal: a member with no store then starts
 * from a snapshot; without one it founds the group with a new store. */
static int journal_begun(struct pando_group *g, bool *begun)
{
	struct journal_segment *segs = NULL;
	char prefix[320];
	size_t n = 0;
	int rc = journal_segment_prefix(g->mds->cfg.etcd_prefix, g->mds->cfg.mds_group, prefix,
					sizeof(prefix));

	if (!rc)
		rc = journal_segments_list(g->etcd, prefix, &segs, &n);
	*begun = n > 0;
	journal_segments_free(segs, n);
	return rc;
}

/* A member with no store fetches the group's snapshot first. */
static int open_store(struct pando_group *g)
{
	uint64_t seq = 0;
	bool begun = false;
	int rc = 0;

	if (store_missing(g->mds->cfg.db_path)) {
		rc = pando_etcd_client_new(g->mds, 2000, "the group's etcd client", &g->etcd);
		if (!rc)
			rc = journal_begun(g, &begun);
		if (!rc && begun)
			rc = group_snapshot_fetch(g->mds, g->name, stop_asked, &seq);
	}
	return rc ? rc : pando_store_open(g->mds, NULL, true);
}

/* A store that cannot follow the journal moved aside to <Db_Path>.stale
 * (the one there before removed), and the member starts again from the
 * group's snapshot, out of the election meanwhile: what the old store
 * held past the journal was never acknowledged. */
static int start_again(struct pando_group *g)
{
	struct pando_mds *mds = g->mds;
	char stale[PATH_MAX];
	uint64_t seq = 0;
	int n = snprintf(stale, sizeof(stale), "%s.stale", mds->cfg.db_path);
	int rc = n < 0 || (size_t)n >= sizeof(stale) ? -ENAMETOOLONG : 0;

	mds_log(MDS_LOG_CRIT, __func__,
		"pando: group %s: %s moves its store aside to %s and starts again from the"
		" group's snapshot",
		mds->cfg.mds_group, g->name, stale);
	pando_election_stop(g->election);
	g->election = NULL;
	ns_close(mds->ns);
	mds->ns = NULL;
	snapshot_dir_remove(stale);
	if (!rc && rename(mds->cfg.db_path, stale))
		rc = -errno;
	if (!rc)
		rc = pando_sync_dir_of(mds->cfg.db_path);
	if (!rc)
		rc = group_snapshot_fetch(mds, g->name, stop_asked, &seq);
	if (!rc)
		rc = pando_store_open(mds, NULL, true);
	if (!rc)
		rc = start_election(g);
	return rc;
}

/* Follows until it leads; once more from the group's snapshot when its
 * store cannot. */
static int follow_or_start_again(struct pando_group *g, int64_t *term)
{
	for (int again = 0;; again++) {
		int rc;

		mds_log(MDS_LOG_EVENT, __func__,
			"pando: group %s: %s follows the journal until it leads",
			g->mds->cfg.mds_group, g->name);
		rc = follow(g, term);
		if (!needs_snapshot(rc) || again)
			return rc;
		rc = start_again(g);
		if (rc)
			return rc;
	}
}

int pando_group_join(struct pando_mds *mds)
{
	int64_t term = 0;
	int rc = group_new(mds, &mds->group);

	if (!rc)
		rc = open_store(mds->group);
	if (!rc)
		service_address(mds->group, "release");
	if (!rc)
		rc = start_member(mds->group);
	if (!rc)
		rc = start_election(mds->group);
	if (!rc)
		rc = follow_or_start_again(mds->group, &term);
	if (!rc)
		rc = take_over(mds->group, term);
	return rc;
}

int pando_group_snapshot(struct pando_mds *mds, const char *dir, uint64_t *seq)
{
	struct pando_group *g = mds->group;
	int rc = ns_snapshot(mds->ns, dir, seq);

	if (!rc && g) {
		atomic_store(&g->snapshot_seq, *seq);
		atomic_store(&g->snapshot_at, (int64_t)time(NULL));
	}
	return rc;
}

int pando_group_reclaim_open(struct pando_mds *mds, const char *kind, struct pando_reclaim **out)
{
	struct pando_group *g = mds->group;
	struct etcd_options eo;
	char prefix[320];
	struct pando_reclaim_options ro = { .etcd = &eo, .prefix = prefix };

	*out = NULL;
	if (!g || !atomic_load(&g->active))
		return -ENOENT;
	ro.term = (uint64_t)atomic_load(&g->term);
	snprintf(prefix, sizeof(prefix), "%sgroups/%s/%s/", mds->cfg.etcd_prefix,
		 mds->cfg.mds_group, kind);
	pando_etcd_options(mds, 0, &eo);
	return pando_reclaim_open(&ro, out);
}

void pando_group_quiesce(struct pando_mds *mds)
{
	if (!mds->group)
		return;
	group_snapshot_serve_stop(mds->group->snapshots);
	mds->group->snapshots = NULL;
}

void pando_group_free(struct pando_mds *mds)
{
	struct pando_group *g = mds->group;

	if (!g)
		return;
	atomic_store(&g->leaving, true);
	pando_handover_stop(g->handover);
	etcd_presence_stop(g->member);
	pando_held_stop(g->held);
	pando_journal_close(g->journal);
	if (atomic_load(&g->active))
		service_address(g, "release");
	pando_election_stop(g->election);
	if (g->etcd)
		etcd_client_free(g->etcd);
	free(g);
	mds->group = NULL;
}
