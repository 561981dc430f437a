/* AUTH_PANDO version 2, the control protocol's authentication (the wire
 * format is in proto/osd_ctl.x).  Every call is MAC'd with a control key
 * derived for its target from the cluster key, over its header, its
 * credential and its argument bytes; the target checks the header's tag
 * when it admits the call (before reading the arguments), the whole MAC
 * once the arguments are in, and MACs its reply over the results.
 *
 * A MAC that could not be computed never verifies: the functions that
 * compute one return -EIO or CTL_AUTH_ERROR, and nothing falls back to
 * a MAC of zeros. */
#ifndef PANDO_CTL_AUTH_H
#define PANDO_CTL_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hmac.h"
#include "pando/cluster_key.h"

#define CTL_AUTH_FLAVOR 0x50414e44u
#define CTL_AUTH_VERSION 2
#define CTL_AUTH_CRED_LEN 28
#define CTL_AUTH_TAG_LEN 16
#define CTL_AUTH_VERF_LEN (CTL_AUTH_TAG_LEN + HMAC_SHA256_LEN)
#define CTL_AUTH_REPLY_VERF_LEN HMAC_SHA256_LEN
#define CTL_AUTH_MAX_SKEW_S 300

/* One target's control key under one cluster key. */
struct ctl_auth_key {
	uint32_t key_id;
	uint32_t osd_id;
	uint8_t mac_key[HMAC_SHA256_LEN];
};

/* The keys a target accepts: under the current cluster key and, during a
 * rotation, under the previous one. */
struct ctl_auth_keyring {
	struct ctl_auth_key keys[2];
	size_t n;
};

struct ctl_auth_cred {
	uint32_t key_id;
	uint32_t osd_id;
	uint64_t time_s;
	uint64_t nonce;
};

/* The call header fields under the MAC. */
struct ctl_auth_hdr {
	uint32_t xid;
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
};

/* A call's header, credential and verifier as the target received them. */
struct ctl_auth_msg {
	struct ctl_auth_hdr hdr;
	uint32_t cred_flavor;
	uint32_t verf_flavor;
	const uint8_t *cred;
	size_t cred_len;
	const uint8_t *verf;
	size_t verf_len;
};

enum ctl_auth_verdict {
	CTL_AUTH_OK = 0,
	CTL_AUTH_BADCRED,  /* flavor, length or version; a key id not held; another target's */
	CTL_AUTH_REJECTED, /* clock skew beyond CTL_AUTH_MAX_SKEW_S */
	CTL_AUTH_BADVERF,  /* MAC mismatch */
	CTL_AUTH_ERROR,    /* the MAC could not be computed here */
};

/* HMAC-SHA256(secret, "pando-ctl osd " decimal osd_id): a target's control
 * key, which says nothing of the cluster secret.  0 or -EIO. */
int ctl_auth_derive(uint32_t key_id, const uint8_t secret[CLUSTER_KEY_SECRET_LEN], uint32_t osd_id,
		    struct ctl_auth_key *out);
/* A target's keys from its key file.  0 or -EIO. */
int ctl_auth_keyring_init(struct ctl_auth_keyring *ring, const struct cluster_key *key,
			  uint32_t osd_id);

/* Client: the credential and verifier bodies for a call whose encoded
 * arguments are the pieces args[0..nargs) in order (at most 4).  0,
 * -EIO, or -EINVAL for more pieces. */
int ctl_auth_sign(const struct ctl_auth_key *key, const struct ctl_auth_hdr *hdr,
		  const struct ctl_auth_cred *cred, const struct hmac_piece *args, size_t nargs,
		  uint8_t cred_out[CTL_AUTH_CRED_LEN], uint8_t verf_out[CTL_AUTH_VERF_LEN]);

/* Server, at admission: the credential's form, that it names this target
 * and a key held, the header tag, then the time (after the MAC, so a
 * stranger learns nothing of our clock).  On CTL_AUTH_OK *cred and *key
 * are filled; the arguments are still to be checked. */
enum ctl_auth_verdict ctl_auth_admit(const struct ctl_auth_keyring *ring,
				     const struct ctl_auth_msg *m, uint64_t now_s,
				     struct ctl_auth_cred *cred, const struct ctl_auth_key **key);
/* Server, with the arguments: the credential again (the admission's
 * findings are not kept) and the MAC over the whole call. */
enum ctl_auth_verdict ctl_auth_check_args(const struct ctl_auth_keyring *ring,
					  const struct ctl_auth_msg *m, const uint8_t *args,
					  size_t args_len, struct ctl_auth_cred *cred,
					  const struct ctl_auth_key **key);

/* Both sides: the reply verifier over the xid, the call's nonce, the
 * accept_stat and the result bytes (res[0..nres), in order, at most 4).
 * 0, -EIO, or -EINVAL for more pieces. */
int ctl_auth_reply_mac(const struct ctl_auth_key *key, uint32_t xid, uint64_t nonce,
		       uint32_t accept_stat, const struct hmac_piece *res, size_t nres,
		       uint8_t out[CTL_AUTH_REPLY_VERF_LEN]);

#endif
