/* Capability versions of a file's component objects (OSD attribute page
 * 1, number 7): the version every handle in a layout must carry, and the
 * fence that revokes all handles given out so far by moving it on. */
#include "pando_fsal.h"

#include "byteorder.h"
#include "objio.h"

static const struct osd_ctl_attr_key cap_version_key = { .page = 1, .number = 7 };

/* The version of component c, or -errno. */
static int component_cap_version(struct pando_export *exp, const struct pando_storage_map *map,
				 uint32_t c, uint32_t *ver)
{
	const struct pando_component *k = &map->comp[c];
	struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
	struct osd_ctl_attr attr;
	struct osd_ctl_client *cl;
	size_t n = 0;
	int rc;

	cl = osd_conns_get(exp->conns, k->osd_id, &rc);
	if (!cl)
		return rc;
	rc = osd_ctl_getattr(cl, &id, &cap_version_key, 1, &attr, 1, &n);
	osd_conns_result(exp->conns, k->osd_id, rc);
	if (rc)
		return rc;
	if (n != 1 || attr.len != 4)
		return -EIO;
	*ver = get_be32(attr.value);
	return 0;
}

int pando_objects_cap_version(struct pando_export *exp, const struct pando_storage_map *map,
			      uint32_t *ver)
{
	int rc = -EIO;

	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++) {
		rc = component_cap_version(exp, map, c, ver);
		if (!rc)
			return 0;
	}
	return rc;
}

int pando_objects_fence(struct pando_export *exp, const struct pando_storage_map *map,
			uint32_t known, uint32_t *next, uint32_t *failed)
{
	uint32_t ncomp = pando_map_width(map) * map->groups, top = known;

	/* Above every version any component has, so that no handle of any
	 * earlier grant works on any of them afterwards. */
	for (uint32_t c = 0; c < ncomp; c++) {
		uint32_t v;

		if (component_cap_version(exp, map, c, &v) == 0 && v > top)
			top = v;
	}
	*next = top + 1;
	*failed = 0;
	for (uint32_t c = 0; c < ncomp; c++) {
		const struct pando_component *k = &map->comp[c];
		struct osd_ctl_obj_id id = { map->partition_id, k->object_id };
		int rc;
		struct osd_ctl_client *cl = osd_conns_get(exp->conns, k->osd_id, &rc);

		if (cl) {
			rc = osd_ctl_set_cap_version(cl, &id, *next, NULL);
			osd_conns_result(exp->conns, k->osd_id, rc);
		}
		if (rc)
			(*failed)++;
	}
	return *failed == ncomp ? -EHOSTUNREACH : 0;
}
