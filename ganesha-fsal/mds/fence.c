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

/* A call on one component's object, with what it sets or returns. */
struct cap_call {
	struct osd_ctl_obj_id id;
	uint32_t ver; /* the version set, or the one read */
	uint32_t old; /* the version a revocation found */
	struct osd_ctl_attr attr;
	size_t n;
};

static int getattr_fn(struct osd_ctl_client *c, void *arg)
{
	struct cap_call *a = arg;

	return osd_ctl_getattr(c, &a->id, &cap_version_key, 1, &a->attr, 1, &a->n);
}

static int set_fn(struct osd_ctl_client *c, void *arg)
{
	struct cap_call *a = arg;

	return osd_ctl_set_cap_version(c, &a->id, a->ver, NULL);
}

static int revoke_fn(struct osd_ctl_client *c, void *arg)
{
	struct cap_call *a = arg;

	return osd_ctl_revoke_writers(c, &a->id, a->ver, &a->old);
}

/* One try on component c's OSD: a fence or revocation that did not reach
 * it records it stale or fails, and the grants engine tries again at its
 * next tick, so a retry here would only hold the caller longer. */
static int component_call(struct pando_mds *mds, const struct pando_storage_map *map, uint32_t c,
			  osd_conns_fn fn, struct cap_call *a)
{
	a->id = (struct osd_ctl_obj_id){ map->partition_id, map->comp[c].object_id };
	return osd_conns_call_tries(mds->conns, map->comp[c].osd_id, 1, fn, a);
}

/* The version of component c, or -errno. */
static int component_cap_version(struct pando_mds *mds, const struct pando_storage_map *map,
				 uint32_t c, uint32_t *ver)
{
	struct cap_call a = { 0 };
	int rc = component_call(mds, map, c, getattr_fn, &a);

	if (rc)
		return rc;
	if (a.n != 1 || a.attr.len != 4)
		return -EIO;
	*ver = get_be32(a.attr.value);
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
	int rc;

	/* Above every version any component has, so that no handle of any
	 * earlier grant works on any of them afterwards. */
	*next = top_cap_version(mds, map, known) + 1;
	*failed = 0;
	for (uint32_t c = 0; c < ncomp; c++) {
		struct cap_call a = { .ver = *next };

		if (component_call(mds, map, c, set_fn, &a) != 0) {
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
		struct cap_call a = { .ver = next };
		int rc = component_call(mds, map, c, revoke_fn, &a);

		unreached[c] = rc != 0 && rc != -ENOENT; /* removed: nothing to write to */
		if (!rc && a.old > *top)
			*top = a.old;
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
