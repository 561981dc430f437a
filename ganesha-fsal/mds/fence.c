/* Capability versions of a file's component objects (OSD attribute page
 * 1, number 7): the version every handle in a layout must carry, the
 * fence that revokes all handles given out so far by moving it on, and
 * the revocation of write handles alone, which moves it on but leaves
 * the objects' read floor (osd-target/README.md). */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "objio.h"

static const struct osd_ctl_attr_key cap_version_key = { .page = 1, .number = 7 };

/* The version of component c, or -errno. */
static int component_cap_version(struct pando_mds *mds, const struct pando_storage_map *map,
				 uint32_t c, uint32_t *ver)
{
	const struct pando_component *k = &map->comp[c];
	struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
	struct osd_ctl_attr attr;
	struct osd_ctl_client *cl;
	size_t n = 0;
	int rc;

	cl = osd_conns_get(mds->conns, k->osd_id, &rc);
	if (!cl)
		return rc;
	rc = osd_ctl_getattr(cl, &id, &cap_version_key, 1, &attr, 1, &n);
	osd_conns_result(mds->conns, k->osd_id, rc);
	if (rc)
		return rc;
	if (n != 1 || attr.len != 4)
		return -EIO;
	*ver = get_be32(attr.value);
	return 0;
}

int pando_objects_cap_version(struct pando_mds *mds, const struct pando_storage_map *map,
			      uint32_t *ver)
{
	int rc = -EIO;

	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++) {
		rc = component_cap_version(mds, map, c, ver);
		if (!rc)
			return 0;
	}
	return rc;
}

static bool osd_in(const uint32_t *ids, size_t n, uint32_t osd_id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == osd_id)
			return true;
	return false;
}

/* The components a fence or a revocation of writers did not reach
 * (unreached[]) become stale, so that nothing reads what a client may
 * still write there: only if the file survives losing them and those
 * already stale. */
static int record_unreached(struct pando_mds *mds, uint64_t ino,
			    const struct pando_storage_map *map, bool *unreached, const char *what)
{
	uint32_t ncomp = pando_map_width(map) * map->groups;
	uint32_t stale[OBJIO_MAX_SKIP];
	size_t nstale = 0;
	bool *lost = mds_calloc(ncomp, sizeof(*lost));
	bool survives;
	int rc = pando_stale_osds(mds, ino, stale, &nstale);

	for (uint32_t c = 0; c < ncomp; c++)
		lost[c] = unreached[c] || osd_in(stale, nstale, map->comp[c].osd_id);
	survives = rc == 0 && pando_map_survives(map, lost);
	free(lost);
	if (!survives)
		return rc ? rc : -EHOSTUNREACH;
	for (uint32_t c = 0; c < ncomp && !rc; c++) {
		if (!unreached[c])
			continue;
		mds_log(MDS_LOG_WARN, __func__,
			"pando: inode %" PRIu64 ": the %s did not reach OSD %u: "
			"its component is stale",
			ino, what, map->comp[c].osd_id);
		rc = ns_damage_add(mds->ns, ino, map->comp[c].osd_id, -EHOSTUNREACH, 0, true);
	}
	return rc;
}

/* The highest capability version any component has, at least known. */
static uint32_t top_cap_version(struct pando_mds *mds, const struct pando_storage_map *map,
				uint32_t known)
{
	uint32_t top = known;

	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++) {
		uint32_t v;

		if (component_cap_version(mds, map, c, &v) == 0 && v > top)
			top = v;
	}
	return top;
}

int pando_objects_fence(struct pando_mds *mds, uint64_t ino, const struct pando_storage_map *map,
			uint32_t known, uint32_t *next, uint32_t *failed)
{
	uint32_t ncomp = pando_map_width(map) * map->groups;
	bool *unreached = mds_calloc(ncomp, sizeof(*unreached));
	int rc = 0;

	/* Above every version any component has, so that no handle of any
	 * earlier grant works on any of them afterwards. */
	*next = top_cap_version(mds, map, known) + 1;
	*failed = 0;
	for (uint32_t c = 0; c < ncomp; c++) {
		const struct pando_component *k = &map->comp[c];
		struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
		struct osd_ctl_client *cl = osd_conns_get(mds->conns, k->osd_id, &rc);

		if (cl) {
			rc = osd_ctl_set_cap_version(cl, &id, *next, NULL);
			osd_conns_result(mds->conns, k->osd_id, rc);
		}
		if (rc) {
			unreached[c] = true;
			(*failed)++;
		}
	}
	rc = *failed ? record_unreached(mds, ino, map, unreached, "fence") : 0;
	free(unreached);
	return rc;
}

/* One pass over every component; *top is the highest version one had
 * before, so the caller knows whether next was above them all. */
static void revoke_pass(struct pando_mds *mds, const struct pando_storage_map *map, uint32_t next,
			uint32_t *top, bool *unreached)
{
	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++) {
		const struct pando_component *k = &map->comp[c];
		struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
		struct osd_ctl_client *cl;
		uint32_t old = 0;
		int rc;

		cl = osd_conns_get(mds->conns, k->osd_id, &rc);
		if (!cl) {
			unreached[c] = true;
			continue;
		}
		rc = osd_ctl_revoke_writers(cl, &id, next, &old);
		osd_conns_result(mds->conns, k->osd_id, rc);
		unreached[c] = rc != 0 && rc != -ENOENT; /* removed: nothing to write to */
		if (!rc && old > *top)
			*top = old;
	}
}

int pando_objects_revoke_writers(struct pando_mds *mds, uint64_t ino,
				 const struct pando_storage_map *map, uint32_t known,
				 uint32_t *next)
{
	uint32_t ncomp = pando_map_width(map) * map->groups, top = known;
	bool *unreached = mds_calloc(ncomp, sizeof(*unreached));
	bool any = false;
	int rc = 0;

	/* known + 1 is past every version, unless a component had moved on
	 * alone (a fence that reached only some): then once more past that,
	 * so that all of them end up on one version new handles can carry. */
	*next = known + 1;
	revoke_pass(mds, map, *next, &top, unreached);
	if (top >= *next) {
		*next = top + 1;
		revoke_pass(mds, map, *next, &top, unreached);
	}
	for (uint32_t c = 0; c < ncomp; c++)
		any |= unreached[c];
	if (any)
		rc = record_unreached(mds, ino, map, unreached, "revocation of its writers");
	free(unreached);
	return rc;
}
