/* org.ganesha.nfsd.pando, storage policies (layout/include/pando/policy.h):
 *
 *   layout_set(s path, s policy) -> (b status, s msg): sets a directory's
 *       policy, which what is made in it from now on takes.  policy is
 *       {"scheme": "mirror"|"raid0"|"rs", "copies", "k", "m", "stripe_unit",
 *        "width", "cold_after_s", "cold": {"k", "m"}, "pool"}; "" or
 *       {"scheme": "default"} clears it; {"scheme": "default", "pool"} is
 *       the export's shape in that pool.  A pool no OSD is in is refused.
 *   layout_get(s path) -> (b status, s msg, s json):
 *       {"path", "ino", "type": "directory"|"file"|"other",
 *        "policy": {... as above} or {"scheme": "default", "copies",
 *                   "width", "stripe_unit"} (the export's),
 *        "map": null or {"scheme", "stripe_unit", "k", "m", "mirrors",
 *                        "groups"} (files on objects)}
 *
 * The path is from the export root, as file_map takes it. */
#include "dbus_methods.h"

#include <dbus/dbus.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pando/policy.h"
#include "transcode.h"
#include "view.h"

#define MSG_MAX (PATH_MAX + 128)

/* ---- JSON to a policy --------------------------------------------------- */

/* An optional non-negative integer field no bigger than max; absent: 0. */
static const char *get_uint(json_t *o, const char *key, uint32_t max, uint32_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = 0;
	if (!v)
		return NULL;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)max)
		return key;
	*out = (uint32_t)json_integer_value(v);
	return NULL;
}

static const char *const fields[] = { "scheme",       "copies", "k",    "m",
				      "stripe_unit",  "width",  "cold", "pool",
				      "cold_after_s", NULL };

static bool known_field(const char *key)
{
	for (int i = 0; fields[i]; i++)
		if (strcmp(key, fields[i]) == 0)
			return true;
	return false;
}

/* The scheme and its numbers; NULL or the offending field's name. */
static const char *scheme_from(json_t *o, const char *name, struct pando_policy *p)
{
	uint32_t copies, k, m;
	const char *bad = get_uint(o, "copies", 255, &copies);

	if (!bad)
		bad = get_uint(o, "k", 255, &k);
	if (!bad)
		bad = get_uint(o, "m", 255, &m);
	if (bad)
		return bad;
	if (strcmp(name, "mirror") == 0) {
		p->scheme = PANDO_RAID1;
		p->copies = (uint8_t)(copies ? copies : 2);
	} else if (strcmp(name, "raid0") == 0) {
		p->scheme = PANDO_RAID0;
		p->copies = (uint8_t)copies;
	} else if (strcmp(name, "rs") == 0) {
		p->scheme = PANDO_RS;
		p->copies = (uint8_t)copies;
	} else {
		return "scheme";
	}
	p->k = (uint8_t)k;
	p->m = (uint8_t)m;
	return NULL;
}

static const char *rest_from(json_t *o, struct pando_policy *p)
{
	json_t *cold = json_object_get(o, "cold");
	uint32_t width, ck = 0, cm = 0;
	const char *bad = get_uint(o, "stripe_unit", UINT32_MAX, &p->stripe_unit);

	if (!bad)
		bad = get_uint(o, "width", 255, &width);
	if (!bad)
		bad = get_uint(o, "cold_after_s", UINT32_MAX, &p->cold_after_s);
	if (!bad && cold && !json_is_object(cold))
		bad = "cold";
	if (!bad && cold)
		bad = get_uint(cold, "k", 255, &ck);
	if (!bad && cold)
		bad = get_uint(cold, "m", 255, &cm);
	if (bad)
		return bad;
	p->width = (uint8_t)width;
	p->cold_k = (uint8_t)ck;
	p->cold_m = (uint8_t)cm;
	return NULL;
}

/* An optional pool name; NULL or "pool" when it is not a string that
 * fits (whether it is a name, pando_policy_problem says). */
static const char *pool_from(json_t *o, struct pando_policy *p)
{
	json_t *v = json_object_get(o, "pool");

	if (!v)
		return NULL;
	if (!json_is_string(v) || json_string_length(v) >= sizeof(p->pool) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return "pool";
	strcpy(p->pool, json_string_value(v));
	return NULL;
}

/* The shape: "default" with a pool is the export's, made concrete (and
 * takes no other field); NULL or the offending field's name. */
static const char *shape_from(const struct pando_export *exp, json_t *o, const char *scheme,
			      struct pando_policy *p)
{
	const char *key, *bad = NULL;
	json_t *v;

	if (strcmp(scheme, "default") != 0) {
		bad = scheme_from(o, scheme, p);
		return bad ? bad : rest_from(o, p);
	}
	json_object_foreach(o, key, v) if (!bad && strcmp(key, "scheme") && strcmp(key, "pool"))
		bad = key;
	p->scheme = exp->mds.cfg.mirrors > 1 ? PANDO_RAID1 : PANDO_RAID0;
	p->copies = (uint8_t)(exp->mds.cfg.mirrors > 1 ? exp->mds.cfg.mirrors : 0);
	return bad;
}

/* 0: *p set; 1: clear the policy; -EINVAL with why in msg. */
static int policy_from_json(const struct pando_export *exp, const char *text,
			    struct pando_policy *p, char *msg, size_t cap)
{
	json_error_t jerr;
	json_t *o, *v;
	const char *key, *scheme, *bad = NULL;
	int rc = 0;

	if (!*text)
		return 1;
	o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!o || !json_is_object(o)) {
		snprintf(msg, cap, "policy is not a JSON object (%s)",
			 o ? "other JSON" : jerr.text);
		json_decref(o);
		return -EINVAL;
	}
	json_object_foreach(o, key, v) if (!bad && !known_field(key)) bad = key;
	scheme = json_string_value(json_object_get(o, "scheme"));
	*p = (struct pando_policy){ 0 };
	if (bad)
		snprintf(msg, cap, "unknown field '%s'", bad);
	else if (!scheme)
		snprintf(msg, cap, "policy needs a \"scheme\" (mirror, raid0, rs or default)");
	else if ((bad = pool_from(o, p)))
		snprintf(msg, cap, "bad value for '%s'", bad);
	else if (strcmp(scheme, "default") == 0 && !p->pool[0])
		rc = 1;
	else if ((bad = shape_from(exp, o, scheme, p)))
		snprintf(msg, cap, "bad value for '%s'", bad);
	else if ((bad = pando_policy_problem(p)))
		snprintf(msg, cap, "%s", bad);
	json_decref(o);
	return rc ? rc : bad || !scheme ? -EINVAL : 0;
}

/* ---- layout_set ------------------------------------------------------- */

/* Whether an OSD of the cluster map (not one it dropped) is in pool. */
static bool pool_known(struct pando_export *exp, const char *pool)
{
	const struct pando_view *v = pando_view_get(&exp->mds);

	for (size_t i = 0; i < v->map.nosds; i++)
		if (!v->map.osds[i].removed && !strcmp(v->map.osds[i].pool, pool))
			return true;
	return false;
}

static int set_policy(struct pando_export *exp, uint64_t dir, const struct pando_policy *p)
{
	uint8_t blob[PANDO_POLICY_MAX_LEN];
	size_t len = 0;
	int rc = p ? pando_policy_encode(p, blob, sizeof(blob), &len) : 0;

	return rc ? rc : ns_policy_set(exp->mds.ns, dir, blob, len);
}

static bool layout_set(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	const char *path = NULL, *text = NULL;
	struct pando_policy p;
	char why[MSG_MAX];
	struct ns_attr a;
	bool clear;
	int rc;

	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING)
		return pando_dbus_reply_text(msg, false, "expected a path and a policy", NULL);
	dbus_message_iter_get_basic(args, &path);
	if (!dbus_message_iter_next(args) ||
	    dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING)
		return pando_dbus_reply_text(msg, false, "expected a path and a policy", NULL);
	dbus_message_iter_get_basic(args, &text);
	if (!exp)
		return pando_dbus_reply_text(msg, false, "no Pando export", NULL);
	rc = pando_dbus_resolve(exp, path, &a);
	if (rc) {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(-rc));
		return pando_dbus_reply_text(msg, false, why, NULL);
	}
	if (a.type != NS_DIR) {
		snprintf(why, sizeof(why),
			 "%s: layout set applies to directories; "
			 "a file's policy is fixed at create",
			 path);
		return pando_dbus_reply_text(msg, false, why, NULL);
	}
	rc = policy_from_json(exp, text, &p, why, sizeof(why));
	if (rc < 0)
		return pando_dbus_reply_text(msg, false, why, NULL);
	if (rc == 0 && p.pool[0] && !pool_known(exp, p.pool)) {
		snprintf(why, sizeof(why), "no OSD is in pool '%s' (pando osd ls shows each OSD's)",
			 p.pool);
		return pando_dbus_reply_text(msg, false, why, NULL);
	}
	clear = rc == 1;
	rc = set_policy(exp, a.ino, clear ? NULL : &p);
	if (rc)
		snprintf(why, sizeof(why), "%s: %s", path, strerror(-rc));
	else
		snprintf(why, sizeof(why),
			 "%s: policy %s; what is made in it from now on "
			 "takes that",
			 path, clear ? "cleared" : "set");
	LogEvent(COMPONENT_FSAL, "pando: layout set %s (inode %" PRIu64 ") to '%s': %s", path,
		 a.ino, text, rc ? strerror(-rc) : "done");
	return pando_dbus_reply_text(msg, rc == 0, why, NULL);
}

struct gsh_dbus_method pando_layout_set_method = {
	.name = "layout_set",
	.method = layout_set,
	.args = { PATH_ARG,
		  { .name = "policy", .type = "s", .direction = "in" },
		  STATUS_REPLY,
		  END_ARG_LIST },
};

/* ---- layout_get ------------------------------------------------------- */

static json_t *policy_json(const struct pando_policy *p)
{
	static const char *const names[] = { "raid0", "mirror", "rs" };
	json_t *j = json_pack("{ss sI}", "scheme", names[p->scheme], "stripe_unit",
			      (json_int_t)p->stripe_unit);

	if (p->scheme == PANDO_RAID1)
		json_object_set_new(j, "copies", json_integer(p->copies));
	if (p->scheme == PANDO_RS) {
		json_object_set_new(j, "k", json_integer(p->k));
		json_object_set_new(j, "m", json_integer(p->m));
	} else {
		json_object_set_new(j, "width", json_integer(p->width));
	}
	if (p->cold_after_s) {
		json_object_set_new(j, "cold_after_s", json_integer(p->cold_after_s));
		json_object_set_new(j, "cold",
				    json_pack("{sI sI}", "k", (json_int_t)p->cold_k, "m",
					      (json_int_t)p->cold_m));
	}
	if (p->pool[0])
		json_object_set_new(j, "pool", json_string(p->pool));
	return j;
}

static json_t *defaults_json(const struct pando_export *exp)
{
	return json_pack("{ss sI sI sI}", "scheme", "default", "copies",
			 (json_int_t)exp->mds.cfg.mirrors, "width",
			 (json_int_t)exp->mds.cfg.stripe_width, "stripe_unit",
			 (json_int_t)exp->mds.cfg.stripe_unit);
}

/* The inode's policy as JSON; an undecodable blob is an error. */
static int inode_policy_json(struct pando_export *exp, uint64_t ino, json_t **out)
{
	struct pando_policy p;
	void *blob = NULL;
	size_t len = 0;
	int rc = ns_policy_get(exp->mds.ns, ino, &blob, &len);

	if (rc == -ENOENT) {
		*out = defaults_json(exp);
		return 0;
	}
	if (!rc)
		rc = pando_policy_decode(blob, len, &p);
	free(blob);
	if (!rc)
		*out = policy_json(&p);
	return rc;
}

static json_t *map_json(const struct pando_storage_map *map)
{
	static const char *const names[] = { "stripe", "mirror", "rs" };
	const struct pando_map_shape *s = &map->shape;

	return json_pack("{ss sI sI sI sI sI sI}", "scheme",
			 s->raid <= PANDO_RS ? names[s->raid] : "unknown", "stripe_unit",
			 (json_int_t)s->stripe_unit, "k", (json_int_t)s->data, "m",
			 (json_int_t)s->parity, "mirrors", (json_int_t)s->copies, "width",
			 (json_int_t)pando_map_width(map), "groups", (json_int_t)map->groups);
}

/* A file's current map as JSON, null while it is inline. */
static int inode_map_json(struct pando_export *exp, const struct ns_attr *a, json_t **out)
{
	struct pando_storage_map *map = NULL;
	int rc = a->type == NS_REG && a->objects ? pando_map_load(&exp->mds, a->ino, &map) : 0;

	*out = map ? map_json(map) : json_null();
	pando_map_free(map);
	return rc == -ENODATA ? 0 : rc;
}

static bool layout_get(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp;
	json_t *policy = NULL, *map = NULL;
	const char *path = NULL, *refused;
	char why[MSG_MAX];
	struct ns_attr a;
	int rc;

	refused = pando_dbus_path_arg(args, &path, &exp);
	if (refused)
		return pando_dbus_reply(msg, false, refused, NULL);
	rc = pando_dbus_resolve(exp, path, &a);
	if (!rc)
		rc = inode_policy_json(exp, a.ino, &policy);
	if (!rc)
		rc = inode_map_json(exp, &a, &map);
	if (rc) {
		snprintf(why, sizeof(why), "%s: %s", path,
			 rc == -EBADMSG || rc == -ENOTSUP ? "undecodable policy" : strerror(-rc));
		json_decref(policy);
		return pando_dbus_reply(msg, false, why, NULL);
	}
	return pando_dbus_reply(msg, true, "OK",
				json_pack("{ss sI ss so so}", "path", path, "ino",
					  (json_int_t)a.ino, "type",
					  a.type == NS_DIR   ? "directory"
					  : a.type == NS_REG ? "file"
							     : "other",
					  "policy", policy, "map", map));
}

struct gsh_dbus_method pando_layout_get_method = PANDO_PATH_JSON_METHOD("layout_get", layout_get);

/* ---- transcoding ----------------------------------------------------------- */

static bool transcode_status(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	char *text;
	json_t *j;

	if (!exp)
		return pando_dbus_reply(msg, false, "no Pando export", NULL);
	if (!exp->mds.transcode)
		return pando_dbus_reply(msg, true, "transcoder off (Transcode_Interval 0)",
					json_pack("{sb}", "running", false));
	text = pando_transcode_status(exp->mds.transcode);
	j = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (!j)
		return pando_dbus_reply(msg, false, "out of memory", NULL);
	json_object_set_new(j, "running", json_true());
	return pando_dbus_reply(msg, true, "OK", j);
}

struct gsh_dbus_method pando_transcode_status_method =
	PANDO_JSON_METHOD("transcode_status", transcode_status);

/* Transcodes the file at path now, whatever its age (it must have a cold
 * rule): for admins, and for the tests and the benchmark. */
static bool transcode_path(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp;
	const char *path = NULL, *refused;
	char why[MSG_MAX];
	uint64_t copied = 0;
	void *buf = NULL;
	struct ns_attr a;
	int rc;

	refused = pando_dbus_path_arg(args, &path, &exp);
	if (refused)
		return pando_dbus_reply(msg, false, refused, NULL);
	rc = pando_dbus_resolve(exp, path, &a);
	if (!rc) {
		buf = gsh_malloc(4u << 20);
		rc = pando_transcode_file(&exp->mds, a.ino, buf, 4u << 20, &copied);
		gsh_free(buf);
	}
	snprintf(why, sizeof(why), "%s: %s", path, rc ? strerror(-rc) : "OK");
	return pando_dbus_reply(msg, rc == 0, why, json_pack("{sI}", "bytes", (json_int_t)copied));
}

struct gsh_dbus_method pando_transcode_file_method =
	PANDO_PATH_JSON_METHOD("transcode_file", transcode_path);
