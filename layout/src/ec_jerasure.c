/* The jerasure backend: the reference the ISA-L backend must match. */
#include "ec_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jerasure.h>
#include <jerasure/galois.h>
#include <jerasure/reed_sol.h>

#define W 8

static pthread_once_t field_once = PTHREAD_ONCE_INIT;
static int field_rc;

/* jerasure builds its GF(2^8) tables on first use, unlocked; doing it once
 * here keeps two threads making their first codecs from racing. */
static void field_init(void)
{
	field_rc = galois_init_default_field(W);
}

int ec_jerasure_matrix(struct pando_ec *ec)
{
	if (pthread_once(&field_once, field_init) || field_rc)
		return -ENOMEM;
	ec->jmatrix = reed_sol_vandermonde_coding_matrix((int)ec->k, (int)ec->m, W);
	if (!ec->jmatrix)
		return -ENOMEM;
	for (unsigned i = 0; i < ec->m * ec->k; i++)
		ec->matrix[i] = (uint8_t)ec->jmatrix[i];
	return 0;
}

/* gf-complete, under jerasure, aborts the process unless every source and
 * destination of a region operation sit at the same address mod 16.  A
 * call whose buffers do not runs on 16-aligned copies instead. */
#define GF_ALIGN 16

struct bounce {
	uint8_t *block;
	uint8_t *p[PANDO_EC_MAX_K + PANDO_EC_MAX_M + 1];
};

static bool co_aligned(uint8_t *const *p, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		if (((uintptr_t)p[i] ^ (uintptr_t)p[0]) % GF_ALIGN)
			return false;
	return true;
}

/* Copies of n buffers, each starting on a GF_ALIGN boundary. */
static int bounce_in(struct bounce *b, uint8_t *const *src, unsigned n, size_t len)
{
	size_t stride = (len + GF_ALIGN - 1) / GF_ALIGN * GF_ALIGN;

	b->block = aligned_alloc(GF_ALIGN, (stride ? stride : GF_ALIGN) * n);
	if (!b->block)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		b->p[i] = b->block + i * stride;
		memcpy(b->p[i], src[i], len);
	}
	return 0;
}

static void bounce_out(struct bounce *b, uint8_t *const *dst, const unsigned *which, unsigned n,
		       size_t len)
{
	for (unsigned i = 0; i < n; i++)
		memcpy(dst[which[i]], b->p[which[i]], len);
	free(b->block);
}

static void encode_direct(const struct pando_ec *ec, uint8_t *const *chunks, size_t len)
{
	jerasure_matrix_encode((int)ec->k, (int)ec->m, W, ec->jmatrix, (char **)chunks,
			       (char **)chunks + ec->k, (int)len);
}

int ec_jerasure_encode(const struct pando_ec *ec, const uint8_t *const *data,
		       uint8_t *const *parity, size_t len)
{
	uint8_t *chunks[PANDO_EC_MAX_K + PANDO_EC_MAX_M];
	unsigned out[PANDO_EC_MAX_M];
	struct bounce b;
	int rc;

	for (unsigned i = 0; i < ec->k + ec->m; i++)
		chunks[i] = i < ec->k ? (uint8_t *)data[i] : parity[i - ec->k];
	if (co_aligned(chunks, ec->k + ec->m)) {
		encode_direct(ec, chunks, len);
		return 0;
	}
	rc = bounce_in(&b, chunks, ec->k + ec->m, len);
	if (rc)
		return rc;
	encode_direct(ec, b.p, len);
	for (unsigned i = 0; i < ec->m; i++)
		out[i] = ec->k + i;
	bounce_out(&b, chunks, out, ec->m, len);
	return 0;
}

static int row_k_ones(const struct pando_ec *ec)
{
	for (unsigned j = 0; j < ec->k; j++)
		if (ec->matrix[j] != 1)
			return 0;
	return 1;
}

static int decode_direct(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
			 unsigned n_erased, size_t len)
{
	int list[PANDO_EC_MAX_M + 1];

	for (unsigned i = 0; i < n_erased; i++)
		list[i] = (int)erased[i];
	list[n_erased] = -1;
	if (jerasure_matrix_decode((int)ec->k, (int)ec->m, W, ec->jmatrix, row_k_ones(ec), list,
				   (char **)chunks, (char **)chunks + ec->k, (int)len))
		return -EIO;
	return 0;
}

int ec_jerasure_decode(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
		       unsigned n_erased, size_t len)
{
	struct bounce b;
	int rc;

	if (co_aligned(chunks, ec->k + ec->m))
		return decode_direct(ec, chunks, erased, n_erased, len);
	rc = bounce_in(&b, chunks, ec->k + ec->m, len);
	if (rc)
		return rc;
	rc = decode_direct(ec, b.p, erased, n_erased, len);
	bounce_out(&b, chunks, erased, rc ? 0 : n_erased, len);
	return rc;
}

static void update_direct(const struct pando_ec *ec, unsigned j, uint8_t *const *bufs, size_t len)
{
	for (unsigned i = 0; i < ec->m; i++)
		galois_w08_region_multiply((char *)bufs[0], ec->matrix[i * ec->k + j], (int)len,
					   (char *)bufs[1 + i], 1);
}

int ec_jerasure_update(const struct pando_ec *ec, unsigned j, const uint8_t *delta,
		       uint8_t *const *parity, size_t len)
{
	uint8_t *bufs[PANDO_EC_MAX_M + 1];
	unsigned out[PANDO_EC_MAX_M];
	struct bounce b;
	int rc;

	bufs[0] = (uint8_t *)delta;
	for (unsigned i = 0; i < ec->m; i++) {
		bufs[1 + i] = parity[i];
		out[i] = 1 + i;
	}
	if (co_aligned(bufs, ec->m + 1)) {
		update_direct(ec, j, bufs, len);
		return 0;
	}
	rc = bounce_in(&b, bufs, ec->m + 1, len);
	if (rc)
		return rc;
	update_direct(ec, j, b.p, len);
	bounce_out(&b, bufs, out, ec->m, len);
	return 0;
}
