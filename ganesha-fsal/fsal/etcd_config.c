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
	};
}

int pando_etcd_client_new(const struct pando_export *exp, int timeout_ms,
			  struct etcd_client **out)
{
	struct etcd_options o;
	int rc;

	pando_etcd_options(exp, timeout_ms, &o);
	rc = etcd_client_new(&o, out);
	if (rc)
		LogCrit(COMPONENT_FSAL, "pando: Etcd = \"%s\": %s", exp->cfg.etcd,
			etcd_strerror(rc));
	return rc;
}
