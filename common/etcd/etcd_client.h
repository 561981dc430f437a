/* A small blocking client for etcd v3's JSON gateway (HTTP/1.1, over TLS
 * or not), enough for the C daemons: read a key, put a key under a lease,
 * and keep a lease alive.  Endpoints are tried in turn; the one that last
 * answered is tried first.  Thread-safe: one call at a time per client (a
 * mutex); make one client per thread that needs its own pace.
 *
 * Keys and values are byte strings (base64 on the wire, handled here).
 * Every function returns 0 or a negative errno:
 *   -ENOENT        the key (or the lease) does not exist
 *   -EHOSTUNREACH  no endpoint answered within the timeout
 *   -EPROTO        an endpoint answered with something that is not etcd,
 *                  or is not the one its certificate should say (https)
 *   -EACCES        etcd refused: permission denied, or credentials
 *   -EINVAL        bad arguments (an endpoint list that does not parse)
 *   -ENOMEM
 * Nothing here logs: callers say what failed, once. */
#ifndef PANDO_ETCD_CLIENT_H
#define PANDO_ETCD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct etcd_client;

struct etcd_options {
	/* "https://HOST:PORT[,...]" or http://; scheme may be left out (= http) */
	const char *endpoints;
	int timeout_ms; /* bounds each exchange; 0: 2000 */
	/* PEM CA that signs the members' certificates (https); NULL/"": the
	 * system's store.  When given, it is the only one trusted. */
	const char *ca_file;
	const char *user; /* etcd user; NULL/"": no authentication */
	/* the user's password: a file of one line, owned by the caller, mode
	 * 0600 or stricter; read once, by etcd_client_new, and kept (for the
	 * new tokens etcd asks for) until etcd_client_free zeroes it */
	const char *password_file;
};

/* Copies what it needs of opt.  Besides -EINVAL (endpoints that do not
 * parse, a user without a password file or the other way round) and
 * -ENOMEM:
 *   -EPERM    the password file is not a regular file of the caller's,
 *             or group or others may read or write it (or it is a symlink)
 *   -EBADMSG  the password file is empty, or more than one line
 *   the -errno of a ca_file or password_file it cannot open. */
int etcd_client_new(const struct etcd_options *opt, struct etcd_client **out);
void etcd_client_free(struct etcd_client *c);

/* The value of key (malloc'd, NUL-terminated for convenience, *len bytes
 * without the NUL) and its mod_revision (may be NULL). */
int etcd_get(struct etcd_client *c, const char *key, char **value, size_t *len,
	     int64_t *mod_revision);
/* Puts key = value[len], attached to lease (0: none). */
int etcd_put(struct etcd_client *c, const char *key, const void *value, size_t len, int64_t lease);
int etcd_delete(struct etcd_client *c, const char *key);
/* Deletes every key in [key, end) in one request; *deleted (may be NULL)
 * gets how many (0 is no error). */
int etcd_delete_range(struct etcd_client *c, const char *key, const char *end, int64_t *deleted);
/* Every key that starts with prefix, in key order, at most limit of them
 * (0: all): fn gets each key, value (NUL-terminated, valid during the
 * call) and mod_revision, and returns non-zero to stop, which etcd_list
 * returns.  count (may be NULL) gets how many keys have the prefix, past
 * the limit too. */
typedef int (*etcd_kv_fn)(void *arg, const char *key, const char *value, size_t len,
			  int64_t mod_revision);
int etcd_list(struct etcd_client *c, const char *prefix, int64_t limit, etcd_kv_fn fn, void *arg,
	      int64_t *count);
/* Puts key = value[len] under lease (0: none) only if key does not exist
 * (one txn): -EEXIST if it does.  How a worker claims a task. */
int etcd_create(struct etcd_client *c, const char *key, const void *value, size_t len,
		int64_t lease);
/* Deletes key only if it was not written since mod_revision (one txn):
 * -EEXIST if it was (or it is gone).  How a worker ends the task it ran
 * without deleting one put again meanwhile. */
int etcd_delete_if(struct etcd_client *c, const char *key, int64_t mod_revision);
/* Puts key = value[len] only if it was not written since mod_revision
 * (one txn): -EEXIST if it was, or is gone.  How a value read, changed
 * and put back does not undo a write or a delete made meanwhile. */
int etcd_put_if(struct etcd_client *c, const char *key, const void *value, size_t len,
		int64_t mod_revision);

int etcd_lease_grant(struct etcd_client *c, int ttl_s, int64_t *lease);
/* Renews the lease; -ENOENT when it has expired (grant a new one). */
int etcd_lease_keepalive(struct etcd_client *c, int64_t lease, int64_t *ttl_left);
int etcd_lease_revoke(struct etcd_client *c, int64_t lease);
/* Keeps *lease alive: renews it, or grants a new one of ttl_s when there
 * is none or it has expired (then *lease changes: keys put under the old
 * one are gone). */
int etcd_lease_keep(struct etcd_client *c, int ttl_s, int64_t *lease);

/* The endpoint that answered last ("https://HOST:PORT"), for log lines. */
const char *etcd_client_endpoint(const struct etcd_client *c);
/* What an error of these functions means, in words for a log line. */
const char *etcd_strerror(int err);

/* Presence: a key kept alive under a lease by a thread of its own.
 * Grants a lease of ttl_s, renews it every ttl_s/4 seconds, and puts
 * key = fill(arg) (a malloc'd NUL-terminated JSON value the callee
 * frees) at start and every interval_s seconds; when the lease has
 * expired (etcd unreachable for longer than the TTL) it grants a new one
 * and puts again.  etcd being away never blocks the caller: the thread
 * retries every second.  presence_stop revokes the lease (the key goes
 * at once: a clean stop is seen as one) and joins the thread. */
struct etcd_presence;
typedef char *(*etcd_presence_fill)(void *arg);
typedef void (*etcd_presence_log)(void *arg, int level,
				  const char *msg); /* level: 0 info, 1 warn */

struct etcd_presence_options {
	/* copied at start; its timeout_ms is not used: each exchange of the
	 * thread is bounded by 1 s, well under a renewal period */
	const struct etcd_options *etcd;
	const char *key;
	int ttl_s;      /* 0: 5 */
	int interval_s; /* 0: 2 */
	etcd_presence_fill fill;
	/* state changes only: registered, lost etcd, etcd refused, back */
	etcd_presence_log log;
	void *arg;
};

int etcd_presence_start(const struct etcd_presence_options *opt, struct etcd_presence **out);
void etcd_presence_stop(struct etcd_presence *p);
/* Puts the key now (outside the interval), e.g. after a state change. */
void etcd_presence_kick(struct etcd_presence *p);

#endif
