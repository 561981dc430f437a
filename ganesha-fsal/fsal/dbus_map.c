/* org.ganesha.nfsd.pando, the cluster map and storage maps:
 *
 *   map_status() -> (b status, s msg, s json): the map this manager applied
 *       {"epoch", "source": "cluster.conf"|"etcd"|"cache", "etcd": "...",
 *        "osds": [{"id", "ctl", "nfs", "advertise", "listed", "up", "in",
 *                  "weight", "takes", "reachable"}]}
 *   file_map(s path) -> (b status, s msg, s json): where a file's bytes are
 *       {"path", "ino", "size", "scheme": "stripe"|"mirror"|"rs",
 *        "stripe_unit", "mirrors", "inline": bool,
 *        "groups": [{"components": [{"osd", "object",
 *                                    "state": "ok"|"stale"|"down"|"out"}]}]}
 *       (an inline file: "inline": true, no groups).
 *
 * JSON rather than dbus structs: the `pando` CLI prints it as it comes. */
#include "dbus_methods.h"

#include <dbus/dbus.h>
#include <jansson.h>
#include <string.h>

#include "objio.h"
#include "view.h"

static json_t *osd_json(struct pando_export *exp, const struct cluster_map_osd *o)
{
	return json_pack("{sI ss ss ss sb sb sb sI sb sb}", "id", (json_int_t)o->id, "ctl", o->ctl,
			 "nfs", o->nfs, "advertise", o->advertise, "removed", o->removed, "up",
			 o->up, "in", o->in, "weight", (json_int_t)o->weight, "takes",
			 cluster_map_osd_takes(o), "reachable",
			 osd_conns_reachable(exp->mds.conns, o->id));
}

static bool map_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	const struct pando_view *v;
	json_t *j, *osds;

	if (!exp)
		return pando_dbus_reply(reply, false, "no Pando export", NULL);
	v = pando_view_get(&exp->mds);
	osds = json_array();
	for (size_t i = 0; i < v->map.nosds; i++)
		json_array_append_new(osds, osd_json(exp, &v->map.osds[i]));
	j = json_pack("{sI ss ss so}", "epoch", (json_int_t)v->map.epoch, "source", v->source,
		      "etcd", exp->mds.cfg.etcd, "osds", osds);
	return pando_dbus_reply(reply, true, "OK", j);
}

struct gsh_dbus_method pando_map_status_method = PANDO_JSON_METHOD("map_status", map_status);

static const char *scheme_name(uint8_t raid)
{
	switch (raid) {
	case PANDO_RAID0:
		return "stripe";
	case PANDO_RAID1:
		return "mirror";
	case PANDO_RS:
		return "rs";
	default:
		return "unknown";
	}
}

/* What a component is worth now: stale (missed writes) before out (the
 * map took its OSD out) before down (the map or this manager says so). */
static const char *comp_state(struct pando_export *exp, const struct pando_view *v, uint32_t osd,
			      const uint32_t *stale, size_t nstale)
{
	const struct cluster_map_osd *o = pando_view_osd(v, osd);

	for (size_t i = 0; i < nstale; i++)
		if (stale[i] == osd)
			return "stale";
	if (!o || o->removed || !o->in)
		return "out";
	if (!o->up || !osd_conns_reachable(exp->mds.conns, osd))
		return "down";
	return "ok";
}

static json_t *groups_json(struct pando_export *exp, uint64_t ino,
			   const struct pando_storage_map *map)
{
	const struct pando_view *v = pando_view_get(&exp->mds);
	uint32_t stale[OBJIO_MAX_SKIP];
	size_t nstale = 0;
	json_t *groups = json_array();

	if (pando_stale_osds(&exp->mds, ino, stale, &nstale) != 0)
		nstale = 0;
	for (uint32_t g = 0; g < map->groups; g++) {
		json_t *comps = json_array();

		for (uint32_t c = 0; c < pando_map_width(map); c++) {
			const struct pando_component *k = pando_map_component(map, g, c);

			json_array_append_new(
				comps, json_pack("{sI sI ss}", "osd", (json_int_t)k->osd_id,
						 "object", (json_int_t)k->object_id, "state",
						 comp_state(exp, v, k->osd_id, stale, nstale)));
		}
		json_array_append_new(groups, json_pack("{so}", "components", comps));
	}
	return groups;
}

static json_t *file_json(struct pando_export *exp, const char *path, const struct ns_attr *a,
			 const struct pando_storage_map *map)
{
	json_t *j = json_pack("{ss sI sI sb}", "path", path, "ino", (json_int_t)a->ino, "size",
			      (json_int_t)a->size, "inline", map == NULL);

	if (map) {
		json_object_set_new(j, "scheme", json_string(scheme_name(map->shape.raid)));
		json_object_set_new(j, "stripe_unit", json_integer(map->shape.stripe_unit));
		json_object_set_new(j, "mirrors", json_integer(map->shape.copies));
		json_object_set_new(j, "groups", groups_json(exp, a->ino, map));
	} else {
		json_object_set_new(j, "groups", json_array());
	}
	return j;
}

static bool file_map(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_storage_map *map = NULL;
	const char *path = NULL, *refused;
	struct pando_export *exp;
	struct ns_attr a;
	char msg[PATH_MAX + 64];
	json_t *j;
	int rc;

	refused = pando_dbus_path_arg(args, &path, &exp);
	if (refused)
		return pando_dbus_reply(reply, false, refused, NULL);
	rc = pando_dbus_resolve(exp, path, &a);
	if (!rc && a.type != NS_REG)
		rc = -EISDIR;
	if (!rc)
		rc = pando_map_load(&exp->mds, a.ino, &map);
	if (rc == -ENODATA) {
		map = NULL;
		rc = 0;
	}
	if (rc) {
		snprintf(msg, sizeof(msg), "%s: %s", path,
			 rc == -EISDIR ? "not a regular file" : strerror(-rc));
		return pando_dbus_reply(reply, false, msg, NULL);
	}
	j = file_json(exp, path, &a, map);
	pando_map_free(map);
	return pando_dbus_reply(reply, true, "OK", j);
}

struct gsh_dbus_method pando_file_map_method = PANDO_PATH_JSON_METHOD("file_map", file_map);
