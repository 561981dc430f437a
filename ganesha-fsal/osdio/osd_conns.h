/* Connections from a metadata manager to every OSD of the cluster maps
 * it has held (cluster.conf's seed and each map from etcd since), and
 * what it has seen of each OSD's health.
 *
 * Each OSD gets a few control-protocol connections, opened on first use
 * and reopened after a transport error; a call takes one (round robin)
 * and the client library serialises calls on it.  Every call's result
 * updates the OSD's state: a transport error marks it unreachable, any
 * answer marks it reachable.  After a failed connect or a timeout, calls
 * to the OSD fail at once with -EHOSTDOWN for a short back-off, so a dead
 * mirror costs a failed connect per back-off period rather than per
 * request; a broken connection (the OSD restarted) does not back off. */
#ifndef PANDO_OSD_CONNS_H
#define PANDO_OSD_CONNS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cluster_map.h"
#include "pando/cluster_key.h"
#include "pando/osd_ctl_client.h"

struct osd_conns;

struct osd_conns_options {
	int conns_per_osd; /* 0: 4 */
	int timeout_ms;    /* per call; 0: 10000 */
	int backoff_ms;    /* how long a failure keeps an OSD marked down; 0: 2000 */
};

struct osd_health {
	uint32_t id;
	bool reachable; /* the last call got an answer (true before any) */
	int last_error; /* -errno of the last transport failure, 0 if none */
	uint64_t calls;
	uint64_t failures;
	time_t last_change; /* when reachable last flipped (0: never) */
};

/* A connection pool for map's OSDs, signing with key (both copied). */
int osd_conns_new(const struct cluster_key *key, const struct cluster_map *map,
		  const struct osd_conns_options *opt, struct osd_conns **out);
void osd_conns_free(struct osd_conns *p);
/* An OSD joins (the cluster map grew), or a known one takes new
 * addresses.  Safe while other threads use the connection pool: OSDs are never
 * removed, indexes never change.  -ENOSPC past CLUSTER_MAP_MAX_OSDS. */
int osd_conns_add(struct osd_conns *p, const struct cluster_map_osd *o);
/* A new cluster key (a rotation): the connections open now are retired,
 * so every connection osd_conns_get hands out once this returns signs
 * with the new key.  0, or -ENOMEM when some OSD's connections could not
 * be retired (they go on signing with the old key). */
int osd_conns_rekey(struct osd_conns *p, const struct cluster_key *key);

/* A connection to OSD id for one call, or NULL with *err (-ENOENT: not in
 * the connection pool; -EHOSTDOWN: backing off; what connect said). */
struct osd_ctl_client *osd_conns_get(struct osd_conns *p, uint32_t id, int *err);
/* Records the result of a call made on a connection from osd_conns_get. */
void osd_conns_result(struct osd_conns *p, uint32_t id, int rc);

/* One call on OSD id: fn(c, arg) on a connection of the pool, its result
 * recorded.  A call that finds its connection lost is made again, on each
 * pooled connection in turn and then a reconnected one (at most
 * osd_conns_per_osd + 1 tries): the OSD may only have restarted, and the
 * library reconnects on a connection's next call.  So fn must be
 * idempotent (a write at an offset, a create or remove of a named object,
 * a flush, a read).  What fn returned last, or why no connection could be
 * had (osd_conns_get). */
typedef int (*osd_conns_fn)(struct osd_ctl_client *c, void *arg);
int osd_conns_call(struct osd_conns *p, uint32_t id, osd_conns_fn fn, void *arg);
/* osd_conns_call with at most `tries` tries instead of the pool's
 * number, for a caller that handles a lost connection itself (pando-fsck
 * makes one try: an OSD that does not answer is what it reports).
 * -EINVAL when tries < 1. */
int osd_conns_call_tries(struct osd_conns *p, uint32_t id, int tries, osd_conns_fn fn, void *arg);
/* True for the errors that say the OSD, not the request, failed. */
bool osd_conns_is_transport_error(int rc);

/* Records the write verifier an OSD answered with; true when it differs
 * from the one seen before (the OSD restarted, or one of its syncs
 * failed, and it may have lost unstable writes: the manager must change
 * its own verifier so clients resend). */
bool osd_conns_note_verf(struct osd_conns *p, uint32_t id, const uint8_t verf[8]);

/* Errors of a connection that was open: the peer went away, perhaps only
 * restarted; the connection's next call reconnects and finds out. */
bool osd_conns_lost_connection(int rc);
/* A NULL call (reachability and the key), past broken connections as a
 * restarted OSD leaves them; the result is recorded. */
int osd_conns_ping(struct osd_conns *p, uint32_t id);
/* How many connections each OSD gets. */
int osd_conns_per_osd(const struct osd_conns *p);

/* OSDs are indexed 0..count-1 in the order they joined. */
size_t osd_conns_count(const struct osd_conns *p);
void osd_conns_health(struct osd_conns *p, size_t i, struct osd_health *out);
/* Whether the last call to OSD id got an answer; false for an id the
 * connection pool does not know. */
bool osd_conns_reachable(struct osd_conns *p, uint32_t id);
/* The addresses OSD i is reached at now. */
void osd_conns_address(struct osd_conns *p, size_t i, struct cluster_map_osd *out);

#endif
