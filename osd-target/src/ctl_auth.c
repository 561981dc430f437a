#include "ctl_auth.h"

#include <string.h>

#include "byteorder.h"
#include "hmac.h"

static void encode_cred(const struct ctl_auth_cred *cred, uint8_t out[CTL_AUTH_CRED_LEN])
{
	put_be32(out, cred->key_id);
	put_be64(out + 4, cred->time_s);
	put_be64(out + 12, cred->nonce);
}

static void call_mac(const struct cluster_key *key, uint32_t xid, uint32_t prog,
		     uint32_t vers, uint32_t proc, const uint8_t cred[CTL_AUTH_CRED_LEN],
		     uint8_t mac[HMAC_SHA256_LEN])
{
	uint8_t hdr[16];
	struct hmac_piece pieces[2] = { { hdr, sizeof(hdr) }, { cred, CTL_AUTH_CRED_LEN } };

	put_be32(hdr, xid);
	put_be32(hdr + 4, prog);
	put_be32(hdr + 8, vers);
	put_be32(hdr + 12, proc);
	if (hmac_sha256(key->secret, sizeof(key->secret), pieces, 2, mac))
		memset(mac, 0, HMAC_SHA256_LEN);
}

void ctl_auth_sign(const struct cluster_key *key, uint32_t xid, uint32_t prog,
		   uint32_t vers, uint32_t proc, const struct ctl_auth_cred *cred,
		   uint8_t cred_out[CTL_AUTH_CRED_LEN], uint8_t verf_out[CTL_AUTH_VERF_LEN])
{
	encode_cred(cred, cred_out);
	call_mac(key, xid, prog, vers, proc, cred_out, verf_out);
}

enum ctl_auth_verdict ctl_auth_check(const struct cluster_key *key, uint32_t xid,
				     uint32_t prog, uint32_t vers, uint32_t proc,
				     uint32_t cred_flavor, const uint8_t *cred, size_t cred_len,
				     uint32_t verf_flavor, const uint8_t *verf, size_t verf_len,
				     uint64_t now_s, struct ctl_auth_cred *out)
{
	uint8_t mac[HMAC_SHA256_LEN];
	uint64_t skew;

	if (cred_flavor != CTL_AUTH_FLAVOR || cred_len != CTL_AUTH_CRED_LEN)
		return CTL_AUTH_BADCRED;
	out->key_id = get_be32(cred);
	out->time_s = get_be64(cred + 4);
	out->nonce = get_be64(cred + 12);
	if (out->key_id != key->id)
		return CTL_AUTH_BADCRED;
	if (verf_flavor != CTL_AUTH_FLAVOR || verf_len != CTL_AUTH_VERF_LEN)
		return CTL_AUTH_BADVERF;
	call_mac(key, xid, prog, vers, proc, cred, mac);
	if (!hmac_equal(mac, verf, CTL_AUTH_VERF_LEN))
		return CTL_AUTH_BADVERF;
	/* Checked after the MAC so an unauthenticated peer learns nothing
	 * about our clock. */
	skew = out->time_s > now_s ? out->time_s - now_s : now_s - out->time_s;
	if (skew > CTL_AUTH_MAX_SKEW_S)
		return CTL_AUTH_REJECTED;
	return CTL_AUTH_OK;
}

void ctl_auth_reply_verf(const struct cluster_key *key, uint32_t xid, uint64_t nonce,
			 uint8_t out[CTL_AUTH_REPLY_VERF_LEN])
{
	static const char label[] = "pando-reply";
	uint8_t tail[12];
	uint8_t mac[HMAC_SHA256_LEN];
	struct hmac_piece pieces[2] = { { label, sizeof(label) - 1 }, { tail, sizeof(tail) } };

	put_be32(tail, xid);
	put_be64(tail + 4, nonce);
	if (hmac_sha256(key->secret, sizeof(key->secret), pieces, 2, mac))
		memset(mac, 0, HMAC_SHA256_LEN);
	memcpy(out, mac, CTL_AUTH_REPLY_VERF_LEN);
}
