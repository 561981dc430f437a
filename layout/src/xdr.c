#include "pando/xdr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void put(struct xdr_w *w, const void *data, size_t n)
{
	if (w->len <= w->cap && n <= w->cap - w->len)
		memcpy(w->buf + w->len, data, n);
	w->len += n;
}

static void put_zeros(struct xdr_w *w, size_t n)
{
	static const uint8_t zeros[4];

	put(w, zeros, n);
}

void xw_u32(struct xdr_w *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(w, b, 4);
}

void xw_u64(struct xdr_w *w, uint64_t v)
{
	xw_u32(w, (uint32_t)(v >> 32));
	xw_u32(w, (uint32_t)v);
}

void xw_bool(struct xdr_w *w, bool v)
{
	xw_u32(w, v ? 1 : 0);
}

void xw_fixed(struct xdr_w *w, const void *data, size_t n)
{
	put(w, data, n);
	put_zeros(w, XDR_PAD(n) - n);
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

static const uint8_t *take(struct xdr_r *r, size_t n)
{
	const uint8_t *at = r->p;

	if (r->err || (size_t)(r->end - r->p) < n) {
		r->err = true;
		return NULL;
	}
	r->p += n;
	return at;
}

uint32_t xr_u32(struct xdr_r *r)
{
	const uint8_t *b = take(r, 4);

	if (!b)
		return 0;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

uint64_t xr_u64(struct xdr_r *r)
{
	uint64_t hi = xr_u32(r);

	return hi << 32 | xr_u32(r);
}

bool xr_bool(struct xdr_r *r)
{
	uint32_t v = xr_u32(r);

	if (v > 1)
		r->err = true;
	return v == 1;
}

void xr_fixed(struct xdr_r *r, void *out, size_t n)
{
	const uint8_t *b = take(r, XDR_PAD(n));

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

	if (!r->err && (size_t)n > (size_t)(r->end - r->p) / min_item)
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
