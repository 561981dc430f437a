/* A planned switchover (`pando mds failover GROUP`): the mgr puts
 *
 *   <Etcd_Prefix>groups/<group>/handover = {"from": name, "term": term}
 *
 * and the active it names, in that term, sees it within poll_ms, deletes
 * it and is told to stop: it stops as on SIGTERM (Ganesha stops serving,
 * the store and the journal close, then it resigns), so a standby reads
 * the journal's end and leads at once, and nothing acknowledged is lost.
 * A request for an earlier term is deleted unheeded: it was for an
 * active gone since.  One for a later term, or another name, is left for
 * whoever it names.  A value that is not a request is logged once per
 * change and ignored. */
#ifndef PANDO_HANDOVER_H
#define PANDO_HANDOVER_H

#include <stdint.h>

struct etcd_options;
struct pando_handover;

/* Called once, from the watcher's thread, when this active is asked to
 * hand over. */
typedef void (*pando_handover_fn)(void *arg);
typedef void (*pando_handover_log)(void *arg, int level, const char *msg); /* 0 info, 1 warn */

struct pando_handover_options {
	const struct etcd_options *etcd; /* copied */
	const char *key;                 /* <prefix>groups/<group>/handover */
	const char *name;                /* this active's Mds_Name */
	int64_t term;                    /* its term */
	int poll_ms;                     /* 0: 250 */
	pando_handover_fn stop;
	pando_handover_log log;
	void *arg;
};

int pando_handover_start(const struct pando_handover_options *opt, struct pando_handover **out);
/* Ends the watcher and joins it; NULL is fine. */
void pando_handover_stop(struct pando_handover *h);

#endif
