/* The module: what Ganesha's loader finds in libfsalpando.so.  It
 * registers FSAL "PANDO", states what the file system supports, and
 * starts the dbus interface once Ganesha's dbus is up; the engine's log
 * (../mds/mds_log.h) goes to Ganesha's. */
#include "pando_fsal.h"

#include "FSAL/fsal_init.h"
#include "fsal_convert.h"

struct pando_fsal_module PandoFSAL = {
	.fsal = {
		.fs_info = {
			.maxfilesize = INT64_MAX,
			.maxlink = NS_LINK_MAX,
			.maxnamelen = NS_NAME_MAX,
			.maxpathlen = MAXPATHLEN,
			.no_trunc = true,
			.chown_restricted = true,
			.case_insensitive = false,
			.case_preserving = true,
			.link_support = true,
			.symlink_support = true,
			/* Ganesha's state layer arbitrates locks (file.c). */
			.lock_support = false,
			.lock_support_async_block = false,
			.named_attr = false,
			.unique_handles = true,
			.acl_support = 0,
			.cansettime = true,
			.homogenous = true,
			.supported_attrs = PANDO_SUPPORTED_ATTRS,
			.maxread = 1u << 20,
			.maxwrite = 1u << 20,
			.umask = 0,
			.auth_exportpath_xdev = false,
			.link_supports_permission_checks = false,
			.readdir_plus = true,
			.expire_time_parent = -1,
			/* flexfiles layouts over the OSDs (mds.c) */
			.pnfs_mds = true,
			.pnfs_ds = false,
		},
	},
};

struct glist_head pando_exports = { &pando_exports, &pando_exports };
pthread_mutex_t pando_exports_lock = PTHREAD_MUTEX_INITIALIZER;

static fsal_status_t pando_init_config(struct fsal_module *m, config_file_t cfg,
				       struct config_error_type *err_type)
{
	display_fsinfo(m);
	pando_dbus_start();
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static void log_to_ganesha(enum mds_log_level level, const char *func, const char *msg)
{
	static const log_levels_t niv[] = {
		[MDS_LOG_CRIT] = NIV_CRIT,   [MDS_LOG_MAJOR] = NIV_MAJ, [MDS_LOG_WARN] = NIV_WARN,
		[MDS_LOG_EVENT] = NIV_EVENT, [MDS_LOG_INFO] = NIV_INFO, [MDS_LOG_DEBUG] = NIV_DEBUG,
	};

	if (component_log_level[COMPONENT_FSAL] >= niv[level])
		DisplayLogComponentLevel(COMPONENT_FSAL, "mds", 0, func, niv[level], "%s", msg);
}

MODULE_INIT void pando_fsal_init(void)
{
	struct fsal_module *m = &PandoFSAL.fsal;

	if (register_fsal(m, PANDO_FSAL_NAME, FSAL_MAJOR_VERSION, FSAL_MINOR_VERSION,
			  FSAL_ID_EXPERIMENTAL) != 0) {
		LogCrit(COMPONENT_FSAL, "pando: FSAL registration failed");
		return;
	}
	mds_log_set_sink(log_to_ganesha);
	m->m_ops.create_export = pando_create_export;
	m->m_ops.init_config = pando_init_config;
	pando_mds_module_ops_init(&m->m_ops);
	pando_handle_ops_init(&PandoFSAL.handle_ops);
}

MODULE_FINI void pando_fsal_fini(void)
{
	if (unregister_fsal(&PandoFSAL.fsal) != 0)
		LogCrit(COMPONENT_FSAL, "pando: FSAL unregistration failed");
	mds_log_set_sink(NULL);
}
