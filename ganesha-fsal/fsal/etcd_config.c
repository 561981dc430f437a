/* The etcd settings of an export, in one place: every etcd client of the
 * FSAL (the map watch, the presence, rebuild, scrub, the transcoder) is
 * made from the same options, so none of them talks to etcd otherwise
 * than the Etcd* items say. */
#include "pando_fsal.h"

#include "etcd_client.h"

void pando_etcd_options(const struct pando_export *exp, int timeout_ms, struct etcd_options *o)
{
	*o = (struct etcd_options){
		.endpoints = exp->cfg.etcd,
		.timeout_ms = timeout_ms,
		.ca_file = exp->cfg.etcd_ca,
		.user = exp->cfg.etcd_user,
		.password_file = exp->cfg.etcd_password_file,
	};
}

void pando_etcd_new_failed(const struct pando_export *exp, const char *what, int rc)
{
	const struct pando_export_config *cfg = &exp->cfg;

	if (rc == -EPERM || rc == -EBADMSG)
		LogCrit(COMPONENT_FSAL, "pando: %s: Etcd_Password_File = \"%s\": %s", what,
			cfg->etcd_password_file, etcd_strerror(rc));
	else if (rc == -EINVAL && !cfg->etcd_user[0] != !cfg->etcd_password_file[0])
		LogCrit(COMPONENT_FSAL, "pando: %s: Etcd_User and Etcd_Password_File go together",
			what);
	else if (rc == -EINVAL)
		LogCrit(COMPONENT_FSAL, "pando: %s: Etcd = \"%s\": %s", what, cfg->etcd,
			etcd_strerror(rc));
	else if (rc == -ENOMEM)
		LogCrit(COMPONENT_FSAL, "pando: %s: %s", what, strerror(-rc));
	else /* a file that cannot be opened */
		LogCrit(COMPONENT_FSAL,
			"pando: %s: Etcd_CA = \"%s\", Etcd_Password_File = \"%s\": %s", what,
			cfg->etcd_ca, cfg->etcd_password_file, strerror(-rc));
}

int pando_etcd_client_new(const struct pando_export *exp, int timeout_ms, const char *what,
			  struct etcd_client **out)
{
	struct etcd_options o;
	int rc;

	pando_etcd_options(exp, timeout_ms, &o);
	rc = etcd_client_new(&o, out);
	if (rc)
		pando_etcd_new_failed(exp, what, rc);
	return rc;
}
