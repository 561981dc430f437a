/* The journal's copies on OSDs that are out, put back (journal.h,
 * pando_journal_rebuild): a segment or a snapshot is read back for as long
 * as a member may need it, up to an hour after it is written, so a copy
 * lost meanwhile must not leave it one OSD from being lost. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_client.h"
#include "journal.h"
#include "journal_segment.h"
#include "mds.h"
#include "objio.h"
#include "pando/placement.h"
#include "view.h"

#define COPY_CHUNK (1u << 20)

/* Whether k's OSD is out (or dropped from the map): its copy is rebuilt. */
static bool gone(const struct pando_view *v, const struct pando_component *k)
{
	const struct cluster_map_osd *o = pando_view_osd(v, k->osd_id);

	return !o || !o->in || o->removed;
}

bool pando_journal_map_degraded(struct pando_mds *mds, const struct pando_storage_map *map)
{
	const struct pando_view *v = pando_view_get(mds);

	for (int c = 0; c < JOURNAL_COPIES; c++)
		if (gone(v, &map->comp[c]))
			return true;
	return false;
}

/* A copy of map that is not gone and answers with its length. */
static int source_of(struct objio *io, const struct pando_view *v,
		     const struct pando_storage_map *map, int *src, uint64_t *len)
{
	int rc = -EIO;

	for (int c = 0; c < JOURNAL_COPIES; c++) {
		if (gone(v, &map->comp[c]))
			continue;
		rc = objio_component_length(io, map->partition_id, &map->comp[c], len);
		if (!rc) {
			*src = c;
			return 0;
		}
	}
	return rc;
}

/* Copy c of map, which is gone, made anew from a healthy copy on an OSD
 * that takes new components, durable, and named in map. */
static int rebuild_copy(struct objio *io, const struct pando_view *v, struct pando_storage_map *map,
			uint32_t c, uint64_t seed, void *buf)
{
	struct pando_component dst = map->comp[c];
	uint64_t len = 0, copied = 0;
	int src = -1;
	int rc = v->placement ? source_of(io, v, map, &src, &len) : -ENOSPC;

	if (!rc)
		rc = pando_place_replacement(v->placement, map, 0, c, seed, &dst.osd_id);
	if (!rc)
		rc = objio_component_create(io, map->partition_id, &dst, c, OBJIO_CAP_VERSION_NEW);
	if (!rc)
		rc = objio_component_copy(io, map->partition_id, &map->comp[src], &dst, 0, len, buf,
					  COPY_CHUNK, &copied);
	if (!rc && copied != len)
		rc = -EAGAIN; /* the source is shorter than it said: trimmed meanwhile? */
	if (!rc)
		rc = objio_component_settle(io, map->partition_id, &dst, len);
	if (rc && dst.osd_id != map->comp[c].osd_id)
		objio_component_remove(io, map->partition_id, &dst);
	if (!rc)
		rc = pando_map_replace_component(map, 0, c, dst.osd_id, dst.object_id);
	return rc;
}

void pando_journal_copies_forget(struct pando_mds *mds, uint64_t owner,
				 const struct pando_storage_map *old,
				 const struct pando_storage_map *now)
{
	struct objio io = { .conns = mds->conns, .owner = owner };

	for (int c = 0; c < JOURNAL_COPIES; c++)
		if (now->comp[c].osd_id != old->comp[c].osd_id)
			objio_component_remove(&io, now->partition_id, &now->comp[c]);
}

int pando_journal_copies_rebuild(struct pando_mds *mds, uint64_t owner,
				 const struct pando_storage_map *old, uint64_t seed,
				 struct pando_storage_map **out, size_t *rebuilt)
{
	const struct pando_view *v = pando_view_get(mds);
	struct objio io = { .conns = mds->conns, .owner = owner };
	void *buf = NULL;
	int rc = pando_map_copy(old, out);

	*rebuilt = 0;
	for (uint32_t c = 0; !rc && c < JOURNAL_COPIES; c++) {
		if (!gone(v, &(*out)->comp[c]))
			continue;
		if (!buf)
			buf = mds_malloc(COPY_CHUNK);
		rc = rebuild_copy(&io, v, *out, c, seed, buf);
		*rebuilt += !rc;
	}
	free(buf);
	if (rc && *out) {
		pando_journal_copies_forget(mds, owner, old, *out);
		pando_map_free(*out);
		*out = NULL;
		*rebuilt = 0;
	}
	return rc;
}

int pando_journal_relist(struct pando_mds *mds, struct etcd_client *c, const char *key, int64_t rev,
			 uint64_t owner, const struct pando_storage_map *old, uint64_t seed,
			 pando_journal_format_fn format, const void *listing, size_t *rebuilt)
{
	struct pando_storage_map *now = NULL;
	char *value = NULL;
	int rc = pando_journal_copies_rebuild(mds, owner, old, seed, &now, rebuilt);

	if (!rc && !(value = format(listing, now)))
		rc = -EINVAL;
	if (!rc)
		rc = etcd_put_if(c, key, value, strlen(value), rev);
	if (rc && now)
		pando_journal_copies_forget(mds, owner, old, now);
	if (!rc)
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: %s: %zu cop%s rebuilt, now on OSDs %u, %u, %u", key, *rebuilt,
			*rebuilt == 1 ? "y" : "ies", now->comp[0].osd_id, now->comp[1].osd_id,
			now->comp[2].osd_id);
	if (rc)
		*rebuilt = 0;
	free(value);
	pando_map_free(now);
	return rc;
}

static char *segment_format(const void *listing, const struct pando_storage_map *map)
{
	struct journal_segment s = *(const struct journal_segment *)listing;

	s.map = (struct pando_storage_map *)map;
	return journal_segment_format(&s);
}

/* Segment key's copies rebuilt, as read now. */
static int rebuild_segment(struct pando_mds *mds, struct etcd_client *c, const char *key,
			   size_t *rebuilt)
{
	struct journal_segment s = { 0 };
	char *value = NULL;
	size_t len = 0;
	int64_t rev = 0;
	int rc = etcd_get(c, key, &value, &len, &rev);

	*rebuilt = 0;
	if (!rc)
		rc = journal_segment_parse(value, len, &s);
	if (!rc)
		rc = pando_journal_relist(mds, c, key, rev, JOURNAL_OBJECT_BIT | s.index, s.map,
					  s.index, segment_format, &s, rebuilt);
	free(value);
	pando_map_free(s.map);
	return rc == -ENOENT ? -EEXIST : rc;
}

int pando_journal_rebuild(struct pando_mds *mds, struct etcd_client *c, const char *group,
			  size_t *rebuilt)
{
	struct journal_segment *segs = NULL;
	char prefix[256], key[sizeof(prefix) + 20];
	size_t n = 0, one;
	int rc = journal_segment_prefix(mds->cfg.etcd_prefix, group, prefix, sizeof(prefix));

	*rebuilt = 0;
	if (!rc)
		rc = journal_segments_list(c, prefix, &segs, &n);
	/* The last is the writer's: it goes on in a new one (write_out). */
	for (size_t i = 0; i + 1 < n; i++) {
		int one_rc;

		if (!pando_journal_map_degraded(mds, segs[i].map))
			continue;
		snprintf(key, sizeof(key), "%s%016" PRIx64, prefix, segs[i].index);
		one_rc = rebuild_segment(mds, c, key, &one);
		*rebuilt += one;
		if (one_rc != -EEXIST && !rc) /* -EEXIST: trimmed or listed anew meanwhile */
			rc = one_rc;
	}
	journal_segments_free(segs, n);
	return rc;
}
