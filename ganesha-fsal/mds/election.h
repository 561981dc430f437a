/* Leadership of a manager group: a thread campaigns for one etcd key and
 * keeps it while it leads.
 *
 * The leader holds key = value under a lease of its own, created with a
 * txn that fails when the key exists.  Its term is the key's revision at
 * creation, which etcd raises with every write, so a term names one
 * leadership for ever and a newer leader's term is always higher: what
 * the leader writes (journal records, OSD capability versions) carries
 * it, and whatever carries a lower term is fenced.
 *
 * A leader that has not renewed its lease for ttl/2 stops leading at
 * once, well before etcd can expire the lease and let another take over:
 * unsure, it assumes it lost.  A leader also stops when the key is no
 * longer its own (deleted, or resigned), but only at its next poll: a
 * key deleted under a live lease lets another win while this one still
 * leads, so only resigning hands leadership over safely.
 * Followers read the key every poll_ms and campaign when it is gone. */
#ifndef PANDO_ELECTION_H
#define PANDO_ELECTION_H

#include <stdbool.h>
#include <stdint.h>

struct etcd_options;
struct pando_election;

/* Called from the election's thread whenever what it knows changes:
 * whether this one leads, and the current leader's term and value (0 and
 * "" when there is none). */
typedef void (*pando_election_fn)(void *arg, bool leading, int64_t term, const char *leader);
typedef void (*pando_election_log)(void *arg, int level, const char *msg); /* 0 info, 1 warn */

struct pando_election_options {
	const struct etcd_options *etcd; /* copied; each exchange is bounded at 1 s */
	const char *key;
	const char *value; /* who campaigns: the others and the mgr read it */
	int ttl_s;         /* the lease; 0: 5 */
	int poll_ms;       /* 0: 250 */
	pando_election_fn changed;
	pando_election_log log;
	void *arg;
};

int pando_election_start(const struct pando_election_options *opt, struct pando_election **out);
/* Whether this one leads now and is sure of it (renewed within TTL/2,
 * checked at the call, whatever the thread is doing); *term (may be
 * NULL) gets its term. */
bool pando_election_leading(struct pando_election *e, int64_t *term);
/* Gives up leadership now, if held (its key deleted, its lease revoked),
 * and campaigns again only after hold_ms: a planned switchover, where
 * another should win. */
void pando_election_resign(struct pando_election *e, int hold_ms);
/* Resigns if leading, and ends the thread. */
void pando_election_stop(struct pando_election *e);

#endif
