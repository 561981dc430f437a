/* Reed-Solomon RS(k,m) over GF(2^8) (polynomial 0x11d) with jerasure's
 * Vandermonde coding matrix (reed_sol_vandermonde_coding_matrix, w = 8).
 *
 * Two backends run the same matrix: jerasure's own region code, and, where
 * the build found ISA-L, ISA-L's SIMD kernels fed jerasure's coefficients.
 * Their outputs are bit-identical (the tests check it).  A codec is
 * immutable once made: any number of threads may use one at once.
 *
 * Buffers: `data` k chunks, `parity` m chunks, `chunks` k + m (data
 * first), all `len` bytes; any length and alignment.  Functions return 0
 * or a negative errno. */
#ifndef PANDO_EC_H
#define PANDO_EC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PANDO_EC_MAX_K 32u
#define PANDO_EC_MAX_M 16u

enum pando_ec_backend {
	PANDO_EC_AUTO = 0, /* ISA-L when built in, else jerasure */
	PANDO_EC_JERASURE = 1,
	PANDO_EC_ISAL = 2,
};

struct pando_ec;

/* Whether this build has the backend (AUTO and JERASURE always). */
bool pando_ec_backend_available(enum pando_ec_backend backend);

/* -EINVAL: k or m out of range; -ENOTSUP: backend not built in. */
int pando_ec_new(unsigned k, unsigned m, enum pando_ec_backend backend, struct pando_ec **out);
void pando_ec_free(struct pando_ec *ec);

unsigned pando_ec_k(const struct pando_ec *ec);
unsigned pando_ec_m(const struct pando_ec *ec);
enum pando_ec_backend pando_ec_backend(const struct pando_ec *ec);

/* The m x k coding matrix, row-major: parity i = sum over j of
 * matrix[i * k + j] * data j. */
const uint8_t *pando_ec_matrix(const struct pando_ec *ec);

int pando_ec_encode(const struct pando_ec *ec, const uint8_t *const *data, uint8_t *const *parity,
		    size_t len);

/* Rebuilds the chunks listed in erased (indices into chunks, at most m,
 * no repeats) from the others, in place.  -EINVAL for a bad list. */
int pando_ec_decode(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
		    unsigned n_erased, size_t len);

/* Partial-stripe write: data chunk j changed by delta (old XOR new, over
 * the bytes written); adds its effect to the matching bytes of every
 * parity chunk, so parity need not be recomputed from the whole row. */
int pando_ec_update(const struct pando_ec *ec, unsigned j, const uint8_t *delta,
		    uint8_t *const *parity, size_t len);

#endif
