/* org.ganesha.nfsd.pando on /org/ganesha/nfsd/pando: the manager's own
 * admin interface beside Ganesha's.
 *
 *   cluster_status() -> (b status, s error,
 *                        a(ussbitt) osds: id, ctl address, data address,
 *                        reachable, last error (-errno), calls, failures,
 *                        t objects removals done, t removals retried)
 *
 * The path can only be registered once Ganesha's dbus thread runs, so a
 * thread waits for the end of Ganesha's start-up and registers it. */
#include "pando_fsal.h"

#include <dbus/dbus.h>

#include "gsh_dbus.h"
#include "nfs_init.h"

static bool append_osd(DBusMessageIter *arr, const struct cluster_osd *o,
		       const struct osd_health *hl)
{
	DBusMessageIter st;
	const char *ctl = o->ctl, *nfs = o->advertise;
	dbus_bool_t up = hl->reachable;
	int32_t err = hl->last_error;
	uint64_t calls = hl->calls, fails = hl->failures;

	return dbus_message_iter_open_container(arr, DBUS_TYPE_STRUCT, NULL, &st) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &hl->id) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &ctl) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &nfs) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_BOOLEAN, &up) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &err) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &calls) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &fails) &&
	       dbus_message_iter_close_container(arr, &st);
}

static bool cluster_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	DBusMessageIter iter, arr;
	struct glist_head *node;
	uint64_t removed = 0, failed = 0;
	bool ok = true;

	dbus_message_iter_init_append(reply, &iter);
	gsh_dbus_status_reply(&iter, true, "OK");
	if (!dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "(ussbitt)", &arr))
		return false;
	pthread_mutex_lock(&pando_exports_lock);
	glist_for_each(node, &pando_exports) {
		struct pando_export *exp = glist_entry(node, struct pando_export, node);
		uint64_t r, f;

		for (size_t i = 0; ok && i < osd_pool_count(exp->pool); i++) {
			struct osd_health hl;

			osd_pool_health(exp->pool, i, &hl);
			ok = append_osd(&arr, cluster_desc_osd(&exp->cluster, hl.id), &hl);
		}
		pando_reaper_stats(exp->reaper, &r, &f);
		removed += r;
		failed += f;
	}
	pthread_mutex_unlock(&pando_exports_lock);
	return ok && dbus_message_iter_close_container(&iter, &arr) &&
	       dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT64, &removed) &&
	       dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT64, &failed);
}

static struct gsh_dbus_method cluster_status_method = {
	.name = "cluster_status",
	.method = cluster_status,
	.args = {
		STATUS_REPLY,
		{ .name = "osds", .type = "a(ussbitt)", .direction = "out" },
		{ .name = "removals_done", .type = "t", .direction = "out" },
		{ .name = "removals_retried", .type = "t", .direction = "out" },
		END_ARG_LIST
	},
};

static struct gsh_dbus_method *pando_methods[] = {
	&cluster_status_method,
	NULL
};

static struct gsh_dbus_interface pando_interface = {
	.name = "org.ganesha.nfsd.pando",
	.props = NULL,
	.methods = pando_methods,
	.signals = NULL,
};

static struct gsh_dbus_interface *pando_interfaces[] = {
	&pando_interface,
	NULL
};

static void *register_when_ready(void *arg)
{
	nfs_init_wait();
	if (gsh_dbus_register_path("pando", pando_interfaces) != 0)
		LogMajor(COMPONENT_DBUS, "pando: could not register /org/ganesha/nfsd/pando");
	else
		LogEvent(COMPONENT_DBUS, "pando: org.ganesha.nfsd.pando is on dbus");
	return NULL;
}

void pando_dbus_start(void)
{
	static bool started;
	pthread_attr_t attr;
	pthread_t t;

	if (started)
		return;
	started = true;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, register_when_ready, NULL) != 0)
		LogMajor(COMPONENT_DBUS, "pando: no thread to register the dbus interface");
	pthread_attr_destroy(&attr);
}
