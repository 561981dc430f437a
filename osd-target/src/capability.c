#include "pando/capability.h"

#include <string.h>

#include "byteorder.h"
#include "hmac.h"

#define CAP_SIGNED_LEN 40

static int rights_valid(uint8_t r)
{
	return r == CAP_RIGHTS_READ || r == CAP_RIGHTS_RW;
}

static int cap_mac(const uint8_t *secret, const uint8_t *signed_bytes, uint8_t mac[HMAC_SHA256_LEN])
{
	struct hmac_piece piece = { signed_bytes, CAP_SIGNED_LEN };

	return hmac_sha256(secret, CLUSTER_KEY_SECRET_LEN, &piece, 1, mac);
}

void capability_mint(const struct cluster_key *key, const struct capability *cap,
		     uint8_t out[CAPABILITY_SIZE])
{
	uint8_t mac[HMAC_SHA256_LEN];

	out[0] = CAPABILITY_FORMAT;
	out[1] = cap->rights;
	put_be16(out + 2, key->id);
	put_be32(out + 4, cap->osd_id);
	put_be64(out + 8, cap->partition);
	put_be64(out + 16, cap->object);
	put_be32(out + 24, cap->cap_version);
	put_be64(out + 28, cap->expiry);
	put_be32(out + 36, cap->holder);
	/* A failed HMAC leaves zeros, which no target takes for a MAC: it
	 * computes its own and never accepts on a failure. */
	if (cap_mac(key->secret, out, mac))
		memset(mac, 0, sizeof(mac));
	memcpy(out + CAP_SIGNED_LEN, mac, CAPABILITY_MAC_LEN);
}

enum cap_verdict capability_verify(const struct cluster_key *key, const uint8_t *fh, size_t len,
				   struct capability *cap)
{
	uint8_t mac[HMAC_SHA256_LEN];
	const uint8_t *secret;

	if (len != CAPABILITY_SIZE || fh[0] != CAPABILITY_FORMAT || !rights_valid(fh[1]))
		return CAP_MALFORMED;
	/* The current key, or the previous one during a rotation: handles
	 * minted before the managers switched keys stay good until then. */
	secret = cluster_key_secret(key, get_be16(fh + 2));
	if (!secret)
		return CAP_UNKNOWN_KEY;
	if (cap_mac(secret, fh, mac) || !hmac_equal(mac, fh + CAP_SIGNED_LEN, CAPABILITY_MAC_LEN))
		return CAP_BAD_MAC;
	cap->rights = fh[1];
	cap->key_id = get_be16(fh + 2);
	cap->osd_id = get_be32(fh + 4);
	cap->partition = get_be64(fh + 8);
	cap->object = get_be64(fh + 16);
	cap->cap_version = get_be32(fh + 24);
	cap->expiry = get_be64(fh + 28);
	cap->holder = get_be32(fh + 36);
	return CAP_VALID;
}

const char *cap_verdict_name(enum cap_verdict v)
{
	switch (v) {
	case CAP_VALID:
		return "valid";
	case CAP_MALFORMED:
		return "malformed";
	case CAP_UNKNOWN_KEY:
		return "unknown key";
	case CAP_BAD_MAC:
		return "bad MAC";
	}
	return "?";
}
