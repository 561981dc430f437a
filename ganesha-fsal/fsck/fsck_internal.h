/* What the files of the object check share: its state, the objects the
 * namespace names, the report, and the calls one step makes into another.
 * Private to ganesha-fsal/fsck/. */
#ifndef PANDO_FSCK_INTERNAL_H
#define PANDO_FSCK_INTERNAL_H

#include "fsck_check.h"

#define UNKNOWN_SIZE UINT64_MAX

/* One object the namespace names: a component of a map or of an intent. */
struct want {
	uint32_t osd;
	uint64_t partition;
	uint64_t object;
	uint64_t ino;       /* the file the map or the intent is of */
	uint64_t intent;    /* 0: a map's component */
	uint64_t size;      /* maps: the file's size, UNKNOWN_SIZE to skip */
	uint32_t component; /* index in the map, group-major */
	uint8_t raid;
	bool seen; /* listed on its OSD */
};

struct fsck {
	struct ns_store *s;
	const struct cluster_map *cluster_map;
	struct osd_conns *conns;
	const struct fsck_options *o;
	const struct fsck_hooks *h;
	struct fsck_result *res;
	struct want *wants; /* sorted by OSD, partition, object */
	size_t nwants, wants_cap;
	uint64_t parts[8]; /* the partitions maps and intents use */
	size_t nparts;
	uint64_t *broken; /* files whose map is undecodable, sorted */
	size_t nbroken, broken_cap;
	bool *down; /* per OSD of cluster_map: could not be listed */
	uint64_t max_object;
};

/* fsck_check.c: the report */
void fsck_problem(struct fsck *f, enum fsck_kind k, bool repaired, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void fsck_detail(struct fsck *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fsck_note(struct fsck *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fsck_phase(struct fsck *f, const char *name);
/* What a repair attempt came to, as the end of a problem's line ("" when
 * not repairing). */
const char *fsck_outcome(const struct fsck *f, int rc, const char *done, char *buf, size_t cap);

/* fsck_wants.c: what the namespace names */

/* Collects and sorts the components of every map and intent; reports
 * shared objects, unknown OSDs and a next id too low. */
int fsck_collect_wants(struct fsck *f);
/* The first want for (osd, partition, object): a map's if any; or NULL. */
struct want *fsck_want_find(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object);
/* Whether file ino's map could not be decoded. */
bool fsck_is_broken(const struct fsck *f, uint64_t ino);

/* fsck_osds.c: what the OSDs hold */

/* Lists every OSD's objects against the wants; reports orphans, tails,
 * unreachable OSDs and missing objects. */
int fsck_list_osds(struct fsck *f);
/* Removes one object; one already gone counts as removed. */
int fsck_remove_object(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object);
/* Whether the cluster map has OSD id out. */
bool fsck_osd_out(const struct fsck *f, uint32_t id);
/* Whether OSD id could not be listed (or is unknown). */
bool fsck_osd_down(const struct fsck *f, uint32_t id);

/* fsck_intents.c: pending intents, listed, and finished on repair */
int fsck_intents(struct fsck *f);

#endif
