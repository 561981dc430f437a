/* The etcd settings of the engine, in one place: every etcd client of
 * the engine (the map watch, the presence, rebuild, scrub, the transcoder) is
 * made from the same options, so none of them talks to etcd otherwise
 * than the Etcd* items say. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_client.h"

void pando_etcd_options(const struct pando_mds *mds, int timeout_ms, struct etcd_options *o)
{
	*o = (struct etcd_options){
		.endpoints = mds->cfg.etcd,
		.timeout_ms = timeout_ms,
		.ca_file = mds->cfg.etcd_ca,
		.user = mds->cfg.etcd_user,
		.password_file = mds->cfg.etcd_password_file,
	};
}

void pando_etcd_new_failed(const struct pando_mds *mds, const char *what, int rc)
{
	const struct pando_mds_config *cfg = &mds->cfg;

	if (rc == -EPERM || rc == -EBADMSG)
		mds_log(MDS_LOG_CRIT, __func__, "pando: %s: Etcd_Password_File = \"%s\": %s", what,
			cfg->etcd_password_file, etcd_strerror(rc));
	else if (rc == -EINVAL && !cfg->etcd_user[0] != !cfg->etcd_password_file[0])
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: %s: Etcd_User and Etcd_Password_File go together", what);
	else if (rc == -EINVAL)
		mds_log(MDS_LOG_CRIT, __func__, "pando: %s: Etcd = \"%s\": %s", what, cfg->etcd,
			etcd_strerror(rc));
	else if (rc == -ENOMEM)
		mds_log(MDS_LOG_CRIT, __func__, "pando: %s: %s", what, strerror(-rc));
	else /* a file that cannot be opened */
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: %s: Etcd_CA = \"%s\", Etcd_Password_File = \"%s\": %s", what,
			cfg->etcd_ca, cfg->etcd_password_file, strerror(-rc));
}

int pando_etcd_client_new(const struct pando_mds *mds, int timeout_ms, const char *what,
			  struct etcd_client **out)
{
	struct etcd_options o;
	int rc;

	pando_etcd_options(mds, timeout_ms, &o);
	rc = etcd_client_new(&o, out);
	if (rc)
		pando_etcd_new_failed(mds, what, rc);
	return rc;
}

void pando_mds_name(const struct pando_mds *mds, char *buf, size_t cap)
{
	if (mds->cfg.mds_name[0])
		snprintf(buf, cap, "%s", mds->cfg.mds_name);
	else if (gethostname(buf, cap - 1) != 0)
		snprintf(buf, cap, "mds");
	else
		buf[cap - 1] = '\0';
}
