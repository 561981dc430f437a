/* org.ganesha.nfsd.pando, rebuild and scrub as this manager runs them:
 *
 *   rebuild_status() -> (b status, s msg, s json): the progress it puts
 *       in etcd (mgr/README.md, "Recovery and scrub"): state, jobs_done,
 *       jobs_active, files and bytes total and done, rate_bps, eta_s, ...
 *
 * false "no rebuild service" without Etcd (rebuild needs the map and
 * the jobs the mgr keeps there). */
#include "dbus_map.h"

#include <stdlib.h>

#include "rebuild_queue.h"

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
