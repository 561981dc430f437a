/* org.ganesha.nfsd.pando, rebuild and scrub as this manager runs them:
 *
 *   rebuild_status() -> (b status, s msg, s json): the progress it puts
 *       in etcd (mgr/README.md, "Recovery and scrub"): state, jobs_done,
 *       jobs_active, files and bytes total and done, rate_bps, eta_s, ...
 *
 *   scrub_status() -> (b status, s msg, s json): the scrub's progress
 *       (state, pass, files total and done, bytes, mismatches, repaired,
 *       unrepairable, ...), as put in etcd.
 *   scrub(b start) -> (b status, s msg): starts a pass now (true) or
 *       stops the one running (false), within a second.
 *
 * rebuild_status is false "no rebuild service" without Etcd (rebuild
 * needs the map and the jobs the mgr keeps there); scrub runs without. */
#include "dbus_map.h"

#include <stdlib.h>

#include "rebuild_queue.h"
#include "scrub.h"

static bool reply_string(DBusMessage *reply, bool ok, const char *msg, const char *json)
{
	DBusMessageIter iter;

	dbus_message_iter_init_append(reply, &iter);
	gsh_dbus_status_reply(&iter, ok, (char *)msg);
	return dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &json);
}

static bool rebuild_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	char *s;
	bool done;

	if (!exp)
		return reply_string(reply, false, "no Pando export", "{}");
	if (!exp->rebuild)
		return reply_string(reply, false, "no rebuild service (Etcd is not set)", "{}");
	s = pando_rebuild_progress(exp->rebuild);
	done = reply_string(reply, s != NULL, s ? "OK" : "out of memory", s ? s : "{}");
	free(s);
	return done;
}

struct gsh_dbus_method pando_rebuild_status_method = {
	.name = "rebuild_status",
	.method = rebuild_status,
	.args = {
		STATUS_REPLY,
		{ .name = "json", .type = "s", .direction = "out" },
		END_ARG_LIST
	},
};

static bool scrub_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	char *s;
	bool done;

	if (!exp || !exp->scrub)
		return reply_string(reply, false, "no Pando export", "{}");
	s = pando_scrub_progress(exp->scrub);
	done = reply_string(reply, s != NULL, s ? "OK" : "out of memory", s ? s : "{}");
	free(s);
	return done;
}

struct gsh_dbus_method pando_scrub_status_method = {
	.name = "scrub_status",
	.method = scrub_status,
	.args = {
		STATUS_REPLY,
		{ .name = "json", .type = "s", .direction = "out" },
		END_ARG_LIST
	},
};

static bool scrub(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	DBusMessageIter iter;
	dbus_bool_t start;

	dbus_message_iter_init_append(reply, &iter);
	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_BOOLEAN) {
		gsh_dbus_status_reply(&iter, false, "expected a boolean (true: start, false: stop)");
		return true;
	}
	dbus_message_iter_get_basic(args, &start);
	if (!exp || !exp->scrub) {
		gsh_dbus_status_reply(&iter, false, "no Pando export");
		return true;
	}
	pando_scrub_request(exp->scrub, start);
	gsh_dbus_status_reply(&iter, true, start ? "scrub pass starting" : "scrub stopping");
	return true;
}

struct gsh_dbus_method pando_scrub_method = {
	.name = "scrub",
	.method = scrub,
	.args = {
		{ .name = "start", .type = "b", .direction = "in" },
		STATUS_REPLY,
		END_ARG_LIST
	},
};
