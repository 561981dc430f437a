#include "ctl_auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "byteorder.h"

/* Each MAC starts with its own label, so that none can stand for another. */
static const char LABEL_HDR[] = "pando-ctl-hdr";
static const char LABEL_CALL[] = "pando-ctl-call";
static const char LABEL_REPLY[] = "pando-ctl-reply";

#define MAX_ARG_PIECES 4

int ctl_auth_derive(uint32_t key_id, const uint8_t secret[CLUSTER_KEY_SECRET_LEN], uint32_t osd_id,
		    struct ctl_auth_key *out)
{
	char label[32];
	struct hmac_piece piece = { label, 0 };

	piece.len = (size_t)snprintf(label, sizeof(label), "pando-ctl osd %u", osd_id);
	out->key_id = key_id;
	out->osd_id = osd_id;
	if (hmac_sha256(secret, CLUSTER_KEY_SECRET_LEN, &piece, 1, out->mac_key)) {
		explicit_bzero(out->mac_key, sizeof(out->mac_key));
		return -EIO;
	}
	return 0;
}

int ctl_auth_keyring_init(struct ctl_auth_keyring *ring, const struct cluster_key *key,
			  uint32_t osd_id)
{
	int rc = ctl_auth_derive(key->id, key->secret, osd_id, &ring->keys[0]);

	ring->n = 1;
	if (!rc && key->previous_id) {
		rc = ctl_auth_derive(key->previous_id, key->previous_secret, osd_id,
				     &ring->keys[1]);
		ring->n = 2;
	}
	if (rc)
		explicit_bzero(ring, sizeof(*ring));
	return rc;
}

static void encode_cred(const struct ctl_auth_cred *cred, uint8_t out[CTL_AUTH_CRED_LEN])
{
	put_be32(out, CTL_AUTH_VERSION);
	put_be32(out + 4, cred->key_id);
	put_be32(out + 8, cred->osd_id);
	put_be64(out + 12, cred->time_s);
	put_be64(out + 20, cred->nonce);
}

/* HMAC(key, label | xid | prog | vers | proc | cred | args...). */
static int call_mac(const struct ctl_auth_key *key, const char *label, size_t label_len,
		    const struct ctl_auth_hdr *hdr, const uint8_t cred[CTL_AUTH_CRED_LEN],
		    const struct hmac_piece *args, size_t nargs, uint8_t mac[HMAC_SHA256_LEN])
{
	struct hmac_piece pieces[3 + MAX_ARG_PIECES];
	uint8_t fields[16];

	if (nargs > MAX_ARG_PIECES)
		return -EINVAL;
	put_be32(fields, hdr->xid);
	put_be32(fields + 4, hdr->prog);
	put_be32(fields + 8, hdr->vers);
	put_be32(fields + 12, hdr->proc);
	pieces[0] = (struct hmac_piece){ label, label_len };
	pieces[1] = (struct hmac_piece){ fields, sizeof(fields) };
	pieces[2] = (struct hmac_piece){ cred, CTL_AUTH_CRED_LEN };
	for (size_t i = 0; i < nargs; i++)
		pieces[3 + i] = args[i];
	if (hmac_sha256(key->mac_key, sizeof(key->mac_key), pieces, 3 + nargs, mac))
		return -EIO;
	return 0;
}

int ctl_auth_sign(const struct ctl_auth_key *key, const struct ctl_auth_hdr *hdr,
		  const struct ctl_auth_cred *cred, const struct hmac_piece *args, size_t nargs,
		  uint8_t cred_out[CTL_AUTH_CRED_LEN], uint8_t verf_out[CTL_AUTH_VERF_LEN])
{
	uint8_t tag[HMAC_SHA256_LEN];
	int rc;

	encode_cred(cred, cred_out);
	rc = call_mac(key, LABEL_HDR, sizeof(LABEL_HDR) - 1, hdr, cred_out, NULL, 0, tag);
	if (!rc)
		rc = call_mac(key, LABEL_CALL, sizeof(LABEL_CALL) - 1, hdr, cred_out, args, nargs,
			      verf_out + CTL_AUTH_TAG_LEN);
	if (rc) {
		explicit_bzero(verf_out, CTL_AUTH_VERF_LEN);
		return rc;
	}
	memcpy(verf_out, tag, CTL_AUTH_TAG_LEN);
	return 0;
}

static const struct ctl_auth_key *ring_find(const struct ctl_auth_keyring *ring, uint32_t key_id)
{
	for (size_t i = 0; i < ring->n; i++)
		if (ring->keys[i].key_id == key_id)
			return &ring->keys[i];
	return NULL;
}

/* The credential's form and the key it names: all that is checked before
 * a MAC is computed. */
static enum ctl_auth_verdict parse_cred(const struct ctl_auth_keyring *ring,
					const struct ctl_auth_msg *m, struct ctl_auth_cred *cred,
					const struct ctl_auth_key **key)
{
	if (m->cred_flavor != CTL_AUTH_FLAVOR || m->cred_len != CTL_AUTH_CRED_LEN ||
	    get_be32(m->cred) != CTL_AUTH_VERSION)
		return CTL_AUTH_BADCRED;
	cred->key_id = get_be32(m->cred + 4);
	cred->osd_id = get_be32(m->cred + 8);
	cred->time_s = get_be64(m->cred + 12);
	cred->nonce = get_be64(m->cred + 20);
	*key = ring_find(ring, cred->key_id);
	if (!*key || cred->osd_id != (*key)->osd_id)
		return CTL_AUTH_BADCRED;
	if (m->verf_flavor != CTL_AUTH_FLAVOR || m->verf_len != CTL_AUTH_VERF_LEN)
		return CTL_AUTH_BADVERF;
	return CTL_AUTH_OK;
}

enum ctl_auth_verdict ctl_auth_admit(const struct ctl_auth_keyring *ring,
				     const struct ctl_auth_msg *m, uint64_t now_s,
				     struct ctl_auth_cred *cred, const struct ctl_auth_key **key)
{
	enum ctl_auth_verdict v = parse_cred(ring, m, cred, key);
	uint8_t tag[HMAC_SHA256_LEN];
	uint64_t skew;

	if (v != CTL_AUTH_OK)
		return v;
	if (call_mac(*key, LABEL_HDR, sizeof(LABEL_HDR) - 1, &m->hdr, m->cred, NULL, 0, tag))
		return CTL_AUTH_ERROR;
	if (!hmac_equal(tag, m->verf, CTL_AUTH_TAG_LEN))
		return CTL_AUTH_BADVERF;
	skew = cred->time_s > now_s ? cred->time_s - now_s : now_s - cred->time_s;
	return skew > CTL_AUTH_MAX_SKEW_S ? CTL_AUTH_REJECTED : CTL_AUTH_OK;
}

enum ctl_auth_verdict ctl_auth_check_args(const struct ctl_auth_keyring *ring,
					  const struct ctl_auth_msg *m, const uint8_t *args,
					  size_t args_len, struct ctl_auth_cred *cred,
					  const struct ctl_auth_key **key)
{
	enum ctl_auth_verdict v = parse_cred(ring, m, cred, key);
	struct hmac_piece piece = { args, args_len };
	uint8_t mac[HMAC_SHA256_LEN];

	if (v != CTL_AUTH_OK)
		return v;
	if (call_mac(*key, LABEL_CALL, sizeof(LABEL_CALL) - 1, &m->hdr, m->cred, &piece, 1, mac))
		return CTL_AUTH_ERROR;
	return hmac_equal(mac, m->verf + CTL_AUTH_TAG_LEN, HMAC_SHA256_LEN) ? CTL_AUTH_OK
									    : CTL_AUTH_BADVERF;
}

int ctl_auth_reply_mac(const struct ctl_auth_key *key, uint32_t xid, uint64_t nonce,
		       uint32_t accept_stat, const struct hmac_piece *res, size_t nres,
		       uint8_t out[CTL_AUTH_REPLY_VERF_LEN])
{
	struct hmac_piece pieces[2 + MAX_ARG_PIECES];
	uint8_t fields[16];

	if (nres > MAX_ARG_PIECES)
		return -EINVAL;
	put_be32(fields, xid);
	put_be64(fields + 4, nonce);
	put_be32(fields + 12, accept_stat);
	pieces[0] = (struct hmac_piece){ LABEL_REPLY, sizeof(LABEL_REPLY) - 1 };
	pieces[1] = (struct hmac_piece){ fields, sizeof(fields) };
	for (size_t i = 0; i < nres; i++)
		pieces[2 + i] = res[i];
	if (hmac_sha256(key->mac_key, sizeof(key->mac_key), pieces, 2 + nres, out)) {
		explicit_bzero(out, CTL_AUTH_REPLY_VERF_LEN);
		return -EIO;
	}
	return 0;
}
