/* Reclaim records: the NFSv4 clients of a manager group that may reclaim
 * their opens and locks on whichever member is active next (what
 * Ganesha's recovery backends keep on the server's own disk), in etcd
 * beside the group's election, one key per client:
 *
 *   <prefix><term>.<id> = {"tag": "...", "revoked": ["...", ...]}
 *
 * term: the term of the active that gave the client its id (16 hex
 * digits), id: that client id (16 hex digits), tag: who the client is,
 * as the server compares it at reclaim (its address and owner), revoked:
 * the handles whose delegations were revoked from it, which it may not
 * reclaim.  An active writes its clients' records under its own term;
 * the next one reads every record when its grace period starts (the
 * newest of each tag once: a client that reclaimed already has one of a
 * later term) and, when it ends, removes those of earlier terms.
 *
 * Records are read from etcd, so each is checked: a tag of 1 to
 * RECLAIM_TAG_MAX bytes, at most RECLAIM_REVOKED_MAX handles of 1 to
 * RECLAIM_HANDLE_MAX bytes; a record that is none of that is skipped and
 * counted.  Every call returns 0 or a negative errno (etcd_client.h's). */
#ifndef PANDO_RECLAIM_H
#define PANDO_RECLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECLAIM_TAG_MAX 4095
#define RECLAIM_HANDLE_MAX 254
#define RECLAIM_REVOKED_MAX 1024

struct etcd_options;
struct pando_reclaim;

struct pando_reclaim_options {
	const struct etcd_options *etcd; /* copied */
	const char *prefix;              /* <Etcd_Prefix>groups/<group>/clients/ */
	uint64_t term;                   /* this active's */
};

int pando_reclaim_open(const struct pando_reclaim_options *opt, struct pando_reclaim **out);
void pando_reclaim_close(struct pando_reclaim *r);

/* The record of client id, given in this term; replaces one there was. */
int pando_reclaim_add(struct pando_reclaim *r, uint64_t id, const char *tag);
int pando_reclaim_remove(struct pando_reclaim *r, uint64_t id);
/* Adds handle to the revoked of client id's record (-ENOENT: none). */
int pando_reclaim_revoke(struct pando_reclaim *r, uint64_t id, const char *handle);

/* Called once per client that may reclaim, with its revoked handles;
 * everything is valid during the call only.  Non-zero stops the read,
 * which returns it. */
typedef int (*pando_reclaim_fn)(void *arg, const char *tag, const char *const *revoked,
				size_t n_revoked);
/* Every record, the newest of each tag once; *skipped (may be NULL)
 * gets how many did not parse. */
int pando_reclaim_read(struct pando_reclaim *r, pando_reclaim_fn fn, void *arg, size_t *skipped);
/* Removes the records of earlier terms, and any other key under the
 * prefix that sorts below this term's, in one request; *removed (may be
 * NULL) gets how many. */
int pando_reclaim_end_grace(struct pando_reclaim *r, size_t *removed);

/* Whether key (under prefix) and value[len] are a record, as a read
 * checks each: 0 and its term, or -EINVAL. */
int pando_reclaim_record_check(const char *prefix, const char *key, const char *value, size_t len,
			       uint64_t *term);

/* NSM hosts.  The NFSv3 hosts that hold locks are records of the same
 * shape under their own prefix (<Etcd_Prefix>groups/<group>/nsm/): the
 * tag is the host's name as NSM monitors it (mon_name), the id
 * pando_reclaim_host_id of it.  The next active writes each as statd
 * would into its notify list, for sm-notify to tell and for its grace
 * period to wait for; so a name must be one statd takes as a file name
 * and a word of its record line: 1 to RECLAIM_HOST_MAX printable ASCII
 * bytes, no space or '/', not starting with '.'. */
#define RECLAIM_HOST_MAX 255

bool pando_reclaim_host_name_ok(const char *name);
/* The id of a host's record (FNV-1a): names that collide share one. */
uint64_t pando_reclaim_host_id(const char *name);
/* statd's record of a host it monitors for the local NLM (nfs-utils'
 * file format: callback address 127.0.0.1, NLM program, version 4,
 * procedure 16, no private data, then mon_name and my_name) in buf[len]:
 * its length, or -ENAMETOOLONG when it does not fit or either name is
 * not a host name as above. */
int pando_reclaim_host_record(const char *name, const char *my_name, char *buf, size_t len);

#endif
