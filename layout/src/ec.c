#include "pando/ec.h"

#include <errno.h>
#include <stdlib.h>

#include "ec_backend.h"

#define EC_MAX_LEN (1u << 30) /* both libraries take an int length */

bool pando_ec_backend_available(enum pando_ec_backend backend)
{
#ifdef PANDO_HAVE_ISAL
	return backend <= PANDO_EC_ISAL;
#else
	return backend <= PANDO_EC_JERASURE;
#endif
}

static enum pando_ec_backend resolve(enum pando_ec_backend backend)
{
	if (backend != PANDO_EC_AUTO)
		return backend;
	return pando_ec_backend_available(PANDO_EC_ISAL) ? PANDO_EC_ISAL : PANDO_EC_JERASURE;
}

int pando_ec_new(unsigned k, unsigned m, enum pando_ec_backend backend, struct pando_ec **out)
{
	struct pando_ec *ec;
	int rc;

	*out = NULL;
	if (k == 0 || m == 0 || k > PANDO_EC_MAX_K || m > PANDO_EC_MAX_M)
		return -EINVAL;
	if (!pando_ec_backend_available(backend))
		return -ENOTSUP;
	ec = calloc(1, sizeof(*ec));
	if (!ec)
		return -ENOMEM;
	ec->k = k;
	ec->m = m;
	ec->backend = resolve(backend);
	rc = ec_jerasure_matrix(ec);
#ifdef PANDO_HAVE_ISAL
	if (!rc && ec->backend == PANDO_EC_ISAL)
		rc = ec_isal_init(ec);
#endif
	if (rc) {
		pando_ec_free(ec);
		return rc;
	}
	*out = ec;
	return 0;
}

void pando_ec_free(struct pando_ec *ec)
{
	if (!ec)
		return;
	free(ec->jmatrix);
	free(ec->tables);
	free(ec);
}

unsigned pando_ec_k(const struct pando_ec *ec)
{
	return ec->k;
}

unsigned pando_ec_m(const struct pando_ec *ec)
{
	return ec->m;
}

enum pando_ec_backend pando_ec_backend(const struct pando_ec *ec)
{
	return ec->backend;
}

const uint8_t *pando_ec_matrix(const struct pando_ec *ec)
{
	return ec->matrix;
}

int pando_ec_encode(const struct pando_ec *ec, const uint8_t *const *data, uint8_t *const *parity,
		    size_t len)
{
	if (len > EC_MAX_LEN)
		return -EINVAL;
#ifdef PANDO_HAVE_ISAL
	if (ec->backend == PANDO_EC_ISAL) {
		ec_isal_encode(ec, data, parity, len);
		return 0;
	}
#endif
	return ec_jerasure_encode(ec, data, parity, len);
}

static int erased_valid(const struct pando_ec *ec, const unsigned *erased, unsigned n)
{
	if (n > ec->m)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (erased[i] >= ec->k + ec->m)
			return 0;
		for (unsigned j = 0; j < i; j++)
			if (erased[j] == erased[i])
				return 0;
	}
	return 1;
}

int pando_ec_decode(const struct pando_ec *ec, uint8_t *const *chunks, const unsigned *erased,
		    unsigned n_erased, size_t len)
{
	if (len > EC_MAX_LEN || !erased_valid(ec, erased, n_erased))
		return -EINVAL;
	if (n_erased == 0)
		return 0;
#ifdef PANDO_HAVE_ISAL
	if (ec->backend == PANDO_EC_ISAL)
		return ec_isal_decode(ec, chunks, erased, n_erased, len);
#endif
	return ec_jerasure_decode(ec, chunks, erased, n_erased, len);
}

int pando_ec_update(const struct pando_ec *ec, unsigned j, const uint8_t *delta,
		    uint8_t *const *parity, size_t len)
{
	if (len > EC_MAX_LEN || j >= ec->k)
		return -EINVAL;
#ifdef PANDO_HAVE_ISAL
	if (ec->backend == PANDO_EC_ISAL) {
		ec_isal_update(ec, j, delta, parity, len);
		return 0;
	}
#endif
	return ec_jerasure_update(ec, j, delta, parity, len);
}
