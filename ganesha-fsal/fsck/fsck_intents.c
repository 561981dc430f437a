/* The object check, step 4: pending removal intents.  They are work in
 * progress, not problems: each is a detail line, and the repair finishes
 * it, removing its objects (none a map also names: the intent must not
 * take a live file's data) and then the intent, once every OSD answered. */
#include "fsck_internal.h"

#include <errno.h>
#include <string.h>

#include "pando/storage_map.h"

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
		const struct want *w;
		int rc;

		w = fsck_want_find(f, k->osd_id, map->partition_id, k->object_id);
		if (w && !w->intent) {
			shared++;
			continue;
		}
		rc = fsck_osd_down(f, k->osd_id)
			     ? -EHOSTDOWN
			     : fsck_remove_object(f, k->osd_id, map->partition_id, k->object_id);
		*removed += !rc;
		if (rc && !first)
			first = rc;
	}
	if (first)
		return first;
	f->res->t[FSCK_SHARED_OBJECT].repaired += shared;
	return ns_intent_done(f->s, in->id);
}

static int visit_intent(void *arg, const struct ns_intent *in)
{
	struct fsck *f = arg;
	struct pando_storage_map *map;
	uint64_t removed = 0;
	int rc = pando_map_decode(in->blob, in->len, &map);

	if (rc)
		return rc == -ENOMEM ? rc : 0; /* intent_wants reported it */
	f->res->intents++;
	fsck_detail(f, "intent %llu (file %llu): %u objects owed removal",
		    (unsigned long long)in->id, (unsigned long long)in->ino,
		    map->groups * pando_map_width(map));
	if (f->o->repair) {
		rc = finish_intent(f, in, map, &removed);
		f->res->intents_done += !rc;
		if (rc)
			fsck_detail(f, "intent %llu: kept (%s), %llu objects removed",
				    (unsigned long long)in->id, strerror(-rc),
				    (unsigned long long)removed);
		else
			fsck_detail(f, "intent %llu: finished, %llu objects removed",
				    (unsigned long long)in->id, (unsigned long long)removed);
	}
	pando_map_free(map);
	return rc == -EIO ? rc : 0;
}

int fsck_intents(struct fsck *f)
{
	fsck_phase(f, "intents");
	return ns_intent_list(f->s, 0, visit_intent, f);
}
