/* org.ganesha.nfsd.pando, the store's quota (ns_store.h, ns_quota.c):
 *
 *   quota_set(t bytes, t files) -> (b status, s msg): at most `bytes` of
 *       regular files' sizes and `files` inodes in the export; 0: no
 *       limit, both 0 clear it.  A quota below what is used is taken:
 *       nothing grows until enough is removed.
 *   quota_get() -> (b status, s msg, s json):
 *       {"bytes", "files", "used_bytes", "used_files"} (0: no limit).
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
