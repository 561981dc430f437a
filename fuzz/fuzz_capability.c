/* The capability file handle (osd-target/src/capability.c) and the
 * AUTH_PANDO credential (ctl_auth.c), the two things the OSD checks
 * before it reads any other byte of a call.  The input is taken as a
 * handle and as a credential and verifier; whatever verifies must be
 * exactly what minting (signing) its decoded fields gives.  Then the
 * input's bytes are used as fields: minted, they must verify and decode
 * to the same fields. */
#include <string.h>

#include "byteorder.h"
#include "ctl_auth.h"
#include "fuzz.h"
#include "osd_fixture.h"
#include "pando/capability.h"

static bool same_cap(const struct capability *a, const struct capability *b)
{
	return a->rights == b->rights && a->key_id == b->key_id && a->osd_id == b->osd_id &&
	       a->partition == b->partition && a->object == b->object &&
	       a->cap_version == b->cap_version && a->expiry == b->expiry;
}

static void handle_as_bytes(const struct cluster_key *key, const uint8_t *data, size_t size)
{
	uint8_t again[CAPABILITY_SIZE];
	struct capability cap;

	if (capability_verify(key, data, size, &cap) != CAP_VALID)
		return;
	capability_mint(key, &cap, again);
	fuzz_check(size == CAPABILITY_SIZE && !memcmp(again, data, size),
		   "a verified handle is not what its fields mint");
}

static void handle_from_fields(const struct cluster_key *key, const uint8_t *d)
{
	struct capability cap = {
		.rights = d[0] & 1 ? CAP_RIGHTS_RW : CAP_RIGHTS_READ, .key_id = key->id,
		.osd_id = get_be32(d + 1), .partition = get_be64(d + 5), .object = get_be64(d + 13),
		.cap_version = get_be32(d + 21), .expiry = get_be64(d + 25),
	};
	uint8_t fh[CAPABILITY_SIZE];
	struct capability got;

	capability_mint(key, &cap, fh);
	fuzz_check(capability_verify(key, fh, sizeof(fh), &got) == CAP_VALID && same_cap(&cap, &got),
		   "a minted handle does not verify to its fields");
}

/* Credential (20 bytes) then verifier (32), the call's numbers in d. */
static void cred_as_bytes(const struct cluster_key *key, const uint8_t *d, size_t size)
{
	uint8_t cred[CTL_AUTH_CRED_LEN], verf[CTL_AUTH_VERF_LEN];
	uint32_t xid = get_be32(d), proc = get_be32(d + 4);
	const uint8_t *c = d + 8;
	struct ctl_auth_cred got;
	enum ctl_auth_verdict v;

	v = ctl_auth_check(key, xid, CTL_AUTH_FLAVOR, 1, proc, CTL_AUTH_FLAVOR, c,
			   CTL_AUTH_CRED_LEN, CTL_AUTH_FLAVOR, c + CTL_AUTH_CRED_LEN,
			   size - 8 - CTL_AUTH_CRED_LEN, get_be64(c + 4), &got);
	if (v != CTL_AUTH_OK)
		return;
	ctl_auth_sign(key, xid, CTL_AUTH_FLAVOR, 1, proc, &got, cred, verf);
	fuzz_check(size - 8 - CTL_AUTH_CRED_LEN == CTL_AUTH_VERF_LEN &&
		   !memcmp(cred, c, sizeof(cred)) && !memcmp(verf, c + sizeof(cred), sizeof(verf)),
		   "an accepted credential is not what signing its fields gives");
}

static void cred_from_fields(const struct cluster_key *key, const uint8_t *d)
{
	struct ctl_auth_cred cred = { .key_id = key->id, .time_s = get_be64(d),
				      .nonce = get_be64(d + 8) };
	uint8_t c[CTL_AUTH_CRED_LEN], v[CTL_AUTH_VERF_LEN];
	uint32_t xid = get_be32(d + 16), proc = get_be32(d + 20);
	struct ctl_auth_cred got;

	ctl_auth_sign(key, xid, CTL_AUTH_FLAVOR, 1, proc, &cred, c, v);
	fuzz_check(ctl_auth_check(key, xid, CTL_AUTH_FLAVOR, 1, proc, CTL_AUTH_FLAVOR, c, sizeof(c),
				  CTL_AUTH_FLAVOR, v, sizeof(v), cred.time_s, &got) == CTL_AUTH_OK &&
		   got.key_id == cred.key_id && got.time_s == cred.time_s && got.nonce == cred.nonce,
		   "a signed credential is refused");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cluster_key key;

	fuzz_key(&key);
	handle_as_bytes(&key, data, size);
	if (size >= 8 + CTL_AUTH_CRED_LEN)
		cred_as_bytes(&key, data, size);
	if (size >= 33)
		handle_from_fields(&key, data);
	if (size >= 24)
		cred_from_fields(&key, data);
	return 0;
}
