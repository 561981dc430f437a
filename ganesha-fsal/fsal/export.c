/* An export: its configuration block, the namespace store, the cluster
 * description and OSD connections it opens, and the export ops (lookup_path,
 * handles from the wire, statfs, state allocation, write verifier).
 *
 *   EXPORT { ... FSAL {
 *       Name = PANDO;
 *       Db_Path = "/var/lib/pando/ns";        # formatted when absent
 *       Cluster = "/etc/pando/cluster.conf";  # ../osdio/cluster_desc.h
 *       Inline_Max = 65536;                   # bytes kept in RocksDB
 *       Mirrors = 2;                          # copies of object data
 *       Stripe_Unit = 1048576;
 *       Osd_Timeout_Ms = 10000;
 *       Stripe_Width = 1;                     # data columns per mirror
 *       Recall_Timeout = 10;                  # seconds, then fence
 *       Capability_Lifetime = 600;            # seconds a layout's handles work
 *       Striped_Clients = "10.0.0.5, ...";    # Linux 6.18+ hosts ("*": all)
 *       Object_Pool = 32;                     # maps made ahead for new files (0: none)
 *       Pnfs = true;                          # false: no layouts (gateway only)
 *       Db_Reserve_Mb = 256;                  # kept free on Db_Path's disk (NOSPC below)
 *       Etcd = "http://127.0.0.1:2379";       # follow the cluster map there ("": don't)
 *       Etcd_Prefix = "/pando/";              # of the map and presence keys
 *       Mds_Name = "node1";                   # presence key mds/<name> (default: host name)
 *   } } */
#include "pando_fsal.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config_parsing.h"
#include "fsal_convert.h"
#include "nfs_exports.h"
#include "layouts.h"
#include "rebuild_queue.h"
#include "scrub.h"
#include "transcode.h"
#include "unstable.h"
#include "view.h"

#define STATFS_CACHE_S 5
/* Files with uncommitted UNSTABLE gateway writes the manager keeps track
 * of (osdio/unstable.h): about 3 MiB; writes past it go stable. */
#define UNSTABLE_FILES_MAX (1u << 16)

static struct config_item export_params[] = {
	CONF_ITEM_NOOP("name"),
	CONF_MAND_PATH("Db_Path", 1, MAXPATHLEN, NULL, pando_export_config, db_path),
	CONF_MAND_PATH("Cluster", 1, MAXPATHLEN, NULL, pando_export_config, cluster_path),
	CONF_ITEM_UI32("Inline_Max", 1, 1u << 20, NS_INLINE_MAX_DEFAULT, pando_export_config,
		       inline_max),
	CONF_ITEM_UI32("Mirrors", 1, 3, 2, pando_export_config, mirrors),
	CONF_ITEM_UI32("Stripe_Unit", 4096, 1u << 30, 1u << 20, pando_export_config, stripe_unit),
	CONF_ITEM_UI32("Osd_Timeout_Ms", 100, 600000, 10000, pando_export_config, osd_timeout_ms),
	CONF_ITEM_UI32("Stripe_Width", 1, 16, 1, pando_export_config, stripe_width),
	CONF_ITEM_UI32("Recall_Timeout", 1, 3600, 10, pando_export_config, recall_timeout_s),
	CONF_ITEM_UI32("Capability_Lifetime", 5, 7 * 24 * 3600, 600, pando_export_config,
		       capability_lifetime_s),
	CONF_ITEM_STR("Striped_Clients", 0, 4096, "", pando_export_config, striped_clients),
	CONF_ITEM_UI32("Object_Pool", 0, 32, 32, pando_export_config, object_pool),
	CONF_ITEM_BOOL("Pnfs", true, pando_export_config, pnfs),
	CONF_ITEM_UI32("Db_Reserve_Mb", 0, 1u << 20, 256, pando_export_config, db_reserve_mb),
	CONF_ITEM_STR("Etcd", 0, 4096, "", pando_export_config, etcd),
	CONF_ITEM_STR("Etcd_CA", 0, MAXPATHLEN, "", pando_export_config, etcd_ca),
	CONF_ITEM_STR("Etcd_User", 0, 255, "", pando_export_config, etcd_user),
	CONF_ITEM_STR("Etcd_Password_File", 0, MAXPATHLEN, "", pando_export_config,
		      etcd_password_file),
	CONF_ITEM_STR("Etcd_Prefix", 1, 256, "/pando/", pando_export_config, etcd_prefix),
	CONF_ITEM_STR("Mds_Name", 0, 255, "", pando_export_config, mds_name),
	CONF_ITEM_UI32("Rebuild_Parallel", 1, 256, 4, pando_export_config, rebuild_parallel),
	CONF_ITEM_UI32("Rebuild_Bandwidth_Mb", 0, 1u << 20, 0, pando_export_config,
		       rebuild_bandwidth_mb),
	CONF_ITEM_UI32("Scrub_Interval", 0, 24 * 365, 168, pando_export_config, scrub_interval_h),
	CONF_ITEM_UI32("Scrub_Bandwidth_Mb", 0, 1u << 20, 50, pando_export_config,
		       scrub_bandwidth_mb),
	CONF_ITEM_UI32("Transcode_Interval", 0, 7 * 24 * 3600, 600, pando_export_config,
		       transcode_interval_s),
	CONFIG_EOL
};

static struct config_block export_block = { .dbus_interface_name =
						    "org.ganesha.nfsd.config.fsal.pando-export%d",
					    .blk_desc.name = "FSAL",
					    .blk_desc.type = CONFIG_BLOCK,
					    .blk_desc.u.blk.init = noop_conf_init,
					    .blk_desc.u.blk.params = export_params,
					    .blk_desc.u.blk.commit = noop_conf_commit };

static void store_log(void *arg, const char *msg)
{
	LogCrit(COMPONENT_FSAL, "pando: namespace store: %s", msg);
}

/* Opens the store, formatting it when Db_Path does not exist yet or is an
 * empty directory (a new file system). */
static int open_store(struct pando_export *exp)
{
	struct ns_options o = { .inline_max = exp->cfg.inline_max,
				.log = store_log,
				.reserve_bytes = (uint64_t)exp->cfg.db_reserve_mb << 20 };
	int rc = ns_open(exp->cfg.db_path, &o, &exp->ns);

	if (rc == -ENOENT) {
		LogEvent(COMPONENT_FSAL, "pando: no namespace store in %s: formatting a new one",
			 exp->cfg.db_path);
		rc = ns_format(exp->cfg.db_path, &o);
		if (!rc)
			rc = ns_open(exp->cfg.db_path, &o, &exp->ns);
	}
	if (rc == -EBUSY)
		LogCrit(COMPONENT_FSAL, "pando: %s is in use by another process (pando-fsck?)",
			exp->cfg.db_path);
	else if (rc)
		LogCrit(COMPONENT_FSAL, "pando: cannot open the namespace store %s: %s",
			exp->cfg.db_path, strerror(-rc));
	if (!rc)
		ns_uuid(exp->ns, exp->uuid);
	return rc;
}

static int open_cluster(struct pando_export *exp)
{
	struct osd_conns_options po = { .timeout_ms = (int)exp->cfg.osd_timeout_ms };
	char why[512];
	int rc = cluster_desc_load(exp->cfg.cluster_path, &exp->cluster, why, sizeof(why));

	if (rc) {
		LogCrit(COMPONENT_FSAL, "pando: cluster description: %s", why);
		return rc;
	}
	if (exp->cluster.nosds < exp->cfg.mirrors * exp->cfg.stripe_width) {
		LogCrit(COMPONENT_FSAL,
			"pando: Mirrors = %u and Stripe_Width = %u need %u OSDs; the cluster lists %zu",
			exp->cfg.mirrors, exp->cfg.stripe_width,
			exp->cfg.mirrors * exp->cfg.stripe_width, exp->cluster.nosds);
		return -EINVAL;
	}
	rc = osd_conns_new(&exp->cluster, &po, &exp->conns);
	if (!rc)
		rc = pando_view_seed(exp);
	if (rc)
		LogCrit(COMPONENT_FSAL, "pando: cannot set up the OSDs: %s", strerror(-rc));
	return rc;
}

static void export_free(struct pando_export *exp)
{
	pando_transcode_stop(exp->transcode);
	pando_scrub_stop(exp->scrub);
	pando_rebuild_stop(exp->rebuild);
	pando_presence_stop(exp->presence);
	pando_mapwatch_stop(exp->mapwatch);
	pando_layouts_watcher_stop(exp->layout_watcher);
	/* Ganesha still holds the segments and ends them when it disposes
	 * of them (mds.c). */
	pando_grants_free(exp->grants);
	pando_reaper_stop(exp->reaper);
	pando_object_pool_stop(exp->object_pool);
	pando_views_free(exp);
	osd_conns_free(exp->conns);
	unstable_files_free(exp->unstable);
	pando_opstats_free(exp->opstats);
	cluster_desc_free(&exp->cluster);
	if (exp->ns)
		ns_close(exp->ns);
	pthread_mutex_destroy(&exp->inflight_lock);
	pthread_cond_destroy(&exp->inflight_cond);
	pthread_mutex_destroy(&exp->space_lock);
	pthread_mutex_destroy(&exp->view_lock);
	pthread_mutex_destroy(&exp->key_lock);
	gsh_free(exp->cfg.etcd);
	gsh_free(exp->cfg.etcd_ca);
	gsh_free(exp->cfg.etcd_user);
	gsh_free(exp->cfg.etcd_password_file);
	gsh_free(exp->cfg.etcd_prefix);
	gsh_free(exp->cfg.mds_name);
	gsh_free(exp->cfg.db_path);
	gsh_free(exp->cfg.cluster_path);
	gsh_free(exp->cfg.striped_clients);
	gsh_free(exp);
}

static void pando_release_export(struct fsal_export *e)
{
	struct pando_export *exp = to_export(e);

	LogEvent(COMPONENT_FSAL, "pando: releasing export %s", exp->cfg.db_path);
	pthread_mutex_lock(&pando_exports_lock);
	glist_del(&exp->node);
	pthread_mutex_unlock(&pando_exports_lock);
	fsal_detach_export(e->fsal, &e->exports);
	free_export_ops(e);
	export_free(exp);
}

/* The export's path is its root; a longer path names a directory in it. */
static fsal_status_t pando_lookup_path(struct fsal_export *e, const char *path,
				       struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	struct pando_export *exp = to_export(e);
	const char *root = CTX_FULLPATH(op_ctx);
	size_t rlen = strlen(root);
	char *copy, *save = NULL, *name;
	struct ns_attr a;
	int rc;

	if (strncmp(path, root, rlen) != 0 || (path[rlen] && path[rlen] != '/'))
		return fsalstat(ERR_FSAL_NOENT, 0);
	rc = ns_getattr(exp->ns, NS_ROOT_INO, &a);
	copy = gsh_strdup(path + rlen);
	for (name = strtok_r(copy, "/", &save); !rc && name; name = strtok_r(NULL, "/", &save))
		rc = a.type == NS_DIR ? ns_lookup(exp->ns, a.ino, name, &a) : -ENOTDIR;
	gsh_free(copy);
	if (rc)
		return pando_status(rc);
	return pando_handle_from_ino(exp, a.ino, a.gen, out, attrs);
}

static fsal_status_t pando_wire_to_host(struct fsal_export *e, fsal_digesttype_t type,
					struct gsh_buffdesc *fh, int flags)
{
	uint64_t ino;
	uint32_t gen;
	int rc = pando_fh_decode(to_export(e), fh->addr, fh->len, &ino, &gen);

	if (rc == -EINVAL)
		return fsalstat(ERR_FSAL_BADHANDLE, 0);
	if (rc)
		return fsalstat(ERR_FSAL_STALE, 0);
	fh->len = PANDO_FH_LEN;
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static fsal_status_t pando_create_handle(struct fsal_export *e, struct gsh_buffdesc *fh,
					 struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	struct pando_export *exp = to_export(e);
	uint64_t ino;
	uint32_t gen;
	int rc = pando_fh_decode(exp, fh->addr, fh->len, &ino, &gen);

	if (rc == -EINVAL)
		return fsalstat(ERR_FSAL_BADHANDLE, 0);
	if (rc)
		return fsalstat(ERR_FSAL_STALE, 0);
	return pando_handle_from_ino(exp, ino, gen, out, attrs);
}

/* Space: what the reachable OSDs report, divided among the mirrors;
 * asked at most every few seconds. */
static void refresh_space(struct pando_export *exp)
{
	uint64_t total = 0, avail = 0;
	time_t now = time(NULL);

	if (now - exp->space_at < STATFS_CACHE_S)
		return;
	for (size_t i = 0; i < osd_conns_count(exp->conns); i++) {
		const struct pando_view *v = pando_view_get(exp);
		struct osd_health h;
		struct osd_ctl_statfs st;
		const struct pando_view_osd *state = NULL;
		uint32_t id;
		struct osd_ctl_client *c;
		int rc;

		osd_conns_health(exp->conns, i, &h);
		id = h.id;
		/* Out of the map: its space is leaving the file system. */
		if (!pando_view_osd(v, id, &state) || !state->listed || !state->in)
			continue;
		c = osd_conns_get(exp->conns, id, &rc);
		if (!c)
			continue;
		rc = osd_ctl_statfs(c, &st);
		osd_conns_result(exp->conns, id, rc);
		if (!rc) {
			total += st.total_bytes;
			avail += st.free_bytes;
		}
	}
	exp->space_total = total / exp->cfg.mirrors;
	exp->space_avail = avail / exp->cfg.mirrors;
	exp->space_at = now;
}

static fsal_status_t pando_dynamic_info(struct fsal_export *e, struct fsal_obj_handle *o,
					fsal_dynamicfsinfo_t *info)
{
	struct pando_export *exp = to_export(e);
	struct ns_statfs st;
	int rc = ns_statfs(exp->ns, &st);

	if (rc)
		return pando_status(rc);
	pthread_mutex_lock(&exp->space_lock);
	refresh_space(exp);
	info->total_bytes = exp->space_total;
	info->free_bytes = info->avail_bytes = exp->space_avail;
	pthread_mutex_unlock(&exp->space_lock);
	/* Inodes are RocksDB records: no fixed table to run out of. */
	info->total_files = UINT32_MAX;
	info->free_files = info->avail_files =
		UINT32_MAX - (st.inodes < UINT32_MAX ? st.inodes : 0);
	info->time_delta.tv_sec = 0;
	info->time_delta.tv_nsec = 1;
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static struct state_t *pando_alloc_state(struct fsal_export *e, enum state_type type,
					 struct state_t *related)
{
	return init_state(gsh_calloc(1, sizeof(struct state_t) + sizeof(struct fsal_fd)), e, type,
			  related);
}

/* Changes on restart (boot time) and when an OSD lost unstable writes. */
static void pando_write_verifier(struct fsal_export *e, struct gsh_buffdesc *verf)
{
	struct pando_export *exp = to_export(e);
	uint64_t v = exp->boot_ns + atomic_load(&exp->verf_epoch);

	memset(verf->addr, 0, verf->len);
	memcpy(verf->addr, &v, verf->len < sizeof(v) ? verf->len : sizeof(v));
}

static void export_ops_init(struct export_ops *ops)
{
	ops->release = pando_release_export;
	ops->lookup_path = pando_lookup_path;
	ops->wire_to_host = pando_wire_to_host;
	ops->create_handle = pando_create_handle;
	ops->get_fs_dynamic_info = pando_dynamic_info;
	ops->alloc_state = pando_alloc_state;
	ops->get_write_verifier = pando_write_verifier;
	pando_mds_export_ops_init(ops);
}

static int export_open(struct pando_export *exp)
{
	struct timespec now;
	int rc = open_store(exp);

	if (!rc)
		rc = open_cluster(exp);
	if (!rc && !(exp->unstable = unstable_files_new(UNSTABLE_FILES_MAX)))
		rc = -ENOMEM;
	/* The map before the object pool, so no object is made ahead on an
	 * OSD the map has taken out. */
	if (!rc && exp->cfg.etcd[0])
		rc = pando_mapwatch_start(exp, &exp->mapwatch);
	/* The pool first: the reaper asks it which intents are its own. */
	if (!rc && exp->cfg.object_pool)
		rc = pando_object_pool_start(exp, exp->cfg.object_pool, &exp->object_pool);
	if (!rc)
		rc = pando_reaper_start(exp, &exp->reaper);
	if (!rc)
		rc = pando_layouts_grants_new(exp, exp->cfg.recall_timeout_s, &exp->grants);
	if (!rc)
		rc = pando_layouts_watcher_start(exp, &exp->layout_watcher);
	/* Presence before the map thread runs: that thread kicks it after
	 * each epoch it applies. */
	if (!rc && exp->cfg.etcd[0])
		rc = pando_presence_start(exp, &exp->presence);
	if (!rc && exp->mapwatch)
		rc = pando_mapwatch_run(exp->mapwatch);
	if (!rc && exp->cfg.etcd[0])
		rc = pando_rebuild_start(exp, &exp->rebuild);
	if (!rc)
		rc = pando_scrub_start(exp, &exp->scrub);
	if (!rc)
		rc = pando_transcode_start(exp, &exp->transcode);
	clock_gettime(CLOCK_REALTIME, &now);
	exp->boot_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	return rc;
}

fsal_status_t pando_create_export(struct fsal_module *fsal_hdl, void *parse_node,
				  struct config_error_type *err_type,
				  const struct fsal_up_vector *up_ops)
{
	struct pando_export *exp = gsh_calloc(1, sizeof(*exp));
	int rc;

	pthread_mutex_init(&exp->inflight_lock, NULL);
	pthread_cond_init(&exp->inflight_cond, NULL);
	pthread_mutex_init(&exp->space_lock, NULL);
	pthread_mutex_init(&exp->view_lock, NULL);
	pthread_mutex_init(&exp->key_lock, NULL);
	exp->opstats = pando_opstats_new();
	fsal_export_init(&exp->export);
	export_ops_init(&exp->export.exp_ops);
	if (load_config_from_node(parse_node, &export_block, &exp->cfg, true, err_type) != 0) {
		rc = -EINVAL;
		goto fail;
	}
	rc = export_open(exp);
	if (rc)
		goto fail;
	rc = fsal_attach_export(fsal_hdl, &exp->export.exports);
	if (rc) {
		rc = -rc;
		goto fail;
	}
	exp->export.fsal = fsal_hdl;
	exp->export.up_ops = up_ops;
	op_ctx->fsal_export = &exp->export;
	pando_restart_settle(exp);
	pando_restart_resync(exp);
	pthread_mutex_lock(&pando_exports_lock);
	glist_add_tail(&pando_exports, &exp->node);
	pthread_mutex_unlock(&pando_exports_lock);
	LogEvent(COMPONENT_FSAL,
		 "pando: export %s: store %s, %zu OSDs, %u mirror(s), inline up to %u bytes, "
		 "cluster map epoch %" PRIu64 "%s%s",
		 CTX_FULLPATH(op_ctx), exp->cfg.db_path, pando_view_get(exp)->desc.nosds,
		 exp->cfg.mirrors, exp->cfg.inline_max, pando_view_get(exp)->epoch,
		 exp->cfg.etcd[0] ? ", etcd " : "", exp->cfg.etcd);
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
fail:
	free_export_ops(&exp->export);
	export_free(exp);
	return posix2fsal_status(-rc);
}
