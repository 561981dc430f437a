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

#include <stddef.h>
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

/* What a value at the handover key asks of the active `name` in `term`.
 * Only {"from": a name, "term": an integer}, at most
 * PANDO_HANDOVER_VALUE_MAX bytes, is a request; it is for `name` only if
 * "from" is that very name, NUL and all. */
#define PANDO_HANDOVER_VALUE_MAX 1024

enum pando_handover_request {
	PANDO_HANDOVER_NONE,        /* not a request */
	PANDO_HANDOVER_FOR_ME,      /* this name, this term */
	PANDO_HANDOVER_STALE,       /* an earlier term: an active gone since */
	PANDO_HANDOVER_FOR_ANOTHER, /* another name, or a later term */
};

enum pando_handover_request pando_handover_classify(const char *name, int64_t term,
						    const char *value, size_t len);

int pando_handover_start(const struct pando_handover_options *opt, struct pando_handover **out);
/* Ends the watcher and joins it; NULL is fine. */
void pando_handover_stop(struct pando_handover *h);

#endif
