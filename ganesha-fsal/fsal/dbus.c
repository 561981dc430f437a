/* org.ganesha.nfsd.pando on /org/ganesha/nfsd/pando: the manager's own
 * admin interface beside Ganesha's.
 *
 *   cluster_status() -> (b status, s error,
 *                        a(ussbitt) osds: id, ctl address, data address,
 *                        reachable, last error (-errno), calls, failures,
 *                        t objects removals done, t removals retried)
 *   layout_status()  -> (b, s, t files with layouts, t segments out,
 *                        t granted, t returned, t recalls, t fenced,
 *                        t I/O errors clients reported, t bytes read and
 *                        t bytes written through the manager itself)
 *   recall_file(s path) -> (b, s)   every layout of the file at path (from
 *                        the export root, e.g. "/dir/file"); holders that
 *                        do not return them in Recall_Timeout are fenced
 *   recall_client(s address) -> (b, s, u files)   everything one client
 *                        (by IP address as ganesha_mgr shows it) holds
 *   damage() -> (b, s, a(tuiuub) records): the components reported failing
 *                        (inode, OSD id, last error, operation, reports,
 *                        stale: a write missed it, nothing reads it),
 *                        kept in the store until repair clears them
 *   map_status(), file_map(s path): the cluster map and a file's storage
 *                        map, as JSON (dbus_map.c)
 *   layout_set(s path, s policy), layout_get(s path): storage policies
 *                        (dbus_layout.c)
 *   transcode_status(), transcode_file(s path): the transcoder's counters;
 *                        one file transcoded now (dbus_layout.c)
 *   reload_key() -> (b, s)   every export reads its cluster key file again
 *                        (key.c); s says which key is in use, or why not
 *   store_snapshot(s dir) -> (b, s): a copy of the store a new standby of
 *                        the manager group starts from (dbus_group.c)
 *
 * The path can only be registered once Ganesha's dbus thread runs, so a
 * thread waits for the end of Ganesha's start-up and registers it. */
#include "pando_fsal.h"

#include <dbus/dbus.h>
#include <stdlib.h>
#include <string.h>

#include "gsh_dbus.h"
#include "dbus_methods.h"
#include "layouts.h"
#include "nfs_init.h"

static bool append_osd(DBusMessageIter *arr, const struct cluster_map_osd *o,
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

		for (size_t i = 0; ok && i < osd_conns_count(exp->mds.conns); i++) {
			struct osd_health hl;
			struct cluster_map_osd addr;

			osd_conns_health(exp->mds.conns, i, &hl);
			osd_conns_address(exp->mds.conns, i, &addr);
			ok = append_osd(&arr, &addr, &hl);
		}
		pando_reaper_stats(exp->mds.reaper, &r, &f);
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
	.args = { STATUS_REPLY,
		  { .name = "osds", .type = "a(ussbitt)", .direction = "out" },
		  { .name = "removals_done", .type = "t", .direction = "out" },
		  { .name = "removals_retried", .type = "t", .direction = "out" },
		  END_ARG_LIST },
};

/* The first export: a manager serves one Pando file system. */
struct pando_export *pando_dbus_first_export(void)
{
	struct pando_export *exp = NULL;

	pthread_mutex_lock(&pando_exports_lock);
	if (!glist_empty(&pando_exports))
		exp = glist_first_entry(&pando_exports, struct pando_export, node);
	pthread_mutex_unlock(&pando_exports_lock);
	return exp;
}

static bool layout_status(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	struct pando_layout_stats st = { 0 };
	DBusMessageIter iter;
	uint64_t v[9] = { 0 };

	if (exp)
		pando_grants_stats(exp->mds.grants, &st);
	v[0] = st.files;
	v[1] = st.segments;
	v[2] = st.granted;
	v[3] = st.returned;
	v[4] = st.recalls;
	v[5] = st.fenced;
	v[6] = st.io_errors;
	if (exp) {
		v[7] = atomic_load(&exp->mds.mds_read_bytes);
		v[8] = atomic_load(&exp->mds.mds_write_bytes);
	}
	dbus_message_iter_init_append(reply, &iter);
	gsh_dbus_status_reply(&iter, exp != NULL, exp ? "OK" : "no Pando export");
	for (int i = 0; i < 9; i++)
		if (!dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT64, &v[i]))
			return false;
	return true;
}

int pando_dbus_resolve(struct pando_export *exp, const char *path, struct ns_attr *a)
{
	char *copy = gsh_strdup(path), *save = NULL, *name;
	int rc = ns_getattr(exp->mds.ns, NS_ROOT_INO, a);

	for (name = strtok_r(copy, "/", &save); !rc && name; name = strtok_r(NULL, "/", &save))
		rc = ns_lookup(exp->mds.ns, a->ino, name, a);
	gsh_free(copy);
	return rc;
}

const char *pando_dbus_path_arg(DBusMessageIter *args, const char **path, struct pando_export **exp)
{
	*exp = pando_dbus_first_export();
	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING)
		return "expected a path";
	dbus_message_iter_get_basic(args, path);
	return *exp ? NULL : "no Pando export";
}

bool pando_dbus_reply_text(DBusMessage *msg, bool ok, const char *text, const char *json)
{
	DBusMessageIter iter;

	dbus_message_iter_init_append(msg, &iter);
	gsh_dbus_status_reply(&iter, ok, (char *)text);
	return !json || dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &json);
}

bool pando_dbus_reply(DBusMessage *msg, bool ok, const char *text, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	bool done = pando_dbus_reply_text(msg, ok, text, s ? s : "{}");

	free(s);
	json_decref(j);
	return done;
}

static bool recall_file(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	DBusMessageIter iter;
	const char *path = NULL;
	char msg[256];
	struct ns_attr a;
	int rc = -ENOENT;

	dbus_message_iter_init_append(reply, &iter);
	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING) {
		gsh_dbus_status_reply(&iter, false, "expected a path");
		return true;
	}
	dbus_message_iter_get_basic(args, &path);
	if (exp)
		rc = pando_dbus_resolve(exp, path, &a);
	if (!rc)
		rc = pando_grants_recall_file(exp->mds.grants, a.ino, 0, false, "admin request");
	if (rc == -EBUSY)
		snprintf(msg, sizeof(msg), "recalling the layouts of %s (inode %" PRIu64 ")", path,
			 a.ino);
	else if (rc == 0)
		snprintf(msg, sizeof(msg), "no layouts of %s are out", path);
	else
		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(-rc));
	gsh_dbus_status_reply(&iter, rc == 0 || rc == -EBUSY, msg);
	return true;
}

/* ganesha_mgr shows IPv4 clients IPv4-mapped (::ffff:a.b.c.d); the
 * grants keep the holder's address as a.b.c.d (mds.c). */
static const char *plain_address(const char *client)
{
	if (!strncmp(client, "::ffff:", 7) && strchr(client, '.'))
		return client + 7;
	return client;
}

static bool recall_client(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	DBusMessageIter iter;
	const char *client = NULL;
	uint32_t files = 0;
	char msg[128];

	dbus_message_iter_init_append(reply, &iter);
	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING) {
		gsh_dbus_status_reply(&iter, false, "expected a client address");
		return true;
	}
	dbus_message_iter_get_basic(args, &client);
	if (exp)
		files = (uint32_t)pando_grants_recall_client(exp->mds.grants, plain_address(client),
							     "admin request");
	snprintf(msg, sizeof(msg), "recalling layouts of %u file(s) from %s", files,
		 *client ? client : "every client");
	gsh_dbus_status_reply(&iter, exp != NULL, msg);
	return dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT32, &files);
}

static int append_damage(void *arg, const struct ns_damage *dr)
{
	DBusMessageIter *arr = arg, st;
	uint64_t ino = dr->ino;
	uint32_t osd = dr->osd_id, op = dr->opnum, count = dr->count;
	int32_t status = dr->status;
	dbus_bool_t stale = dr->stale;

	return !(dbus_message_iter_open_container(arr, DBUS_TYPE_STRUCT, NULL, &st) &&
		 dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &ino) &&
		 dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &osd) &&
		 dbus_message_iter_append_basic(&st, DBUS_TYPE_INT32, &status) &&
		 dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &op) &&
		 dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT32, &count) &&
		 dbus_message_iter_append_basic(&st, DBUS_TYPE_BOOLEAN, &stale) &&
		 dbus_message_iter_close_container(arr, &st));
}

static bool damage(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	DBusMessageIter iter, arr;
	int rc = 0;

	dbus_message_iter_init_append(reply, &iter);
	gsh_dbus_status_reply(&iter, exp != NULL, exp ? "OK" : "no Pando export");
	if (!dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "(tuiuub)", &arr))
		return false;
	if (exp)
		rc = ns_damage_list(exp->mds.ns, 0, append_damage, &arr);
	return rc == 0 && dbus_message_iter_close_container(&iter, &arr);
}

static struct gsh_dbus_method damage_method = {
	.name = "damage",
	.method = damage,
	.args = { STATUS_REPLY,
		  { .name = "records", .type = "a(tuiuub)", .direction = "out" },
		  END_ARG_LIST },
};

static struct gsh_dbus_method layout_status_method = {
	.name = "layout_status",
	.method = layout_status,
	.args = { STATUS_REPLY,
		  { .name = "files", .type = "t", .direction = "out" },
		  { .name = "segments", .type = "t", .direction = "out" },
		  { .name = "granted", .type = "t", .direction = "out" },
		  { .name = "returned", .type = "t", .direction = "out" },
		  { .name = "recalls", .type = "t", .direction = "out" },
		  { .name = "fenced", .type = "t", .direction = "out" },
		  { .name = "io_errors", .type = "t", .direction = "out" },
		  { .name = "mds_read_bytes", .type = "t", .direction = "out" },
		  { .name = "mds_write_bytes", .type = "t", .direction = "out" },
		  END_ARG_LIST },
};

static struct gsh_dbus_method recall_file_method = {
	.name = "recall_file",
	.method = recall_file,
	.args = { { .name = "path", .type = "s", .direction = "in" }, STATUS_REPLY, END_ARG_LIST },
};

static struct gsh_dbus_method recall_client_method = {
	.name = "recall_client",
	.method = recall_client,
	.args = { { .name = "address", .type = "s", .direction = "in" },
		  STATUS_REPLY,
		  { .name = "files", .type = "u", .direction = "out" },
		  END_ARG_LIST },
};

static bool reload_key(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct glist_head *node;
	char msg[1024] = "no Pando export";
	bool ok = false;
	int rc = 0;

	pthread_mutex_lock(&pando_exports_lock);
	glist_for_each(node, &pando_exports) {
		struct pando_export *exp = glist_entry(node, struct pando_export, node);

		rc = pando_key_reload(&exp->mds, msg, sizeof(msg));
		ok = rc == 0;
		if (rc)
			break;
	}
	pthread_mutex_unlock(&pando_exports_lock);
	return pando_dbus_reply_text(reply, ok, msg, NULL);
}

static struct gsh_dbus_method reload_key_method = {
	.name = "reload_key",
	.method = reload_key,
	.args = { STATUS_REPLY, END_ARG_LIST },
};

static struct gsh_dbus_method *pando_methods[] = { &cluster_status_method,
						   &layout_status_method,
						   &recall_file_method,
						   &recall_client_method,
						   &damage_method,
						   &pando_map_status_method,
						   &pando_file_map_method,
						   &pando_rebuild_status_method,
						   &pando_scrub_status_method,
						   &pando_scrub_method,
						   &pando_layout_set_method,
						   &pando_layout_get_method,
						   &pando_transcode_status_method,
						   &pando_transcode_file_method,
						   &reload_key_method,
						   &pando_store_snapshot_method,
						   &pando_quota_set_method,
						   &pando_quota_get_method,
						   &pando_owner_quota_set_method,
						   &pando_owner_quota_get_method,
						   &pando_owner_quota_list_method,
						   &pando_junction_add_method,
						   &pando_junction_remove_method,
						   &pando_junction_list_method,
						   NULL };

static struct gsh_dbus_interface pando_interface = {
	.name = "org.ganesha.nfsd.pando",
	.props = NULL,
	.methods = pando_methods,
	.signals = NULL,
};

static struct gsh_dbus_interface *pando_interfaces[] = { &pando_interface, NULL };

static void *register_when_ready(void *arg)
{
	nfs_init_wait();
	/* It answers dbus's TRUE on success, 0 without a bus connection. */
	if (gsh_dbus_register_path("pando", pando_interfaces) == 0)
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
