#include "hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

int hmac_sha256(const uint8_t *key, size_t key_len, const struct hmac_piece *pieces, size_t n,
		uint8_t out[HMAC_SHA256_LEN])
{
	/* HMAC_CTX is deprecated in OpenSSL 3 (EVP_MAC replaces it) but is
	 * still shipped and needs no provider object kept between calls. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	HMAC_CTX *ctx = HMAC_CTX_new();
	unsigned int len = 0;
	int ok;

	if (!ctx)
		return -1;
	ok = HMAC_Init_ex(ctx, key, (int)key_len, EVP_sha256(), NULL);
	for (size_t i = 0; ok && i < n; i++)
		ok = HMAC_Update(ctx, pieces[i].data, pieces[i].len);
	ok = ok && HMAC_Final(ctx, out, &len);
	HMAC_CTX_free(ctx);
#pragma GCC diagnostic pop
	return ok && len == HMAC_SHA256_LEN ? 0 : -1;
}

int hmac_equal(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}
