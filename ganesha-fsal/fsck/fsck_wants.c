/* The object check, step 1: what the namespace names.  Every component of
 * every storage map (owed to a file) and of every pending removal intent
 * (owed to the intent), sorted by OSD, partition and object, so that each
 * object an OSD lists is found by binary search.  Problems found here:
 * undecodable maps and intents, objects named twice, OSDs the cluster
 * map lacks, components outside their file's pool, an id allocator below
 * an object id in use. */
#include "fsck_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "pando/policy.h"
#include "pando/storage_map.h"

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

/* Every component of map, as objects owed to a file (intent 0) or to an
 * intent. */
static int add_wants(struct fsck *f, const struct pando_storage_map *map, const struct want *proto)
{
	uint32_t width = pando_map_width(map);
	int rc = note_partition(f, map->partition_id);

	for (uint32_t g = 0; !rc && g < map->groups; g++) {
		for (uint32_t c = 0; !rc && c < width; c++) {
			const struct pando_component *k = pando_map_component(map, g, c);
			struct want *w;

			rc = pando_grow((void **)&f->wants, &f->wants_cap, f->nwants + 1,
					sizeof(*w));
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
	int rc =
		pando_grow((void **)&f->broken, &f->broken_cap, f->nbroken + 1, sizeof(*f->broken));

	if (!rc)
		f->broken[f->nbroken++] = ino; /* maps come in inode order */
	return rc;
}

bool fsck_is_broken(const struct fsck *f, uint64_t ino)
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

/* The pool the file's policy names, "" for none.  A policy that does
 * not decode, or a map whose inode is gone (the namespace check says
 * so), names none here. */
static int pool_of(struct fsck *f, uint64_t ino, char pool[CLUSTER_MAP_POOL_MAX])
{
	struct pando_policy p;
	void *blob = NULL;
	size_t len = 0;
	int rc = ns_policy_get(f->s, ino, &blob, &len);

	pool[0] = 0;
	if (rc)
		return rc == -ENOMEM ? rc : 0;
	if (!pando_policy_decode(blob, len, &p))
		memcpy(pool, p.pool, CLUSTER_MAP_POOL_MAX);
	free(blob);
	return 0;
}

/* Placement, rebuild and transcode keep a pool's files on its OSDs; an
 * OSD moved to another pool takes its components out of theirs. */
static int check_pool(struct fsck *f, uint64_t ino, const struct pando_storage_map *map)
{
	char pool[CLUSTER_MAP_POOL_MAX];
	uint32_t width = pando_map_width(map);
	int rc = pool_of(f, ino, pool);

	for (uint32_t i = 0; !rc && pool[0] && i < map->groups * width; i++) {
		const struct pando_component *k = pando_map_component(map, i / width, i % width);
		const struct cluster_map_osd *o = cluster_map_osd(f->cluster_map, k->osd_id);

		if (o && !cluster_map_osd_in_pool(o, pool))
			fsck_problem(f, FSCK_OUTSIDE_POOL, false,
				     "file %llu: object %llu (component %u) is on osd %u, "
				     "outside the file's pool %s (osd %u is in %s)",
				     (unsigned long long)ino, (unsigned long long)k->object_id, i,
				     k->osd_id, pool, k->osd_id, o->pool[0] ? o->pool : "no pool");
	}
	return rc;
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
		fsck_problem(f, FSCK_BAD_MAP, false,
			     "file %llu: storage map undecodable (%s): its "
			     "objects cannot be checked",
			     (unsigned long long)ino, strerror(-rc));
		return note_broken(f, ino);
	}
	proto.size = file_size(f, ino);
	rc = add_wants(f, map, &proto);
	if (!rc)
		rc = check_pool(f, ino, map);
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
		int done = f->o->repair ? ns_intent_done(f->s, in->id) : 0;

		fsck_problem(f, FSCK_BAD_MAP, f->o->repair && !done,
			     "intent %llu (file %llu): "
			     "undecodable (%s)%s",
			     (unsigned long long)in->id, (unsigned long long)in->ino, strerror(-rc),
			     fsck_outcome(f, done, "dropped", buf, sizeof(buf)));
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
	return x->intent < y->intent ? -1 : x->intent > y->intent; /* maps first */
}

static bool same_object(const struct want *a, const struct want *b)
{
	return a->osd == b->osd && a->partition == b->partition && a->object == b->object;
}

struct want *fsck_want_find(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
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
			fsck_problem(f, FSCK_SHARED_OBJECT, false,
				     "object %llu on osd %u: named "
				     "by the maps of files %llu and %llu",
				     (unsigned long long)a->object, a->osd,
				     (unsigned long long)a->ino, (unsigned long long)b->ino);
		else
			fsck_problem(f, FSCK_SHARED_OBJECT, false,
				     "object %llu on osd %u: named "
				     "by file %llu's map and by intent %llu, which must not "
				     "remove it",
				     (unsigned long long)a->object, a->osd,
				     (unsigned long long)a->ino, (unsigned long long)b->intent);
	}
}

static void check_unknown_osds(struct fsck *f)
{
	for (size_t i = 0; i < f->nwants; i++) {
		const struct want *w = &f->wants[i];

		if (!w->intent && !cluster_map_osd(f->cluster_map, w->osd))
			fsck_problem(f, FSCK_UNKNOWN_OSD, false,
				     "file %llu: object %llu "
				     "(component %u) on osd %u, which the cluster map "
				     "does not list",
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
	rc = f->o->repair ? ns_ids_raise(f->s, f->max_object + 1) : 0;
	snprintf(done, sizeof(done), "raised to %llu", (unsigned long long)f->max_object + 1);
	fsck_problem(f, FSCK_NEXT_ID, f->o->repair && !rc,
		     "next id %llu is not above object id "
		     "%llu, which is in use%s",
		     (unsigned long long)next, (unsigned long long)f->max_object,
		     fsck_outcome(f, rc, done, buf, sizeof(buf)));
	return 0;
}

int fsck_collect_wants(struct fsck *f)
{
	int rc = note_partition(f, f->cluster_map->partition);

	fsck_phase(f, "maps");
	if (!rc)
		rc = ns_map_list(f->s, map_wants, f);
	fsck_phase(f, "intents");
	if (!rc)
		rc = ns_intent_list(f->s, 0, intent_wants, f);
	if (rc)
		return rc;
	if (f->nwants) /* none collected: f->wants is still NULL */
		qsort(f->wants, f->nwants, sizeof(*f->wants), cmp_want);
	check_shared(f);
	check_unknown_osds(f);
	return check_next_id(f);
}
