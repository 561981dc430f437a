/* AUTH_PANDO: the control protocol's credential (see proto/osd_ctl.x).
 * The client side fills a credential and verifier for a call; the server
 * side checks them and builds the reply verifier. */
#ifndef PANDO_CTL_AUTH_H
#define PANDO_CTL_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pando/cluster_key.h"

#define CTL_AUTH_FLAVOR 0x50414e44u
#define CTL_AUTH_CRED_LEN 20
#define CTL_AUTH_VERF_LEN 32
#define CTL_AUTH_REPLY_VERF_LEN 16
#define CTL_AUTH_MAX_SKEW_S 300

struct ctl_auth_cred {
	uint32_t key_id;
	uint64_t time_s;
	uint64_t nonce;
};

enum ctl_auth_verdict {
	CTL_AUTH_OK = 0,
	CTL_AUTH_BADCRED,      /* wrong flavor or length, unknown key id */
	CTL_AUTH_REJECTED,     /* clock skew beyond CTL_AUTH_MAX_SKEW_S */
	CTL_AUTH_BADVERF,      /* MAC mismatch */
};

/* Client: encodes cred (CTL_AUTH_CRED_LEN bytes) and the call verifier
 * (CTL_AUTH_VERF_LEN bytes) for the given call header fields. */
void ctl_auth_sign(const struct cluster_key *key, uint32_t xid, uint32_t prog,
		   uint32_t vers, uint32_t proc, const struct ctl_auth_cred *cred,
		   uint8_t cred_out[CTL_AUTH_CRED_LEN], uint8_t verf_out[CTL_AUTH_VERF_LEN]);

/* Server: checks a call's credential and verifier bodies. */
enum ctl_auth_verdict ctl_auth_check(const struct cluster_key *key, uint32_t xid,
				     uint32_t prog, uint32_t vers, uint32_t proc,
				     uint32_t cred_flavor, const uint8_t *cred, size_t cred_len,
				     uint32_t verf_flavor, const uint8_t *verf, size_t verf_len,
				     uint64_t now_s, struct ctl_auth_cred *out);

/* Both sides: the reply verifier for a call's xid and nonce. */
void ctl_auth_reply_verf(const struct cluster_key *key, uint32_t xid, uint64_t nonce,
			 uint8_t out[CTL_AUTH_REPLY_VERF_LEN]);

#endif
