/* pando-osd-tool's cluster key and connection to the target. */
#include <errno.h>
#include <string.h>

#include "osd_tool.h"

int load_key(struct tool *t)
{
	const char *why = NULL;
	int rc;

	if (!t->key_file) {
		fail(t, "needs --key-file FILE (the cluster key)");
		return -1;
	}
	rc = cluster_key_load(t->key_file, &t->key, &why);
	if (rc) {
		fail(t, "cannot load key file %s: %s", t->key_file, why ? why : strerror(-rc));
		return -1;
	}
	return 0;
}

/* Connects and pings with AUTH_PANDO, so that an unreachable target or a
 * wrong key is reported as such rather than as the command's failure. */
int connect_target(struct tool *t)
{
	const char *ctl = t->ctl ? t->ctl : DEFAULT_CTL;
	int rc;

	if (load_key(t))
		return -1;
	t->client = osd_ctl_connect(ctl, &t->key, t->osd_id, t->timeout_ms, &rc);
	if (!t->client) {
		if (rc == -EINVAL)
			fail(t, "--ctl wants HOST:PORT, not '%s'", ctl);
		else
			fail(t, "cannot connect to %s: %s", ctl, strerror(-rc));
		return -1;
	}
	rc = osd_ctl_null(t->client);
	if (rc == -EACCES)
		fail(t,
		     "%s refused our credential: not osd %u (see --osd-id), another cluster "
		     "key (id %u), or clocks more than 300 s apart",
		     ctl, t->osd_id, t->key.id);
	else if (rc == -EPROTO)
		fail(t,
		     "%s answered with a wrong verifier: it does not hold our cluster key, "
		     "or is not a pando-osd control port",
		     ctl);
	else if (rc)
		fail(t, "%s: %s", ctl, strerror(-rc));
	return rc ? -1 : 0;
}
