#include "xdr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void xw_fixed(struct xdr_w *w, const void *data, size_t n)
{
	uint8_t *b = xw_reserve(w, XDR_PAD(n));

	if (!b)
		return;
	memcpy(b, data, n);
	memset(b + n, 0, XDR_PAD(n) - n);
}

void xw_opaque(struct xdr_w *w, const void *data, uint32_t n)
{
	xw_u32(w, n);
	xw_fixed(w, data, n);
}

void xw_string(struct xdr_w *w, const char *s)
{
	xw_opaque(w, s, (uint32_t)strlen(s));
}

void xr_fixed(struct xdr_r *r, void *out, size_t n)
{
	const uint8_t *b = xr_fixed_ref(r, n);

	if (!b) {
		memset(out, 0, n);
		return;
	}
	for (size_t i = n; i < XDR_PAD(n); i++)
		if (b[i])
			r->err = true;
	memcpy(out, b, n);
}

uint32_t xr_opaque(struct xdr_r *r, void *out, uint32_t max)
{
	uint32_t n = xr_u32(r);

	if (n > max)
		r->err = true;
	if (r->err)
		return 0;
	xr_fixed(r, out, n);
	return r->err ? 0 : n;
}

void xr_string(struct xdr_r *r, char *out, uint32_t max)
{
	uint32_t n = xr_opaque(r, out, max);

	out[n] = '\0';
	if (memchr(out, '\0', n))
		r->err = true;
}

uint32_t xr_count(struct xdr_r *r, size_t min_item)
{
	uint32_t n = xr_u32(r);

	if (!r->err && (size_t)n > xr_left(r) / min_item)
		r->err = true;
	return r->err ? 0 : n;
}

void *xr_alloc(struct xdr_r *r, uint32_t n, size_t size)
{
	void *p;

	if (r->err || n == 0)
		return NULL;
	p = calloc(n, size);
	if (!p)
		r->err = r->nomem = true;
	return p;
}

int xr_result(const struct xdr_r *r)
{
	if (r->nomem)
		return -ENOMEM;
	return r->err || r->p != r->end ? -EBADMSG : 0;
}
