/* The capability file handle (osd-target/src/capability.c) and the
 * AUTH_PANDO credential (ctl_auth.c), the two things the OSD checks
 * before it reads any other byte of a call (and the MAC over the
 * arguments, once it has them).  The input is taken as a
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
	       a->cap_version == b->cap_version && a->expiry == b->expiry && a->holder == b->holder;
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
		.rights = d[0] & 1 ? CAP_RIGHTS_RW : CAP_RIGHTS_READ,
		.key_id = key->id,
		.osd_id = get_be32(d + 1),
		.partition = get_be64(d + 5),
		.object = get_be64(d + 13),
		.cap_version = get_be32(d + 21),
		.expiry = get_be64(d + 25),
		.holder = get_be32(d + 33),
	};
	uint8_t fh[CAPABILITY_SIZE];
	struct capability got;

	capability_mint(key, &cap, fh);
	fuzz_check(capability_verify(key, fh, sizeof(fh), &got) == CAP_VALID &&
			   same_cap(&cap, &got),
		   "a minted handle does not verify to its fields");
}

static struct ctl_auth_msg msg_of(uint32_t xid, uint32_t proc, const uint8_t *cred,
				  const uint8_t *verf, size_t verf_len)
{
	return (struct ctl_auth_msg){ { xid, CTL_AUTH_FLAVOR, 1, proc },
				      CTL_AUTH_FLAVOR,
				      CTL_AUTH_FLAVOR,
				      cred,
				      CTL_AUTH_CRED_LEN,
				      verf,
				      verf_len };
}

/* xid, proc, credential (28 bytes) then verifier, of a call without
 * arguments: whatever the target admits and finds MAC'd must be what
 * signing its decoded fields gives. */
static void cred_as_bytes(const struct ctl_auth_keyring *ring, const uint8_t *d, size_t size)
{
	uint8_t cred[CTL_AUTH_CRED_LEN], verf[CTL_AUTH_VERF_LEN];
	uint32_t xid = get_be32(d), proc = get_be32(d + 4);
	const uint8_t *c = d + 8;
	struct ctl_auth_msg m =
		msg_of(xid, proc, c, c + CTL_AUTH_CRED_LEN, size - 8 - CTL_AUTH_CRED_LEN);
	struct ctl_auth_hdr hdr = m.hdr;
	const struct ctl_auth_key *key;
	struct ctl_auth_cred got;

	if (ctl_auth_admit(ring, &m, get_be64(c + 12), &got, &key) != CTL_AUTH_OK ||
	    ctl_auth_check_args(ring, &m, NULL, 0, &got, &key) != CTL_AUTH_OK)
		return;
	fuzz_check(!ctl_auth_sign(key, &hdr, &got, NULL, 0, cred, verf) &&
			   m.verf_len == CTL_AUTH_VERF_LEN && !memcmp(cred, c, sizeof(cred)) &&
			   !memcmp(verf, m.verf, sizeof(verf)),
		   "an accepted credential is not what signing its fields gives");
}

static void cred_from_fields(const struct ctl_auth_keyring *ring, const uint8_t *d)
{
	struct ctl_auth_cred cred = { .key_id = FUZZ_KEY_ID,
				      .osd_id = FUZZ_OSD_ID,
				      .time_s = get_be64(d),
				      .nonce = get_be64(d + 8) };
	struct ctl_auth_hdr hdr = { get_be32(d + 16), CTL_AUTH_FLAVOR, 1, get_be32(d + 20) };
	struct hmac_piece args = { d, 24 };
	uint8_t c[CTL_AUTH_CRED_LEN], v[CTL_AUTH_VERF_LEN];
	struct ctl_auth_msg m = msg_of(hdr.xid, hdr.proc, c, v, sizeof(v));
	const struct ctl_auth_key *key;
	struct ctl_auth_cred got;

	fuzz_check(!ctl_auth_sign(&ring->keys[0], &hdr, &cred, &args, 1, c, v) &&
			   ctl_auth_admit(ring, &m, cred.time_s, &got, &key) == CTL_AUTH_OK &&
			   ctl_auth_check_args(ring, &m, d, 24, &got, &key) == CTL_AUTH_OK &&
			   got.key_id == cred.key_id && got.osd_id == cred.osd_id &&
			   got.time_s == cred.time_s && got.nonce == cred.nonce,
		   "a signed credential is refused");
	fuzz_check(ctl_auth_check_args(ring, &m, d, 23, &got, &key) == CTL_AUTH_BADVERF,
		   "a call MAC'd over arguments it does not have");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctl_auth_keyring ring;
	struct cluster_key key;

	fuzz_key(&key);
	if (!ring.n && ctl_auth_keyring_init(&ring, &key, FUZZ_OSD_ID))
		abort();
	handle_as_bytes(&key, data, size);
	if (size >= 8 + CTL_AUTH_CRED_LEN)
		cred_as_bytes(&ring, data, size);
	if (size >= 37)
		handle_from_fields(&key, data);
	if (size >= 24)
		cred_from_fields(&ring, data);
	return 0;
}
