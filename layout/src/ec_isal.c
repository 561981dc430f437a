/* The ISA-L backend: jerasure's coefficients through ISA-L's kernels.
 * Both libraries multiply in GF(2^8) modulo x^8+x^4+x^3+x^2+1 (0x11d), so
 * the same matrix gives the same bytes. */
#include "ec_backend.h"

#include <errno.h>
#include <stdlib.h>

#include <isa-l/erasure_code.h>

int ec_isal_init(struct pando_ec *ec)
{
	ec->tables = malloc(32u * ec->k * ec->m);
	if (!ec->tables)
		return -ENOMEM;
	ec_init_tables((int)ec->k, (int)ec->m, ec->matrix, ec->tables);
	return 0;
}

void ec_isal_encode(const struct pando_ec *ec, const uint8_t *const *data, uint8_t *const *parity,
		    size_t len)
{
	ec_encode_data((int)len, (int)ec->k, (int)ec->m, ec->tables, (uint8_t **)data,
		       (uint8_t **)parity);
}

/* Row r of the generator [I; matrix]. */
static void generator_row(const struct pando_ec *ec, unsigned r, uint8_t *row)
{
	for (unsigned j = 0; j < ec->k; j++)
		row[j] = r < ec->k ? (uint8_t)(r == j) : ec->matrix[(r - ec->k) * ec->k + j];
}

/* For each erased chunk, the coefficients that rebuild it from the k
 * survivors: the inverse of the survivors' generator rows, times the
 * erased chunk's own generator row. */
static int decode_coefficients(const struct pando_ec *ec, const unsigned *survivors,
			       const unsigned *erased, unsigned n_erased, uint8_t *coef)
{
	uint8_t rows[PANDO_EC_MAX_K * PANDO_EC_MAX_K], inv[PANDO_EC_MAX_K * PANDO_EC_MAX_K];
	uint8_t gen[PANDO_EC_MAX_K];
	unsigned k = ec->k;

	for (unsigned i = 0; i < k; i++)
		generator_row(ec, survivors[i], rows + i * k);
	if (gf_invert_matrix(rows, inv, (int)k))
		return -EIO;
	for (unsigned e = 0; e < n_erased; e++) {
		generator_row(ec, erased[e], gen);
		for (unsigned j = 0; j < k; j++) {
			uint8_t c = 0;

			for (unsigned l = 0; l < k; l++)
				c ^= gf_mul(gen[l], inv[l * k + j]);
			coef[e * k + j] = c;
		}
	}
	return 0;
}

int ec_isal_decode(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
		   unsigned n_erased, size_t len)
{
	uint8_t coef[PANDO_EC_MAX_M * PANDO_EC_MAX_K];
	uint8_t tables[32 * PANDO_EC_MAX_M * PANDO_EC_MAX_K];
	uint8_t *src[PANDO_EC_MAX_K], *dst[PANDO_EC_MAX_M];
	unsigned survivors[PANDO_EC_MAX_K], n = 0;
	uint8_t lost[PANDO_EC_MAX_K + PANDO_EC_MAX_M] = { 0 };
	int rc;

	for (unsigned e = 0; e < n_erased; e++) {
		lost[erased[e]] = 1;
		dst[e] = chunks[erased[e]];
	}
	for (unsigned i = 0; i < ec->k + ec->m && n < ec->k; i++) {
		if (lost[i])
			continue;
		survivors[n] = i;
		src[n++] = chunks[i];
	}
	rc = decode_coefficients(ec, survivors, erased, n_erased, coef);
	if (rc)
		return rc;
	ec_init_tables((int)ec->k, (int)n_erased, coef, tables);
	ec_encode_data((int)len, (int)ec->k, (int)n_erased, tables, src, dst);
	return 0;
}

void ec_isal_update(const struct pando_ec *ec, unsigned j, const uint8_t *delta,
		    uint8_t *const *parity, size_t len)
{
	ec_encode_data_update((int)len, (int)ec->k, (int)ec->m, (int)j, ec->tables,
			      (uint8_t *)delta, (uint8_t **)parity);
}
