/* HMAC-SHA256 over several pieces, so callers need not concatenate. */
#ifndef PANDO_HMAC_H
#define PANDO_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define HMAC_SHA256_LEN 32

struct hmac_piece {
	const void *data;
	size_t len;
};

/* 0, or -1 if the crypto library failed (it does not on valid input). */
int hmac_sha256(const uint8_t *key, size_t key_len, const struct hmac_piece *pieces, size_t n,
		uint8_t out[HMAC_SHA256_LEN]);
/* Constant-time comparison: 1 when equal. */
int hmac_equal(const void *a, const void *b, size_t len);

#endif
