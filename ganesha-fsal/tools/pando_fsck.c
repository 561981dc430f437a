/* pando-fsck: the metadata manager's consistency checker and repairer.
 *
 *   pando-fsck --db DIR --cluster FILE [--repair] [--no-osds] [-v]
 *
 * 1. The namespace store: ns_check; with --repair, ns_repair and a second
 *    ns_check that says what is left.
 * 2. The objects (unless --no-osds): every storage map and every pending
 *    removal intent against what each OSD of the cluster description holds
 *    in the partitions they use:
 *      orphan object    on an OSD, named by no map or intent: removed
 *      missing object   named by a map, absent from its OSD: reported
 *      object tail      a RAID-0/1 object longer than its file (objects keep
 *                       file offsets): bytes of writes a crash never let
 *                       the manager acknowledge, or of pNFS writes whose
 *                       LAYOUTCOMMIT the manager refused; not a problem,
 *                       -v lists them, --repair trims them (a later growth
 *                       of the file would show them instead of zeros)
 *      shared object    named by two maps (reported), or by a map and an
 *                       intent (the intent is finished without it)
 *      unknown OSD      a map names an OSD the description lacks: reported
 *      unreachable OSD  reported; its objects are not checked
 *      undecodable map  reported; an undecodable intent is dropped
 *      next id          not above an object id in use: raised, or new
 *                       objects could take ids that live ones have
 *    Pending intents are work in progress, not problems: -v lists them,
 *    --repair finishes them (removes their objects, ns_intent_done).
 *
 * One line per problem on stdout, then a summary table; progress every
 * NS_PROGRESS_EVERY inodes or objects on stderr.  Exit status as e2fsck's:
 * 0 clean, 1 problems found and all repaired, 4 problems left (or found
 * without --repair), 8 operational error, 16 usage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "cluster_desc.h"
#include "cluster_map.h"
#include "ns_store.h"
#include "osd_conns.h"
#include "pando/osd_ctl_client.h"
#include "pando/storage_map.h"

#define PROG "pando-fsck"

enum {
	EXIT_CLEAN = 0,
	EXIT_REPAIRED = 1,
	EXIT_LEFT = 4,
	EXIT_OPERATIONAL = 8,
	EXIT_USAGE = 16,
};

#define OSD_TIMEOUT_MS 10000
#define ATTR_PAGE 1
#define ATTR_LENGTH 1
#define ATTR_OWNER 5
#define UNKNOWN_SIZE UINT64_MAX

/* Problems on the object side, by kind. */
enum kind {
	ORPHAN_OBJECT,
	MISSING_OBJECT,
	SHARED_OBJECT,
	UNKNOWN_OSD,
	UNREACHABLE_OSD,
	BAD_MAP,
	NEXT_ID,
	STALE_COMPONENT,
	OUT_COMPONENT,
	NKINDS,
};

static const char *const kind_names[NKINDS] = {
	"orphan objects", "missing objects", "shared objects",
	"unknown OSDs", "unreachable OSDs", "undecodable maps", "next id",
	"stale components", "components on out OSDs",
};

struct tally {
	uint64_t found;
	uint64_t repaired;
};

/* One object the namespace names: a component of a map or of an intent. */
struct want {
	uint32_t osd;
	uint64_t partition;
	uint64_t object;
	uint64_t ino;           /* the file the map or the intent is of */
	uint64_t intent;        /* 0: a map's component */
	uint64_t size;          /* maps: the file's size, UNKNOWN_SIZE to skip */
	uint32_t component;     /* index in the map, group-major */
	uint8_t raid;
	bool seen;              /* listed on its OSD */
};

struct fsck {
	const char *db;
	const char *cluster;
	bool repair;
	bool osds;
	bool verbose;
	const char *phase;              /* for progress lines */
	struct ns_store *s;
	struct cluster_desc desc;
	struct osd_conns *conns;
	struct ns_check_result ns_found, ns_left;
	struct tally t[NKINDS];
	struct want *wants;
	size_t nwants, wants_cap;
	uint64_t parts[8];              /* the partitions maps and intents use */
	size_t nparts;
	uint64_t *broken;               /* files whose map is undecodable, sorted */
	size_t nbroken, broken_cap;
	bool *down;                     /* per OSD of desc: could not be listed */
	uint32_t out[64];               /* OSDs the kept cluster map has out */
	size_t nout;
	uint64_t max_object;
	uint64_t listed;
	uint64_t intents, intents_done;
};

/* ---- output ---------------------------------------------------------------- */

static void problem(struct fsck *f, enum kind k, bool repaired, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem(struct fsck *f, enum kind k, bool repaired, const char *fmt, ...)
{
	va_list ap;

	f->t[k].found++;
	f->t[k].repaired += repaired;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void info(struct fsck *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void info(struct fsck *f, const char *fmt, ...)
{
	va_list ap;

	if (!f->verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* What a repair attempt came to, as the end of a problem's line. */
static const char *outcome(const struct fsck *f, int rc, const char *done, char *buf,
			   size_t cap)
{
	if (!f->repair)
		return "";
	if (rc)
		snprintf(buf, cap, ": not repaired: %s", strerror(-rc));
	else
		snprintf(buf, cap, ": %s", done);
	return buf;
}

static void progress(void *arg, const char *what, uint64_t done)
{
	const struct fsck *f = arg;

	fprintf(stderr, PROG ": %s: %llu %s\n", f->phase, (unsigned long long)done, what);
}

static void store_log(void *arg, const char *msg)
{
	fprintf(stderr, PROG ": store: %s\n", msg);
}

/* ---- 1. the namespace ------------------------------------------------------ */

static void say_found(void *arg, const char *msg)
{
	printf("namespace: %s\n", msg);
}

static void say_fixed(void *arg, const char *msg)
{
	printf("namespace: repair: %s\n", msg);
}

static void say_left(void *arg, const char *msg)
{
	printf("namespace: left: %s\n", msg);
}

static int check_namespace(struct fsck *f)
{
	struct ns_check_result fixed;
	int rc;

	f->phase = "namespace";
	rc = ns_check(f->s, say_found, f, &f->ns_found);
	f->ns_left = f->ns_found;
	if (rc || !f->repair || !f->ns_found.problems)
		return rc;
	f->phase = "repair";
	rc = ns_repair(f->s, say_fixed, f, &fixed);
	/* Stopped by something it explained (lost+found taken): what is left
	 * is counted below. */
	if (rc && rc != -ENOTDIR)
		return rc;
	f->phase = "namespace again";
	return ns_check(f->s, say_left, f, &f->ns_left);
}

/* ---- 2a. what the namespace names ------------------------------------------ */

static int note_partition(struct fsck *f, uint64_t partition)
{
	for (size_t i = 0; i < f->nparts; i++)
		if (f->parts[i] == partition)
			return 0;
	if (f->nparts == sizeof(f->parts) / sizeof(f->parts[0]))
		return -E2BIG;
	f->parts[f->nparts++] = partition;
	return 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	p = realloc(*v, ncap * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

/* Every component of map, as objects owed to a file (intent 0) or to an
 * intent. */
static int add_wants(struct fsck *f, const struct pando_storage_map *map,
		     const struct want *proto)
{
	uint32_t width = pando_map_width(map);
	int rc = note_partition(f, map->partition_id);

	for (uint32_t g = 0; !rc && g < map->groups; g++) {
		for (uint32_t c = 0; !rc && c < width; c++) {
			const struct pando_component *k = pando_map_component(map, g, c);
			struct want *w;

			rc = grow((void **)&f->wants, &f->wants_cap, f->nwants, sizeof(*w));
			if (rc)
				break;
			w = &f->wants[f->nwants++];
			*w = *proto;
			w->osd = k->osd_id;
			w->partition = map->partition_id;
			w->object = k->object_id;
			w->component = g * width + c;
			w->raid = map->shape.raid;
			if (k->object_id > f->max_object)
				f->max_object = k->object_id;
		}
	}
	return rc;
}

static int note_broken(struct fsck *f, uint64_t ino)
{
	int rc = grow((void **)&f->broken, &f->broken_cap, f->nbroken, sizeof(*f->broken));

	if (!rc)
		f->broken[f->nbroken++] = ino;          /* maps come in inode order */
	return rc;
}

static bool is_broken(const struct fsck *f, uint64_t ino)
{
	size_t lo = 0, hi = f->nbroken;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->broken[mid] == ino)
			return true;
		if (f->broken[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* A map's objects must not be longer than the file; the file's size is
 * unknown for a map its inode does not own (the namespace check said so). */
static uint64_t file_size(struct fsck *f, uint64_t ino)
{
	struct ns_attr a;

	return !ns_getattr(f->s, ino, &a) && a.objects ? a.size : UNKNOWN_SIZE;
}

static int map_wants(void *arg, uint64_t ino, const void *blob, size_t len)
{
	struct fsck *f = arg;
	struct want proto = { .ino = ino };
	struct pando_storage_map *map;
	int rc = pando_map_decode(blob, len, &map);

	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		problem(f, BAD_MAP, false, "file %llu: storage map undecodable (%s): its "
			"objects cannot be checked", (unsigned long long)ino, strerror(-rc));
		return note_broken(f, ino);
	}
	proto.size = file_size(f, ino);
	rc = add_wants(f, map, &proto);
	pando_map_free(map);
	return rc;
}

/* An undecodable intent names nothing that can be found: its objects show
 * up as orphans, and the intent goes. */
static int intent_wants(void *arg, const struct ns_intent *in)
{
	struct fsck *f = arg;
	struct want proto = { .ino = in->ino, .intent = in->id, .size = UNKNOWN_SIZE };
	struct pando_storage_map *map;
	char buf[128];
	int rc = pando_map_decode(in->blob, in->len, &map);

	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		int done = f->repair ? ns_intent_done(f->s, in->id) : 0;

		problem(f, BAD_MAP, f->repair && !done, "intent %llu (file %llu): undecodable "
			"(%s)%s", (unsigned long long)in->id, (unsigned long long)in->ino,
			strerror(-rc), outcome(f, done, "dropped", buf, sizeof(buf)));
		return 0;
	}
	rc = add_wants(f, map, &proto);
	pando_map_free(map);
	return rc;
}

static int cmp_want(const void *a, const void *b)
{
	const struct want *x = a, *y = b;

	if (x->osd != y->osd)
		return x->osd < y->osd ? -1 : 1;
	if (x->partition != y->partition)
		return x->partition < y->partition ? -1 : 1;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	return x->intent < y->intent ? -1 : x->intent > y->intent;  /* maps first */
}

static bool same_object(const struct want *a, const struct want *b)
{
	return a->osd == b->osd && a->partition == b->partition && a->object == b->object;
}

/* The first want for (osd, partition, object): a map's if any; or NULL. */
static struct want *want_find(struct fsck *f, uint32_t osd, uint64_t partition,
			      uint64_t object)
{
	struct want key = { .osd = osd, .partition = partition, .object = object };
	size_t lo = 0, hi = f->nwants;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_want(&f->wants[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nwants && same_object(&f->wants[lo], &key) ? &f->wants[lo] : NULL;
}

/* Two files on one object write each other's data; an intent on a live
 * file's object would remove its data.  The second case is repaired when
 * the intent is finished without the object (finish_intent). */
static void check_shared(struct fsck *f)
{
	for (size_t i = 1; i < f->nwants; i++) {
		const struct want *a = &f->wants[i - 1], *b = &f->wants[i];

		if (!same_object(a, b) || a->intent)
			continue;
		if (!b->intent)
			problem(f, SHARED_OBJECT, false, "object %llu on osd %u: named by the "
				"maps of files %llu and %llu", (unsigned long long)a->object,
				a->osd, (unsigned long long)a->ino, (unsigned long long)b->ino);
		else
			problem(f, SHARED_OBJECT, false, "object %llu on osd %u: named by file "
				"%llu's map and by intent %llu, which must not remove it",
				(unsigned long long)a->object, a->osd,
				(unsigned long long)a->ino, (unsigned long long)b->intent);
	}
}

static void check_unknown_osds(struct fsck *f)
{
	for (size_t i = 0; i < f->nwants; i++) {
		const struct want *w = &f->wants[i];

		if (!w->intent && !cluster_desc_osd(&f->desc, w->osd))
			problem(f, UNKNOWN_OSD, false, "file %llu: object %llu (component %u) "
				"on osd %u, which the cluster description does not list",
				(unsigned long long)w->ino, (unsigned long long)w->object,
				w->component, w->osd);
	}
}

/* Object ids come from the store's allocator (ns_ids_reserve): one that
 * could hand out a live object's id again would make two files share it. */
static int check_next_id(struct fsck *f)
{
	uint64_t next = ns_next_id(f->s);
	char done[64], buf[128];
	int rc;

	if (!f->max_object || next > f->max_object)
		return 0;
	rc = f->repair ? ns_ids_raise(f->s, f->max_object + 1) : 0;
	snprintf(done, sizeof(done), "raised to %llu", (unsigned long long)f->max_object + 1);
	problem(f, NEXT_ID, f->repair && !rc, "next id %llu is not above object id %llu, "
		"which is in use%s", (unsigned long long)next,
		(unsigned long long)f->max_object, outcome(f, rc, done, buf, sizeof(buf)));
	return 0;
}

static int collect_wants(struct fsck *f)
{
	int rc = note_partition(f, f->desc.partition);

	f->phase = "maps";
	if (!rc)
		rc = ns_map_list(f->s, map_wants, f);
	f->phase = "intents";
	if (!rc)
		rc = ns_intent_list(f->s, 0, intent_wants, f);
	if (rc)
		return rc;
	qsort(f->wants, f->nwants, sizeof(*f->wants), cmp_want);
	check_shared(f);
	check_unknown_osds(f);
	return check_next_id(f);
}

/* ---- 2b. what the OSDs hold ------------------------------------------------- */

/* One control call on an OSD through the connection pool, its result recorded. */
#define OSD_CALL(f, id, rc, call)                                               \
	do {                                                                    \
		struct osd_ctl_client *c_ = osd_conns_get((f)->conns, (id), &(rc)); \
		if (c_) {                                                       \
			(rc) = (call);                                          \
			osd_conns_result((f)->conns, (id), (rc));                 \
		}                                                               \
	} while (0)

/* Page-1 attributes of an object: logical length and owning file. */
static int object_attrs(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object,
			uint64_t *length, uint64_t *owner)
{
	static const struct osd_ctl_attr_key keys[2] = {
		{ ATTR_PAGE, ATTR_LENGTH }, { ATTR_PAGE, ATTR_OWNER },
	};
	struct osd_ctl_obj_id id = { partition, object };
	struct osd_ctl_attr attrs[2];
	size_t n = 0;
	int rc;

	OSD_CALL(f, osd, rc, osd_ctl_getattr(c_, &id, keys, 2, attrs, 2, &n));
	if (!rc && (n != 2 || attrs[0].len != 8 || attrs[1].len != 8))
		rc = -EPROTO;
	if (!rc) {
		*length = get_be64(attrs[0].value);
		*owner = get_be64(attrs[1].value);
	}
	return rc;
}

static int remove_object(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
{
	int res = 0, rc;

	OSD_CALL(f, osd, rc, osd_ctl_objects_remove(c_, partition, &object, 1, &res));
	if (!rc)
		rc = res;
	return rc == -ENOENT ? 0 : rc;
}

static void orphan(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
{
	uint64_t length = 0, owner = 0;
	char who[64] = "attributes unreadable", buf[160];
	const char *end = "";
	bool removed = false;
	int rc = object_attrs(f, osd, partition, object, &length, &owner);

	if (!rc)
		snprintf(who, sizeof(who), "file %llu, %llu bytes", (unsigned long long)owner,
			 (unsigned long long)length);
	/* Its file's map, unreadable, may well name it. */
	if (!rc && is_broken(f, owner)) {
		end = ": kept: its file's map is undecodable";
	} else if (f->repair) {
		rc = remove_object(f, osd, partition, object);
		removed = !rc;
		end = outcome(f, rc, "removed", buf, sizeof(buf));
	}
	problem(f, ORPHAN_OBJECT, removed, "osd %u: orphan object %llu in partition %llu (%s): "
		"named by no map or intent%s", osd, (unsigned long long)object,
		(unsigned long long)partition, who, end);
}

static int truncate_object(struct fsck *f, const struct want *w)
{
	struct osd_ctl_obj_id id = { w->partition, w->object };
	struct osd_ctl_attr a = { .page = ATTR_PAGE, .number = ATTR_LENGTH, .len = 8 };
	int rc;

	put_be64(a.value, w->size);
	OSD_CALL(f, w->osd, rc, osd_ctl_setattr(c_, &id, &a, 1, NULL));
	return rc;
}

/* RAID-0 and RAID-1 objects keep file offsets: none is longer than its
 * file.  (RS components pack rows; their lengths say nothing.) */
static void check_size(struct fsck *f, const struct want *w)
{
	uint64_t length, owner;
	char done[64], buf[128];
	int rc;

	if (w->size == UNKNOWN_SIZE || w->raid == PANDO_RS)
		return;
	if (object_attrs(f, w->osd, w->partition, w->object, &length, &owner) ||
	    length <= w->size)
		return;
	/* Bytes past the size are what a crash left of writes it never
	 * acknowledged (the size update was lost with them), or pNFS writes
	 * whose LAYOUTCOMMIT was refused (the protocol never made them part of
	 * the file): not damage, but a later growth of the file would show
	 * them instead of zeros, so --repair trims them.  -v lists them first,
	 * for an admin who wants to look. */
	rc = f->repair ? truncate_object(f, w) : 0;
	snprintf(done, sizeof(done), "truncated to %llu", (unsigned long long)w->size);
	info(f, "file %llu: object %llu (component %u) on osd %u holds %llu bytes, past the "
	     "file's size %llu (a tail of writes never committed to the size)%s",
	     (unsigned long long)w->ino, (unsigned long long)w->object, w->component, w->osd,
	     (unsigned long long)length, (unsigned long long)w->size,
	     outcome(f, rc, done, buf, sizeof(buf)));
}

static void listed(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
{
	struct want *w = want_find(f, osd, partition, object);

	if (++f->listed % NS_PROGRESS_EVERY == 0)
		progress(f, "objects", f->listed);
	if (!w) {
		orphan(f, osd, partition, object);
		return;
	}
	if (!w->intent)
		check_size(f, w);
	for (; w < f->wants + f->nwants && w->osd == osd && w->partition == partition &&
	       w->object == object; w++)
		w->seen = true;
}

static int list_partition(struct fsck *f, const struct cluster_osd *o, uint64_t partition,
			  uint64_t *ids)
{
	uint64_t after = 0;
	bool eof = false;
	int rc = 0;

	while (!rc && !eof) {
		size_t n = 0;

		OSD_CALL(f, o->id, rc, osd_ctl_list(c_, partition, after, ids,
						    OSD_CTL_CLIENT_MAX_BATCH, &n, &eof));
		for (size_t i = 0; !rc && i < n; i++)
			listed(f, o->id, partition, ids[i]);
		if (!rc && n)
			after = ids[n - 1];
		else if (!rc && !eof)
			rc = -EPROTO;   /* no progress: the target would keep us here */
	}
	/* A partition the OSD never got holds nothing. */
	return rc == -ENOENT ? 0 : rc;
}

static bool osd_out(const struct fsck *f, uint32_t id)
{
	for (size_t i = 0; i < f->nout; i++)
		if (f->out[i] == id)
			return true;
	return false;
}

static void list_osd(struct fsck *f, size_t i, uint64_t *ids)
{
	const struct cluster_osd *o = &f->desc.osds[i];
	int rc = 0;

	for (size_t p = 0; !rc && p < f->nparts; p++)
		rc = list_partition(f, o, f->parts[p], ids);
	if (!rc) {
		info(f, "osd %u (%s): listed", o->id, o->ctl);
		return;
	}
	f->down[i] = true;
	/* A dead OSD the map took out is expected not to answer; whether
	 * files still name it is the redundancy check's to say. */
	if (osd_out(f, o->id))
		printf("osd %u (%s): out, and unreachable: %s: not checked\n", o->id, o->ctl,
		       strerror(-rc));
	else
		problem(f, UNREACHABLE_OSD, false, "osd %u (%s): unreachable: %s: its objects "
			"were not checked", o->id, o->ctl, strerror(-rc));
}

static bool osd_down(const struct fsck *f, uint32_t id)
{
	const struct cluster_osd *o = cluster_desc_osd(&f->desc, id);

	return !o || f->down[o - f->desc.osds];
}

/* Whatever a map names and no OSD holds.  With mirrors or parity another
 * copy may survive; rebuild is what restores it, not fsck. */
static void check_missing(struct fsck *f)
{
	for (size_t i = 0; i < f->nwants; i++) {
		const struct want *w = &f->wants[i];

		if (w->intent || w->seen || osd_down(f, w->osd))
			continue;
		problem(f, MISSING_OBJECT, false, "file %llu: object %llu (component %u) missing "
			"on osd %u: %s", (unsigned long long)w->ino, (unsigned long long)w->object,
			w->component, w->osd, w->raid == PANDO_RAID0 ? "its data is lost" :
			"a copy is lost (rebuild restores it)");
	}
}

static int list_osds(struct fsck *f)
{
	uint64_t *ids = malloc(OSD_CTL_CLIENT_MAX_BATCH * sizeof(*ids));

	f->phase = "objects";
	f->down = calloc(f->desc.nosds ? f->desc.nosds : 1, sizeof(*f->down));
	if (!ids || !f->down) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->desc.nosds; i++)
		list_osd(f, i, ids);
	free(ids);
	check_missing(f);
	return 0;
}

/* ---- 2c. redundancy ------------------------------------------------------------ */

static int stale_record(void *arg, const struct ns_suspect *sp)
{
	struct fsck *f = arg;

	if (sp->stale)
		problem(f, STALE_COMPONENT, false, "file %llu: its component on osd %u is stale "
			"(it missed writes): rebuild catches it up", (unsigned long long)sp->ino,
			sp->osd_id);
	return 0;
}


/* Files short of the copies their scheme wants: a stale component, or one
 * on an OSD the cluster map took out (missing objects are counted above).
 * Reported only: the manager's rebuild restores them. */
static int check_redundancy(struct fsck *f)
{
	uint64_t short_before = f->t[MISSING_OBJECT].found;
	int rc;

	for (size_t i = 0; i < f->nwants; i++) {
		const struct want *w = &f->wants[i];

		if (!w->intent && osd_out(f, w->osd))
			problem(f, OUT_COMPONENT, false, "file %llu: object %llu (component %u) is "
				"on osd %u, which is out: rebuild moves it",
				(unsigned long long)w->ino, (unsigned long long)w->object,
				w->component, w->osd);
	}
	rc = ns_suspect_list(f->s, 0, stale_record, f);
	if (!rc && short_before + f->t[STALE_COMPONENT].found + f->t[OUT_COMPONENT].found == 0)
		printf("redundancy: every file has every copy its scheme wants\n");
	else if (!rc)
		printf("redundancy: some files are short of copies (above)\n");
	return rc;
}

/* ---- 2d. pending intents ----------------------------------------------------- */

/* Removes an intent's objects, but none a map also names; done only when
 * every OSD answered. */
static int finish_intent(struct fsck *f, const struct ns_intent *in,
			 const struct pando_storage_map *map, uint64_t *removed)
{
	uint32_t width = pando_map_width(map);
	uint64_t shared = 0;
	int first = 0;

	for (uint32_t i = 0; i < map->groups * width; i++) {
		const struct pando_component *k = &map->comp[i];
		const struct want *w = want_find(f, k->osd_id, map->partition_id, k->object_id);
		int rc;

		if (w && !w->intent) {
			shared++;
			continue;
		}
		rc = osd_down(f, k->osd_id) ? -EHOSTDOWN :
		     remove_object(f, k->osd_id, map->partition_id, k->object_id);
		*removed += !rc;
		if (rc && !first)
			first = rc;
	}
	if (first)
		return first;
	f->t[SHARED_OBJECT].repaired += shared;
	return ns_intent_done(f->s, in->id);
}

static int visit_intent(void *arg, const struct ns_intent *in)
{
	struct fsck *f = arg;
	struct pando_storage_map *map;
	uint64_t removed = 0;
	int rc = pando_map_decode(in->blob, in->len, &map);

	if (rc)
		return rc == -ENOMEM ? rc : 0;  /* intent_wants reported it */
	f->intents++;
	info(f, "intent %llu (file %llu): %u objects owed removal", (unsigned long long)in->id,
	     (unsigned long long)in->ino, map->groups * pando_map_width(map));
	if (f->repair) {
		rc = finish_intent(f, in, map, &removed);
		f->intents_done += !rc;
		if (rc)
			info(f, "intent %llu: kept (%s), %llu objects removed",
			     (unsigned long long)in->id, strerror(-rc), (unsigned long long)removed);
		else
			info(f, "intent %llu: finished, %llu objects removed",
			     (unsigned long long)in->id, (unsigned long long)removed);
	}
	pando_map_free(map);
	return rc == -EIO ? rc : 0;
}

static int check_objects(struct fsck *f)
{
	int rc = osd_conns_new(&f->desc, &(struct osd_conns_options){
		.conns_per_osd = 1, .timeout_ms = OSD_TIMEOUT_MS }, &f->conns);

	if (!rc)
		rc = collect_wants(f);
	if (!rc)
		rc = list_osds(f);
	if (!rc)
		rc = check_redundancy(f);
	f->phase = "intents";
	return rc ? rc : ns_intent_list(f->s, 0, visit_intent, f);
}

/* ---- summary ----------------------------------------------------------------- */

struct row {
	const char *name;
	uint64_t found, left;
};

static void print_row(const struct row *r)
{
	uint64_t repaired = r->found > r->left ? r->found - r->left : 0;

	printf("  %-22s %10llu %10llu %10llu\n", r->name, (unsigned long long)r->found,
	       (unsigned long long)repaired, (unsigned long long)r->left);
}

static void add_row(const struct row *r, struct row *total)
{
	print_row(r);
	total->found += r->found;
	total->left += r->left;
}

/* Prints the table; the exit status it comes to. */
static int summary(struct fsck *f)
{
	const struct ns_check_result *a = &f->ns_found, *b = &f->ns_left;
	const struct row ns_rows[] = {
		{ "bad records", a->bad_records, b->bad_records },
		{ "dangling entries", a->dangling_dirents, b->dangling_dirents },
		{ "index mismatches", a->index_mismatches, b->index_mismatches },
		{ "wrong link counts", a->bad_links, b->bad_links },
		{ "orphan inodes", a->orphans, b->orphans },
		{ "stray keys", a->stray_keys, b->stray_keys },
		{ "bad counters", a->bad_counters, b->bad_counters },
	};
	struct row total = { "total", 0, 0 };

	printf("\n%s: %llu inodes, %llu entries\n", f->db, (unsigned long long)a->inodes,
	       (unsigned long long)a->dirents);
	printf("  %-22s %10s %10s %10s\n", "problem", "found", "repaired", "left");
	for (size_t i = 0; i < sizeof(ns_rows) / sizeof(ns_rows[0]); i++)
		add_row(&ns_rows[i], &total);
	for (int k = 0; f->osds && k < NKINDS; k++) {
		struct row r = { kind_names[k], f->t[k].found, f->t[k].found - f->t[k].repaired };

		add_row(&r, &total);
	}
	print_row(&total);
	if (f->osds)
		printf("pending intents: %llu, finished: %llu; objects listed: %llu\n",
		       (unsigned long long)f->intents, (unsigned long long)f->intents_done,
		       (unsigned long long)f->listed);
	if (!total.found)
		return EXIT_CLEAN;
	return total.left ? EXIT_LEFT : EXIT_REPAIRED;
}

/* ---- command line ------------------------------------------------------------- */

static int usage(FILE *out, int status)
{
	fprintf(out, "usage: " PROG " --db DIR --cluster FILE [--repair] [--no-osds] [-v]\n"
		"  --db DIR        the metadata manager's namespace store (Ganesha stopped)\n"
		"  --cluster FILE  the cluster description (OSDs, key, partition)\n"
		"  --repair        fix what can be fixed\n"
		"  --no-osds       the namespace only (--cluster not needed)\n"
		"  -v              list pending intents and each OSD listed\n"
		"exit: 0 clean, 1 all repaired, 4 problems left, 8 operational error, "
		"16 usage\n");
	return status;
}

static int parse_args(struct fsck *f, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "repair", no_argument, NULL, 'r' },
		{ "no-osds", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	f->osds = true;
	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'd': f->db = optarg; break;
		case 'c': f->cluster = optarg; break;
		case 'r': f->repair = true; break;
		case 'n': f->osds = false; break;
		case 'v': f->verbose = true; break;
		case 'h': exit(usage(stdout, EXIT_CLEAN));
		default: return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc || !f->db || (f->osds && !f->cluster))
		return usage(stderr, EXIT_USAGE);
	return 0;
}

/* OSDs the cluster map added since cluster.conf was written, and their
 * current addresses: the manager keeps the last map it applied beside the
 * store, and fsck runs while the manager is stopped. */
static int merge_kept_map(struct fsck *f)
{
	char path[PATH_MAX], why[512];
	struct cluster_map m;
	int rc;

	if (snprintf(path, sizeof(path), "%s.map.json", f->db) >= (int)sizeof(path))
		return 0;
	rc = cluster_map_load(path, &m, why, sizeof(why));
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		fprintf(stderr, PROG ": warning: ignoring the kept cluster map: %s\n", why);
		return 0;
	}
	for (size_t i = 0; i < m.nosds && f->nout < 64; i++)
		if (!m.osds[i].in)
			f->out[f->nout++] = m.osds[i].id;
	rc = cluster_desc_merge_map(&f->desc, &m);
	if (rc)
		fprintf(stderr, PROG ": %s: more OSDs than fsck can hold\n", path);
	else
		printf("OSDs from the cluster map %s (epoch %llu)\n", path,
		       (unsigned long long)m.epoch);
	cluster_map_free(&m);
	return rc;
}

static int open_all(struct fsck *f)
{
	struct ns_options o = { .log = store_log };
	char why[512];
	int rc;

	if (f->osds) {
		rc = cluster_desc_load(f->cluster, &f->desc, why, sizeof(why));
		if (!rc)
			rc = merge_kept_map(f);
		if (rc) {
			fprintf(stderr, PROG ": %s\n", why);
			return rc;
		}
	}
	rc = ns_open(f->db, &o, &f->s);
	if (rc == -EBUSY)
		fprintf(stderr, PROG ": %s: the store is in use (is ganesha.nfsd running?)\n",
			f->db);
	else if (rc == -ENOENT)
		fprintf(stderr, PROG ": %s: no namespace store there\n", f->db);
	else if (rc)
		fprintf(stderr, PROG ": %s: cannot open the store: %s\n", f->db, strerror(-rc));
	if (!rc)
		ns_set_progress(f->s, progress, f);
	return rc;
}

static void close_all(struct fsck *f)
{
	if (f->conns)
		osd_conns_free(f->conns);
	if (f->s)
		ns_close(f->s);
	if (f->osds)
		cluster_desc_free(&f->desc);
	free(f->wants);
	free(f->broken);
	free(f->down);
}

int main(int argc, char **argv)
{
	struct fsck f = { 0 };
	int status = parse_args(&f, argc, argv), rc;

	if (status)
		return status;
	rc = open_all(&f);
	if (!rc)
		rc = check_namespace(&f);
	if (!rc && f.osds)
		rc = check_objects(&f);
	if (rc && f.s)
		fprintf(stderr, PROG ": %s: check stopped: %s\n", f.db, strerror(-rc));
	status = rc ? EXIT_OPERATIONAL : summary(&f);
	close_all(&f);
	return status;
}
