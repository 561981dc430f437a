/* An export: its configuration block, the namespace store, the cluster
 * description and OSD connections it opens, and the export ops (lookup_path,
 * handles from the wire, statfs, state allocation, write verifier).
 *
 *   EXPORT { ... FSAL {
 *       Name = PANDO;
 *       Db_Path = "/var/lib/pando/ns";        # formatted when absent
 *       Cluster = "/etc/pando/cluster.conf";  # ../osdio/cluster_conf.h
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
 *       Mds_Group = "g1";                     # a manager group: journal, active and standbys
 *       Service_Address_Command = "...";      # run with take/release as the lead moves
 *   } } */
#include "pando_fsal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_parsing.h"
#include "gsh_config.h"
#include "fsal_convert.h"
#include "nfs_exports.h"
#include "layouts.h"
#include "rebuild_queue.h"
#include "scrub.h"
#include "transcode.h"
#include "unstable.h"
#include "view.h"

static struct config_item export_params[] = {
	CONF_ITEM_NOOP("name"),
	CONF_MAND_PATH("Db_Path", 1, MAXPATHLEN, NULL, pando_mds_config, db_path),
	CONF_MAND_PATH("Cluster", 1, MAXPATHLEN, NULL, pando_mds_config, cluster_path),
	CONF_ITEM_UI32("Inline_Max", 1, 1u << 20, NS_INLINE_MAX_DEFAULT, pando_mds_config,
		       inline_max),
	CONF_ITEM_UI32("Mirrors", 1, 3, 2, pando_mds_config, mirrors),
	CONF_ITEM_UI32("Stripe_Unit", 4096, 1u << 30, 1u << 20, pando_mds_config, stripe_unit),
	CONF_ITEM_UI32("Osd_Timeout_Ms", 100, 600000, 10000, pando_mds_config, osd_timeout_ms),
	CONF_ITEM_UI32("Stripe_Width", 1, 16, 1, pando_mds_config, stripe_width),
	CONF_ITEM_UI32("Recall_Timeout", 1, 3600, 10, pando_mds_config, recall_timeout_s),
	CONF_ITEM_UI32("Capability_Lifetime", 5, 7 * 24 * 3600, 600, pando_mds_config,
		       capability_lifetime_s),
	CONF_ITEM_STR("Striped_Clients", 0, 4096, "", pando_mds_config, striped_clients),
	CONF_ITEM_UI32("Object_Pool", 0, 32, 32, pando_mds_config, object_pool),
	CONF_ITEM_BOOL("Pnfs", true, pando_mds_config, pnfs),
	CONF_ITEM_UI32("Db_Reserve_Mb", 0, 1u << 20, 256, pando_mds_config, db_reserve_mb),
	CONF_ITEM_STR("Etcd", 0, 4096, "", pando_mds_config, etcd),
	CONF_ITEM_STR("Etcd_CA", 0, MAXPATHLEN, "", pando_mds_config, etcd_ca),
	CONF_ITEM_STR("Etcd_User", 0, 255, "", pando_mds_config, etcd_user),
	CONF_ITEM_STR("Etcd_Password_File", 0, MAXPATHLEN, "", pando_mds_config,
		      etcd_password_file),
	CONF_ITEM_STR("Etcd_Prefix", 1, 256, "/pando/", pando_mds_config, etcd_prefix),
	CONF_ITEM_STR("Mds_Name", 0, 255, "", pando_mds_config, mds_name),
	CONF_ITEM_STR("Mds_Group", 0, 63, "", pando_mds_config, mds_group),
	CONF_ITEM_STR("Nsm_Source", 0, 255, "", pando_mds_config, nsm_source),
	CONF_ITEM_STR("Service_Address_Command", 0, 1024, "", pando_mds_config,
		      service_address_command),
	CONF_ITEM_UI32("Snapshot_Interval", 0, 7 * 24 * 3600, 900, pando_mds_config,
		       snapshot_interval_s),
	CONF_ITEM_UI32("Rebuild_Parallel", 1, 256, 4, pando_mds_config, rebuild_parallel),
	CONF_ITEM_UI32("Rebuild_Bandwidth_Mb", 0, 1u << 20, 0, pando_mds_config,
		       rebuild_bandwidth_mb),
	CONF_ITEM_UI32("Scrub_Interval", 0, 24 * 365, 168, pando_mds_config, scrub_interval_h),
	CONF_ITEM_UI32("Scrub_Bandwidth_Mb", 0, 1u << 20, 50, pando_mds_config, scrub_bandwidth_mb),
	CONF_ITEM_UI32("Transcode_Interval", 0, 7 * 24 * 3600, 600, pando_mds_config,
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

static void export_free(struct pando_export *exp)
{
	pando_mds_close(&exp->mds);
	gsh_free(exp->mds.cfg.etcd);
	gsh_free(exp->mds.cfg.etcd_ca);
	gsh_free(exp->mds.cfg.etcd_user);
	gsh_free(exp->mds.cfg.etcd_password_file);
	gsh_free(exp->mds.cfg.etcd_prefix);
	gsh_free(exp->mds.cfg.mds_name);
	gsh_free(exp->mds.cfg.mds_group);
	gsh_free(exp->mds.cfg.nsm_source);
	gsh_free(exp->mds.cfg.service_address_command);
	gsh_free(exp->mds.cfg.db_path);
	gsh_free(exp->mds.cfg.cluster_path);
	gsh_free(exp->mds.cfg.striped_clients);
	gsh_free(exp);
}

static void pando_release_export(struct fsal_export *e)
{
	struct pando_export *exp = to_export(e);

	LogEvent(COMPONENT_FSAL, "pando: releasing export %s", exp->mds.cfg.db_path);
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
	rc = ns_getattr(exp->mds.ns, NS_ROOT_INO, &a);
	copy = gsh_strdup(path + rlen);
	for (name = strtok_r(copy, "/", &save); !rc && name; name = strtok_r(NULL, "/", &save))
		rc = a.type == NS_DIR ? ns_lookup(exp->mds.ns, a.ino, name, &a) : -ENOTDIR;
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

static uint64_t left_of(uint64_t limit, uint64_t used)
{
	return used < limit ? limit - used : 0;
}

/* A quota is what df shows: its bytes as the size, what is left of it
 * (or of the OSDs' space, when less) as free; the same for files. */
static void apply_quota(const struct ns_quota *q, const struct ns_statfs *st,
			fsal_dynamicfsinfo_t *info)
{
	if (q->bytes) {
		info->total_bytes = q->bytes;
		if (info->avail_bytes > left_of(q->bytes, st->bytes))
			info->avail_bytes = left_of(q->bytes, st->bytes);
	}
	if (q->files) {
		info->total_files = q->files;
		info->avail_files = left_of(q->files, st->inodes);
	}
	info->free_bytes = info->avail_bytes;
	info->free_files = info->avail_files;
}

static fsal_status_t pando_dynamic_info(struct fsal_export *e, struct fsal_obj_handle *o,
					fsal_dynamicfsinfo_t *info)
{
	struct pando_export *exp = to_export(e);
	struct ns_statfs st;
	struct ns_quota q;
	int rc = ns_statfs(exp->mds.ns, &st);

	if (!rc)
		rc = ns_quota_get(exp->mds.ns, &q);
	if (rc)
		return pando_status(rc);
	pando_mds_space(&exp->mds, &info->total_bytes, &info->avail_bytes);
	/* Inodes are RocksDB records: no fixed table to run out of. */
	info->total_files = UINT32_MAX;
	info->avail_files = UINT32_MAX - (st.inodes < UINT32_MAX ? st.inodes : 0);
	apply_quota(&q, &st, info);
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
	uint64_t v = exp->mds.boot_ns + atomic_load(&exp->mds.verf_epoch);

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
	pando_rquota_ops_init(ops);
}

/* The address clients mount, for presence: Bind_Addr when it names one
 * ("": the host name) and the NFS port. */
static void nfs_address(struct pando_mds *mds)
{
	const struct sockaddr_in *sin = (const void *)&nfs_param.core_param.bind_addr;
	const struct sockaddr_in6 *sin6 = (const void *)&nfs_param.core_param.bind_addr;
	char host[INET6_ADDRSTRLEN + 2] = "";

	/* Ganesha resolves Bind_Addr as IPv6 first, so an IPv4 address is
	 * usually held v4-mapped (cluster/README.md, "Bind_Addr"). */
	if (sin->sin_family == AF_INET && sin->sin_addr.s_addr != htonl(INADDR_ANY)) {
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
	} else if (sin6->sin6_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], host, sizeof(host));
	} else if (sin6->sin6_family == AF_INET6 && !IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr)) {
		host[0] = '[';
		inet_ntop(AF_INET6, &sin6->sin6_addr, host + 1, sizeof(host) - 2);
		strcat(host, "]");
	}
	snprintf(mds->nfs_host, sizeof(mds->nfs_host), "%s", host);
	mds->nfs_port = nfs_param.core_param.port[P_NFS];
}

/* SIGTERM reached a standby of a manager group (../mds/group.c) in
 * Ganesha's start, which has served nothing and registered nothing yet
 * and would take a failed export for a broken configuration. */
static void standby_stopped(struct pando_export *exp)
{
	pando_mds_close(&exp->mds);
	LogEvent(COMPONENT_FSAL, "pando: the standby stops (SIGTERM)");
	_exit(EXIT_SUCCESS);
}

static int export_open(struct pando_export *exp)
{
	nfs_address(&exp->mds);
	return pando_mds_open(&exp->mds, &pando_host);
}

fsal_status_t pando_create_export(struct fsal_module *fsal_hdl, void *parse_node,
				  struct config_error_type *err_type,
				  const struct fsal_up_vector *up_ops)
{
	struct pando_export *exp = gsh_calloc(1, sizeof(*exp));
	int rc;

	fsal_export_init(&exp->export);
	export_ops_init(&exp->export.exp_ops);
	if (load_config_from_node(parse_node, &export_block, &exp->mds.cfg, true, err_type) != 0) {
		rc = -EINVAL;
		goto fail;
	}
	rc = export_open(exp);
	if (rc == -EINTR)
		standby_stopped(exp);
	if (!rc && exp->mds.group)
		rc = pando_reclaim_give(&exp->mds);
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
	pando_mds_recover(&exp->mds);
	pthread_mutex_lock(&pando_exports_lock);
	glist_add_tail(&pando_exports, &exp->node);
	pthread_mutex_unlock(&pando_exports_lock);
	LogEvent(COMPONENT_FSAL,
		 "pando: export %s: store %s, %zu OSDs, %u mirror(s), inline up to %u bytes, "
		 "cluster map epoch %" PRIu64 "%s%s",
		 CTX_FULLPATH(op_ctx), exp->mds.cfg.db_path, pando_view_get(&exp->mds)->map.nosds,
		 exp->mds.cfg.mirrors, exp->mds.cfg.inline_max,
		 pando_view_get(&exp->mds)->map.epoch, exp->mds.cfg.etcd[0] ? ", etcd " : "",
		 exp->mds.cfg.etcd);
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
fail:
	free_export_ops(&exp->export);
	export_free(exp);
	return posix2fsal_status(-rc);
}
