/* org.ganesha.nfsd.pando, junctions: the volumes other manager groups
 * serve, as directories in this export's root that refer NFSv4 clients
 * there (referral.c, ns_junction.c, mds/junction.h):
 *
 *   junction_add(s volume, s path, as servers) -> (b status, s msg): makes
 *       /<volume>, referring to <path> on the servers (1..4, the group's
 *       service address first).
 *   junction_remove(s volume) -> (b status, s msg): removes the junction
 *       /<volume> (and only a junction).
 *   junction_list() -> (b status, s msg, s json): {"junctions": [{"volume",
 *       "path", "servers"}]}, by inode (the order they were made in).
 *
 * Each change also drops the root's cached entries, so the next LOOKUP
 * sees it. */
#include "dbus_methods.h"

#include <dbus/dbus.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fsal_up.h"
#include "junction.h"

static bool next_string(DBusMessageIter *args, bool first, const char **out)
{
	if (!args || (!first && !dbus_message_iter_next(args)) ||
	    dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING)
		return false;
	dbus_message_iter_get_basic(args, out);
	return true;
}

/* Copies src into dst of size cap; false when it does not fit. */
static bool copy_field(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

/* The arguments of junction_add: a junction, or the refusal's words. */
static const char *junction_args(DBusMessageIter *args, struct pando_junction *j)
{
	const char *volume, *path, *server;
	DBusMessageIter arr;

	memset(j, 0, sizeof(*j));
	if (!next_string(args, true, &volume) || !next_string(args, false, &path) ||
	    !dbus_message_iter_next(args) ||
	    dbus_message_iter_get_arg_type(args) != DBUS_TYPE_ARRAY ||
	    dbus_message_iter_get_element_type(args) != DBUS_TYPE_STRING)
		return "expected a volume, a path and servers (strings)";
	if (!copy_field(j->volume, sizeof(j->volume), volume) ||
	    !copy_field(j->path, sizeof(j->path), path))
		return pando_junction_problem(j) ? pando_junction_problem(j) : "a field too long";
	dbus_message_iter_recurse(args, &arr);
	for (; dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRING;
	     dbus_message_iter_next(&arr)) {
		if (j->servers == PANDO_JUNCTION_SERVERS)
			return "a junction names 1 to 4 servers";
		dbus_message_iter_get_basic(&arr, &server);
		if (!copy_field(j->server[j->servers++], sizeof(j->server[0]), server))
			return "a server is a host name or an address, 1 to 253 of A-Z a-z 0-9 . : -";
	}
	return pando_junction_problem(j);
}

/* MDCACHE's entries of the root, which a LOOKUP would otherwise answer
 * from until they expire; its up-call makes its own request context. */
static void root_changed(struct pando_export *exp)
{
	uint8_t key[PANDO_FH_LEN];
	struct gsh_buffdesc handle = { .addr = key, .len = PANDO_FH_LEN };
	struct ns_attr root;

	if (ns_getattr(exp->mds.ns, NS_ROOT_INO, &root))
		return;
	pando_fh_encode(exp, NS_ROOT_INO, root.gen, NS_DIR, key);
	exp->export.up_ops->invalidate(exp->export.up_ops, &handle,
				       FSAL_UP_INVALIDATE_ATTRS | FSAL_UP_INVALIDATE_CONTENT);
}

static bool junction_add(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	struct ns_new in = { .mode = 0755 };
	struct pando_junction j;
	char blob[PANDO_JUNCTION_BLOB_MAX], why[640];
	const char *problem = junction_args(args, &j);
	size_t len;
	int rc;

	if (problem)
		return pando_dbus_reply_text(msg, false, problem, NULL);
	if (!exp)
		return pando_dbus_reply_text(msg, false, "no Pando export", NULL);
	rc = pando_junction_encode(&j, blob, sizeof(blob), &len);
	if (!rc)
		rc = ns_mkjunction(exp->mds.ns, j.volume, &in, blob, len, NULL);
	if (rc) {
		snprintf(why, sizeof(why), "junction /%s not made: %s", j.volume, strerror(-rc));
		return pando_dbus_reply_text(msg, false, why, NULL);
	}
	root_changed(exp);
	snprintf(why, sizeof(why), "junction /%s made: %s on %s%s", j.volume, j.path, j.server[0],
		 j.servers > 1 ? " and others" : "");
	LogEvent(COMPONENT_FSAL, "pando: %s", why);
	return pando_dbus_reply_text(msg, true, why, NULL);
}

struct gsh_dbus_method pando_junction_add_method = {
	.name = "junction_add",
	.method = junction_add,
	.args = { { .name = "volume", .type = "s", .direction = "in" },
		  { .name = "path", .type = "s", .direction = "in" },
		  { .name = "servers", .type = "as", .direction = "in" },
		  STATUS_REPLY,
		  END_ARG_LIST },
};

static int remove_junction(struct pando_export *exp, const char *volume)
{
	struct ns_attr a;
	int rc = ns_lookup(exp->mds.ns, NS_ROOT_INO, volume, &a);

	if (rc)
		return rc;
	if (!a.junction)
		return -ENOTDIR;
	return ns_rmdir(exp->mds.ns, NS_ROOT_INO, volume);
}

static bool junction_remove(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	const char *volume;
	char why[160];
	int rc;

	if (!next_string(args, true, &volume))
		return pando_dbus_reply_text(msg, false, "expected a volume (string)", NULL);
	if (!exp)
		return pando_dbus_reply_text(msg, false, "no Pando export", NULL);
	rc = remove_junction(exp, volume);
	if (rc == -ENOTDIR)
		snprintf(why, sizeof(why), "/%.64s is not a junction", volume);
	else if (rc)
		snprintf(why, sizeof(why), "junction /%.64s not removed: %s", volume,
			 strerror(-rc));
	else
		snprintf(why, sizeof(why), "junction /%.64s removed", volume);
	if (!rc) {
		root_changed(exp);
		LogEvent(COMPONENT_FSAL, "pando: %s", why);
	}
	return pando_dbus_reply_text(msg, rc == 0, why, NULL);
}

struct gsh_dbus_method pando_junction_remove_method = {
	.name = "junction_remove",
	.method = junction_remove,
	.args = { { .name = "volume", .type = "s", .direction = "in" }, STATUS_REPLY, END_ARG_LIST },
};

struct listing {
	struct pando_export *exp;
	json_t *all;
	int rc;
};

static json_t *junction_json(const struct pando_junction *j)
{
	json_t *servers = json_array();

	for (uint32_t i = 0; servers && i < j->servers; i++)
		json_array_append_new(servers, json_string(j->server[i]));
	return json_pack("{ss ss so}", "volume", j->volume, "path", j->path, "servers", servers);
}

static int list_one(void *arg, uint64_t ino)
{
	struct listing *l = arg;
	struct pando_junction j;
	void *blob = NULL;
	size_t len;

	l->rc = ns_junction_get(l->exp->mds.ns, ino, &blob, &len);
	if (!l->rc)
		l->rc = pando_junction_decode(blob, len, &j);
	free(blob);
	if (!l->rc && json_array_append_new(l->all, junction_json(&j)))
		l->rc = -ENOMEM;
	return l->rc;
}

static bool junction_list(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct listing l = { .exp = pando_dbus_first_export() };
	int rc;

	if (!l.exp)
		return pando_dbus_reply(msg, false, "no Pando export", NULL);
	l.all = json_array();
	rc = l.all ? ns_junction_list(l.exp->mds.ns, list_one, &l) : -ENOMEM;
	if (!rc)
		rc = l.rc;
	if (rc) {
		json_decref(l.all);
		return pando_dbus_reply(msg, false, strerror(-rc), NULL);
	}
	return pando_dbus_reply(msg, true, "OK", json_pack("{so}", "junctions", l.all));
}

struct gsh_dbus_method pando_junction_list_method =
	PANDO_JSON_METHOD("junction_list", junction_list);
