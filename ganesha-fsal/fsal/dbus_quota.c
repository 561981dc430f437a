/* org.ganesha.nfsd.pando, the store's quota (ns_store.h, ns_quota.c):
 *
 *   quota_set(t bytes, t files) -> (b status, s msg): at most `bytes` of
 *       regular files' sizes and `files` inodes in the export; 0: no
 *       limit, both 0 clear it.  A quota below what is used is taken:
 *       nothing grows until enough is removed.
 *   quota_get() -> (b status, s msg, s json):
 *       {"bytes", "files", "used_bytes", "used_files"} (0: no limit).
 *   owner_quota_set(s kind, u id, t bytes, t files) -> (b status, s msg):
 *       the same for the user or group (kind "user" or "group") `id`.
 *   owner_quota_get(s kind, u id) -> (b status, s msg, s json):
 *       {"kind", "id", "bytes", "files", "used_bytes", "used_files"}.
 *   owner_quota_list() -> (b status, s msg, s json): {"owners": [those
 *       objects]} for every owner with a quota, groups then users, by id.
 *
 * What the quota does to creates, writes, LAYOUTGET, LAYOUTCOMMIT and df
 * is in ganesha-fsal/README.md, "Quotas". */
#include "dbus_methods.h"

#include <dbus/dbus.h>
#include <jansson.h>
#include <string.h>

static bool next_u64(DBusMessageIter *args, bool first, uint64_t *out)
{
	dbus_uint64_t v;

	if (!args || (!first && !dbus_message_iter_next(args)) ||
	    dbus_message_iter_get_arg_type(args) != DBUS_TYPE_UINT64)
		return false;
	dbus_message_iter_get_basic(args, &v);
	*out = v;
	return true;
}

static bool quota_set(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	struct ns_quota q;
	char why[128];
	int rc;

	if (!next_u64(args, true, &q.bytes) || !next_u64(args, false, &q.files))
		return pando_dbus_reply_text(msg, false, "expected bytes and files (uint64)", NULL);
	if (!exp)
		return pando_dbus_reply_text(msg, false, "no Pando export", NULL);
	rc = ns_quota_set(exp->mds.ns, &q);
	if (rc)
		snprintf(why, sizeof(why), "quota not set: %s", strerror(-rc));
	else if (!q.bytes && !q.files)
		snprintf(why, sizeof(why), "quota cleared");
	else
		snprintf(why, sizeof(why), "quota set: %" PRIu64 " bytes, %" PRIu64 " files",
			 q.bytes, q.files);
	LogEvent(COMPONENT_FSAL, "pando: %s", why);
	return pando_dbus_reply_text(msg, rc == 0, why, NULL);
}

struct gsh_dbus_method pando_quota_set_method = {
	.name = "quota_set",
	.method = quota_set,
	.args = { { .name = "bytes", .type = "t", .direction = "in" },
		  { .name = "files", .type = "t", .direction = "in" },
		  STATUS_REPLY,
		  END_ARG_LIST },
};

static bool quota_get(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	struct ns_statfs st;
	struct ns_quota q;
	int rc;

	if (!exp)
		return pando_dbus_reply(msg, false, "no Pando export", NULL);
	rc = ns_quota_get(exp->mds.ns, &q);
	if (!rc)
		rc = ns_statfs(exp->mds.ns, &st);
	if (rc)
		return pando_dbus_reply(msg, false, strerror(-rc), NULL);
	return pando_dbus_reply(msg, true, "OK",
				json_pack("{sI sI sI sI}", "bytes", (json_int_t)q.bytes, "files",
					  (json_int_t)q.files, "used_bytes", (json_int_t)st.bytes,
					  "used_files", (json_int_t)st.inodes));
}

struct gsh_dbus_method pando_quota_get_method = PANDO_JSON_METHOD("quota_get", quota_get);

/* "user" or "group", then a uint32 id. */
static bool next_owner(DBusMessageIter *args, struct ns_owner *o)
{
	const char *kind;
	dbus_uint32_t id;

	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING)
		return false;
	dbus_message_iter_get_basic(args, &kind);
	if (!strcmp(kind, "user"))
		o->kind = NS_OWNER_USER;
	else if (!strcmp(kind, "group"))
		o->kind = NS_OWNER_GROUP;
	else
		return false;
	if (!dbus_message_iter_next(args) ||
	    dbus_message_iter_get_arg_type(args) != DBUS_TYPE_UINT32)
		return false;
	dbus_message_iter_get_basic(args, &id);
	o->id = id;
	return true;
}

static const char *kind_word(enum ns_owner_kind kind)
{
	return kind == NS_OWNER_USER ? "user" : "group";
}

static bool owner_quota_set(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	struct ns_owner o;
	struct ns_quota q;
	char why[160];
	int rc;

	if (!next_owner(args, &o) || !next_u64(args, false, &q.bytes) ||
	    !next_u64(args, false, &q.files))
		return pando_dbus_reply_text(
			msg, false,
			"expected \"user\" or \"group\", an id (uint32), bytes and files (uint64)",
			NULL);
	if (!exp)
		return pando_dbus_reply_text(msg, false, "no Pando export", NULL);
	rc = ns_owner_quota_set(exp->mds.ns, &o, &q);
	if (rc)
		snprintf(why, sizeof(why), "%s %u: quota not set: %s", kind_word(o.kind), o.id,
			 strerror(-rc));
	else if (!q.bytes && !q.files)
		snprintf(why, sizeof(why), "%s %u: quota cleared", kind_word(o.kind), o.id);
	else
		snprintf(why, sizeof(why), "%s %u: quota set: %" PRIu64 " bytes, %" PRIu64 " files",
			 kind_word(o.kind), o.id, q.bytes, q.files);
	LogEvent(COMPONENT_FSAL, "pando: %s", why);
	return pando_dbus_reply_text(msg, rc == 0, why, NULL);
}

struct gsh_dbus_method pando_owner_quota_set_method = {
	.name = "owner_quota_set",
	.method = owner_quota_set,
	.args = { { .name = "kind", .type = "s", .direction = "in" },
		  { .name = "id", .type = "u", .direction = "in" },
		  { .name = "bytes", .type = "t", .direction = "in" },
		  { .name = "files", .type = "t", .direction = "in" },
		  STATUS_REPLY,
		  END_ARG_LIST },
};

static json_t *owner_json(const struct ns_owner *o, const struct ns_quota *q,
			  const struct ns_quota *used)
{
	return json_pack("{ss sI sI sI sI sI}", "kind", kind_word(o->kind), "id", (json_int_t)o->id,
			 "bytes", (json_int_t)q->bytes, "files", (json_int_t)q->files, "used_bytes",
			 (json_int_t)used->bytes, "used_files", (json_int_t)used->files);
}

static bool owner_quota_get(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	struct ns_quota q, used;
	struct ns_owner o;
	int rc;

	if (!next_owner(args, &o))
		return pando_dbus_reply(msg, false,
					"expected \"user\" or \"group\" and an id (uint32)", NULL);
	if (!exp)
		return pando_dbus_reply(msg, false, "no Pando export", NULL);
	rc = ns_owner_quota_get(exp->mds.ns, &o, &q, &used);
	if (rc)
		return pando_dbus_reply(msg, false, strerror(-rc), NULL);
	return pando_dbus_reply(msg, true, "OK", owner_json(&o, &q, &used));
}

struct gsh_dbus_method pando_owner_quota_get_method = {
	.name = "owner_quota_get",
	.method = owner_quota_get,
	.args = { { .name = "kind", .type = "s", .direction = "in" },
		  { .name = "id", .type = "u", .direction = "in" },
		  STATUS_REPLY,
		  JSON_REPLY,
		  END_ARG_LIST },
};

static int list_one(void *arg, const struct ns_owner *o, const struct ns_quota *q,
		    const struct ns_quota *used)
{
	return json_array_append_new(arg, owner_json(o, q, used)) ? -ENOMEM : 0;
}

static bool owner_quota_list(DBusMessageIter *args, DBusMessage *msg, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	json_t *all;
	int rc;

	if (!exp)
		return pando_dbus_reply(msg, false, "no Pando export", NULL);
	all = json_array();
	rc = all ? ns_owner_quota_list(exp->mds.ns, list_one, all) : -ENOMEM;
	if (rc) {
		json_decref(all);
		return pando_dbus_reply(msg, false, strerror(-rc), NULL);
	}
	return pando_dbus_reply(msg, true, "OK", json_pack("{so}", "owners", all));
}

struct gsh_dbus_method pando_owner_quota_list_method =
	PANDO_JSON_METHOD("owner_quota_list", owner_quota_list);
