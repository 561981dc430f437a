/* org.ganesha.nfsd.pando, rebuild and scrub as this manager runs them:
 *
 *   rebuild_status() -> (b status, s msg, s json): the progress it puts
 *       in etcd (mgr/README.md, "Rebuild and scrub"): state, jobs_done,
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
#include "dbus_methods.h"

#include <stdlib.h>

#include "rebuild_queue.h"
#include "scrub.h"

/* A progress document (malloc'd, NULL when out of memory) as the reply. */
static bool reply_progress(DBusMessage *reply, char *json)
{
	bool done = pando_dbus_reply_text(reply, json != NULL, json ? "OK" : "out of memory",
					  json ? json : "{}");

	free(json);
	return done;
}

static bool rebuild_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();

	if (!exp)
		return pando_dbus_reply_text(reply, false, "no Pando export", "{}");
	if (!exp->mds.rebuild)
		return pando_dbus_reply_text(reply, false, "no rebuild service (Etcd is not set)",
					     "{}");
	return reply_progress(reply, pando_rebuild_progress(exp->mds.rebuild));
}

struct gsh_dbus_method pando_rebuild_status_method =
	PANDO_JSON_METHOD("rebuild_status", rebuild_status);

static bool scrub_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();

	if (!exp || !exp->mds.scrub)
		return pando_dbus_reply_text(reply, false, "no Pando export", "{}");
	return reply_progress(reply, pando_scrub_progress(exp->mds.scrub));
}

struct gsh_dbus_method pando_scrub_status_method = PANDO_JSON_METHOD("scrub_status", scrub_status);

static bool scrub(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	DBusMessageIter iter;
	dbus_bool_t start;

	dbus_message_iter_init_append(reply, &iter);
	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_BOOLEAN) {
		gsh_dbus_status_reply(&iter, false,
				      "expected a boolean (true: start, false: stop)");
		return true;
	}
	dbus_message_iter_get_basic(args, &start);
	if (!exp || !exp->mds.scrub) {
		gsh_dbus_status_reply(&iter, false, "no Pando export");
		return true;
	}
	pando_scrub_request(exp->mds.scrub, start);
	gsh_dbus_status_reply(&iter, true, start ? "scrub pass starting" : "scrub stopping");
	return true;
}

struct gsh_dbus_method pando_scrub_method = {
	.name = "scrub",
	.method = scrub,
	.args = { { .name = "start", .type = "b", .direction = "in" }, STATUS_REPLY, END_ARG_LIST },
};
