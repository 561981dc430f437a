/* The object side of pando-fsck: every storage map and every pending
 * removal intent of a namespace store against what each OSD of the
 * cluster holds in the partitions they use.
 *
 *   orphan object    on an OSD, named by no map or intent: removed
 *   missing object   named by a map, absent from its OSD: reported
 *   object tail      a RAID-0/1 object longer than its file (objects keep
 *                    file offsets): bytes of writes a crash never let the
 *                    manager acknowledge, or of pNFS writes whose
 *                    LAYOUTCOMMIT the manager refused; not a problem, a
 *                    detail line, trimmed on repair (a later growth of the
 *                    file would show them instead of zeros)
 *   shared object    named by two maps (reported), or by a map and an
 *                    intent (the intent is finished without it)
 *   unknown OSD      a map names an OSD the cluster map lacks: reported
 *   unreachable OSD  reported; its objects are not checked
 *   undecodable map  reported; an undecodable intent is dropped
 *   next id          not above an object id in use: raised, or new objects
 *                    could take ids that live ones have
 *   stale component  a damage record says a component missed writes
 *   out component    a component on an OSD the cluster map took out
 *   outside its pool a component of a file whose policy names a pool, on
 *                    an OSD the cluster map puts in no pool or another
 *                    (moved after the file was placed): reported
 * Pending intents are work in progress, not problems: a detail line each;
 * repair finishes them (removes their objects, ns_intent_done).
 *
 * "removed", "raised", ... happen only with the repair option; without it
 * the check changes nothing, on the OSDs or in the store.  No Ganesha
 * types: pando-fsck and the unit tests link it. */
#ifndef PANDO_FSCK_CHECK_H
#define PANDO_FSCK_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_map.h"
#include "ns_store.h"
#include "osd_conns.h"

/* Problems on the object side, by kind. */
enum fsck_kind {
	FSCK_ORPHAN_OBJECT,
	FSCK_MISSING_OBJECT,
	FSCK_SHARED_OBJECT,
	FSCK_UNKNOWN_OSD,
	FSCK_UNREACHABLE_OSD,
	FSCK_BAD_MAP,
	FSCK_NEXT_ID,
	FSCK_STALE_COMPONENT,
	FSCK_OUT_COMPONENT,
	FSCK_OUTSIDE_POOL,
	FSCK_NKINDS,
};

/* "orphan objects", ...: the kind's row in a summary. */
const char *fsck_kind_name(enum fsck_kind k);

struct fsck_tally {
	uint64_t found;
	uint64_t repaired;
};

struct fsck_result {
	struct fsck_tally t[FSCK_NKINDS];
	uint64_t listed;       /* objects listed on the OSDs */
	uint64_t journal;      /* of those, journal segments' (left alone) */
	uint64_t intents;      /* pending intents */
	uint64_t intents_done; /* of those, finished by the repair */
};

struct fsck_options {
	bool repair;
	/* OSDs the cluster map has out: expected not to answer, and their
	 * components are short copies. */
	const uint32_t *out;
	size_t nout;
};

/* What the check says, a line at a time (no newline); any hook may be
 * NULL.  Lines come in the order the check finds things. */
struct fsck_hooks {
	void *arg;
	/* A problem of kind k, and whether the repair fixed it. */
	void (*problem)(void *arg, enum fsck_kind k, bool repaired, const char *line);
	/* Detail that is no problem: pending intents, object tails, each OSD
	 * listed (pando-fsck shows them with -v). */
	void (*detail)(void *arg, const char *line);
	/* An outcome that is no problem: an out OSD that did not answer, the
	 * redundancy verdict. */
	void (*note)(void *arg, const char *line);
	/* The step the check is in ("maps", "intents", "objects"): the store's
	 * own progress hook (ns_set_progress) is called within it. */
	void (*phase)(void *arg, const char *name);
	/* Every NS_PROGRESS_EVERY objects listed. */
	void (*progress)(void *arg, const char *what, uint64_t done);
};

/* Checks (and with o->repair repairs) the objects of store s on the OSDs
 * of cluster_map, reached through conns.  An OSD that does not answer is a
 * problem found, not an error.  res is zeroed first.  0, or -errno when
 * the check could not go on (the store failed, no memory). */
int fsck_objects(struct ns_store *s, const struct cluster_map *cluster_map, struct osd_conns *conns,
		 const struct fsck_options *o, const struct fsck_hooks *h, struct fsck_result *res);

#endif
