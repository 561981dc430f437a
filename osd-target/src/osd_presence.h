/* pando-osd's presence in etcd (mgr/README.md "OSD presence"): the key
 * <etcd_prefix>osd/<id> kept alive under a lease, its value what the
 * target says of itself (addresses, statfs, counters).  A thread of
 * common/etcd does the talking, so etcd being away never slows the data
 * path or the start. */
#ifndef PANDO_OSD_PRESENCE_H
#define PANDO_OSD_PRESENCE_H

#include "osd.h"
#include "osd_config.h"

struct osd_presence;

/* Starts the presence when cfg->etcd is set (else *out = NULL and 0).
 * nfs and ctl are the addresses actually bound.  Fails, saying why in
 * the log, on etcd settings that cannot work (an endpoint list that does
 * not parse, a CA file that is not there); nothing here waits for etcd. */
int osd_presence_start(const struct osd_config *cfg, struct osd_ctx *ctx, const char *nfs,
		       const char *ctl, struct osd_presence **out);
/* Revokes the lease (the key goes at once) and stops the thread. */
void osd_presence_stop(struct osd_presence *p);

/* The JSON value of the key as it stands now (malloc'd), for tests too. */
char *osd_presence_value(struct osd_presence *p);

#endif
