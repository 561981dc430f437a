/* Layouts handed out, recall and fencing (layouts.h): the ops the grants
 * state machine (../grants/grants.h), which decides, is created with:
 * Ganesha's recall up-call, the fence on the OSDs, the store's
 * write-layout marks, logging.  Also the watcher thread (deadlines every
 * second, and OSDs that stop answering) and the errors clients report. */
#include "layouts.h"

#include <stdlib.h>
#include <time.h>

#include "fridgethr.h"
#include "fsal_up.h"
#include "ratelimit.h"
#include "ticker.h"

/* Lines any client can cause: at most 10 per 5 s. */
static struct ratelimit client_log = RATELIMIT_INIT(5000, 10);

struct pando_layouts_watcher {
	struct pando_export *exp;
	struct pando_ticker *ticker;
	/* Per OSD, room for every OSD the pool may grow to (cluster maps). */
	bool osd_was_up[CLUSTER_DESC_MAX_OSDS];
};

static uint64_t monotonic_s(void *arg)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void log_line(void *arg, enum pando_grants_level level, const char *msg)
{
	static const log_levels_t niv[] = {
		[PANDO_GRANTS_INFO] = NIV_INFO,
		[PANDO_GRANTS_EVENT] = NIV_EVENT,
		[PANDO_GRANTS_WARN] = NIV_WARN,
		[PANDO_GRANTS_MAJOR] = NIV_MAJ,
	};

	LogAtLevel(COMPONENT_PNFS, niv[level], "%s", msg);
}

static const enum layoutrecall_howspec recall_how[] = {
	[PANDO_RECALL_ALL] = layoutrecall_not_specced,
	[PANDO_RECALL_ALL_BUT] = layoutrecall_howspec_complement,
	[PANDO_RECALL_ONLY] = layoutrecall_howspec_exactly,
};

static void send_recall(void *arg, const struct pando_recall *r)
{
	struct pando_export *exp = arg;
	struct pnfs_segment whole = { .io_mode = LAYOUTIOMODE4_ANY,
				      .offset = 0,
				      .length = NFS4_UINT64_MAX };
	struct layoutrecall_spec spec = { .how = recall_how[r->scope], .u.client = r->clientid };
	uint8_t key[PANDO_FH_LEN];
	struct gsh_buffdesc handle = { .addr = key, .len = PANDO_FH_LEN };
	fsal_status_t st;

	if (!r->client)
		LogEvent(COMPONENT_PNFS, "pando: recalling the layouts of inode %" PRIu64 " (%s)",
			 r->ino, r->why);
	else
		LogEvent(COMPONENT_PNFS, "pando: recalling inode %" PRIu64 " from %s (%s)", r->ino,
			 *r->client ? r->client : "every client", r->why);
	pando_fh_encode(exp, r->ino, r->gen, NS_REG, key);
	/* Asynchronous: the up-call takes state locks a caller may hold. */
	st = up_async_layoutrecall(general_fridge, exp->export.up_ops, &handle, LAYOUT4_FLEX_FILES,
				   true, &whole, NULL, r->scope == PANDO_RECALL_ALL ? NULL : &spec,
				   NULL, NULL);
	if (FSAL_IS_ERROR(st))
		LogMajor(COMPONENT_PNFS, "pando: recall of inode %" PRIu64 " not sent: %s", r->ino,
			 msg_fsal_err(st.major));
}

/* Components on unreachable OSDs cannot be fenced: they become stale,
 * or, when the file could not be read without them, the fence fails and
 * the grants engine makes it again at its next tick. */
static int fence_objects(void *arg, uint64_t ino, uint32_t cur, uint32_t *next, uint32_t *failed)
{
	struct pando_export *exp = arg;
	struct pando_storage_map *map;
	int rc = pando_map_load(exp, ino, &map);

	if (rc)
		return rc;
	rc = pando_objects_fence(exp, ino, map, cur, next, failed);
	pando_map_free(map);
	return rc;
}

static int revoke_writers(void *arg, uint64_t ino, uint32_t cur, uint32_t *next)
{
	struct pando_export *exp = arg;
	struct pando_storage_map *map;
	int rc = pando_map_load(exp, ino, &map);

	if (rc == -ENOENT)
		return 0; /* removed: nothing left to write to */
	if (rc)
		return rc;
	rc = pando_objects_revoke_writers(exp, ino, map, cur, next);
	pando_map_free(map);
	return rc;
}

static int mark_writer(void *arg, uint64_t ino)
{
	struct pando_export *exp = arg;

	return ns_wlayout_add(exp->ns, ino);
}

static int unmark_writer(void *arg, uint64_t ino)
{
	struct pando_export *exp = arg;

	return ns_wlayout_del(exp->ns, ino);
}

static void settle(void *arg, uint64_t ino)
{
	struct pando_export *exp = arg;

	pando_settle_size_async(exp, ino);
}

static bool uses_osd(void *arg, uint64_t ino, uint32_t osd_id)
{
	struct pando_export *exp = arg;
	struct pando_storage_map *map;
	bool uses = false;

	if (pando_map_load(exp, ino, &map) != 0)
		return false;
	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++)
		uses |= map->comp[c].osd_id == osd_id;
	pando_map_free(map);
	return uses;
}

static bool osd_answers(struct pando_export *exp, uint32_t id)
{
	return osd_conns_ping(exp->conns, id) == 0;
}

bool pando_layouts_client_may_log(void)
{
	unsigned dropped;
	bool pass = ratelimit_pass_now(&client_log, &dropped);

	if (pass && dropped)
		LogInfo(COMPONENT_PNFS, "pando: %u lines clients caused were dropped", dropped);
	return pass;
}

void pando_layouts_note_io_error(struct pando_export *exp, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum)
{
	/* A client that could not write a mirror left it behind, but its word
	 * alone does not make the mirror stale: a handle the OSD refused (a
	 * recall, a fence) says nothing of the mirror, and the client resends
	 * through the manager, which writes every mirror.  Stale only when
	 * the OSD does not answer the manager either. */
	bool refused = status == NFS4ERR_STALE || status == NFS4ERR_ACCESS ||
		       status == NFS4ERR_BADHANDLE || status == NFS4ERR_PERM ||
		       status == NFS4ERR_FHEXPIRED;
	bool answers, stale;
	int rc;

	pando_grants_count_io_error(exp->grants);
	/* Only an OSD of the file's own layout: any other id would put a
	 * damage record (one per id, durable) on components it never saw. */
	if (!uses_osd(exp, ino, osd_id)) {
		if (pando_layouts_client_may_log())
			LogInfo(COMPONENT_PNFS,
				"pando: a client reported an error from OSD %u, which holds no "
				"component of inode %" PRIu64 ": ignored",
				osd_id, ino);
		return;
	}
	answers = osd_answers(exp, osd_id);
	/* Linux reports a data server it could not use as NXIO, whether the
	 * OSD refused the handle or could not be reached: the manager asks. */
	if (refused || (status == NFS4ERR_NXIO && answers)) {
		if (pando_layouts_client_may_log())
			LogInfo(COMPONENT_PNFS,
				"pando: OSD %u refused a client's handle for inode %" PRIu64
				" (nfsstat4 %d, op %u): a recalled or fenced layout, not damage",
				osd_id, ino, status, opnum);
		return;
	}
	stale = (opnum == NFS4_OP_WRITE || opnum == NFS4_OP_COMMIT) && !answers;
	rc = ns_damage_add(exp->ns, ino, osd_id, status, opnum, stale);
	if (pando_layouts_client_may_log())
		LogWarn(COMPONENT_PNFS,
			"pando: a client reported nfsstat4 %d (op %u) from OSD %u on inode %" PRIu64
			": component %s, %s",
			status, opnum, osd_id, ino, stale ? "stale" : "failing",
			rc ? "NOT recorded" : "damage recorded");
}

/* A NULL call to each OSD: with pNFS the manager hardly talks to the
 * OSDs itself, so it asks, to notice a dead one within seconds. */
static void probe_osds(struct pando_export *exp)
{
	for (size_t i = 0; i < osd_conns_count(exp->conns); i++) {
		struct osd_health h;

		osd_conns_health(exp->conns, i, &h);
		osd_conns_ping(exp->conns, h.id);
	}
}

static void watch_osds(struct pando_layouts_watcher *w)
{
	struct pando_export *exp = w->exp;

	probe_osds(exp);
	for (size_t i = 0; i < osd_conns_count(exp->conns); i++) {
		struct osd_health h;

		osd_conns_health(exp->conns, i, &h);
		if (w->osd_was_up[i] && !h.reachable) {
			LogWarn(COMPONENT_PNFS, "pando: OSD %u is unreachable (%d)", h.id,
				h.last_error);
			pando_grants_recall_osd(exp->grants, h.id, "an OSD it uses is unreachable");
		}
		w->osd_was_up[i] = h.reachable;
	}
}

static bool watch(void *arg)
{
	struct pando_layouts_watcher *w = arg;

	pando_grants_tick(w->exp->grants);
	watch_osds(w);
	return true;
}

int pando_layouts_grants_new(struct pando_export *exp, uint32_t recall_timeout_s,
			     struct pando_grants **out)
{
	struct pando_grants_ops ops = {
		.arg = exp,
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

	return pando_grants_new(&ops, recall_timeout_s, out);
}

int pando_layouts_watcher_start(struct pando_export *exp, struct pando_layouts_watcher **out)
{
	struct pando_layouts_watcher *w = gsh_calloc(1, sizeof(*w));
	int rc;

	w->exp = exp;
	for (size_t i = 0; i < CLUSTER_DESC_MAX_OSDS; i++)
		w->osd_was_up[i] = true;
	rc = pando_ticker_start(watch, w, 1000, &w->ticker);
	if (rc) {
		gsh_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void pando_layouts_watcher_stop(struct pando_layouts_watcher *w)
{
	if (!w)
		return;
	pando_ticker_stop(w->ticker);
	gsh_free(w);
}
