/* The codec object and the two backends behind pando_ec_*: ec.c checks
 * arguments and dispatches; each backend file knows one library. */
#ifndef PANDO_LAYOUT_EC_BACKEND_H
#define PANDO_LAYOUT_EC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "pando/ec.h"

struct pando_ec {
	unsigned k, m;
	enum pando_ec_backend backend;
	int *jmatrix; /* jerasure's m x k matrix, as jerasure allocated it */
	uint8_t matrix[PANDO_EC_MAX_M * PANDO_EC_MAX_K]; /* the same, as bytes */
	uint8_t *tables; /* ISA-L: expanded encode tables, 32 * k * m bytes */
};

/* jerasure (always built) */
int ec_jerasure_matrix(struct pando_ec *ec);
int ec_jerasure_encode(const struct pando_ec *ec, const uint8_t *const *data,
		       uint8_t *const *parity, size_t len);
int ec_jerasure_decode(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
		       unsigned n_erased, size_t len);
int ec_jerasure_update(const struct pando_ec *ec, unsigned j, const uint8_t *delta,
		       uint8_t *const *parity, size_t len);

#ifdef PANDO_HAVE_ISAL
int ec_isal_init(struct pando_ec *ec);
void ec_isal_encode(const struct pando_ec *ec, const uint8_t *const *data, uint8_t *const *parity,
		    size_t len);
int ec_isal_decode(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
		   unsigned n_erased, size_t len);
void ec_isal_update(const struct pando_ec *ec, unsigned j, const uint8_t *delta,
		    uint8_t *const *parity, size_t len);
#endif

#endif
