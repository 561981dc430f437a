/* Bounds-checked XDR (RFC 4506) reading and writing over plain buffers.
 *
 * A reader never reads past its end: the first short read sets `err` and
 * every later read returns zero, so a decoder checks `err` once at the end.
 * Variable-length opaques are returned as pointers into the buffer (no
 * copy), which is how WRITE payloads reach pwrite() untouched. */
#ifndef PANDO_XDR_CURSOR_H
#define PANDO_XDR_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XDR_PAD(n) (((size_t)(n) + 3u) & ~(size_t)3u)

struct xdr_in {
	const uint8_t *p;
	const uint8_t *end;
	bool err;
};

static inline void xin_init(struct xdr_in *x, const void *buf, size_t len)
{
	x->p = buf;
	x->end = (const uint8_t *)buf + len;
	x->err = false;
}

static inline size_t xin_left(const struct xdr_in *x)
{
	return (size_t)(x->end - x->p);
}

static inline const uint8_t *xin_take(struct xdr_in *x, size_t n)
{
	const uint8_t *at = x->p;

	if (x->err || xin_left(x) < n) {
		x->err = true;
		return NULL;
	}
	x->p += n;
	return at;
}

static inline uint32_t xin_u32(struct xdr_in *x)
{
	const uint8_t *b = xin_take(x, 4);

	if (!b)
		return 0;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t xin_u64(struct xdr_in *x)
{
	uint64_t hi = xin_u32(x);

	return hi << 32 | xin_u32(x);
}

static inline bool xin_bool(struct xdr_in *x)
{
	uint32_t v = xin_u32(x);

	if (v > 1)
		x->err = true;
	return v == 1;
}

/* opaque<max>: returns a pointer to the bytes (padding skipped). */
static inline const uint8_t *xin_opaque(struct xdr_in *x, uint32_t max, uint32_t *len)
{
	uint32_t n = xin_u32(x);
	const uint8_t *b;

	*len = 0;
	if (x->err)
		return NULL;
	if (n > max) {
		x->err = true;
		return NULL;
	}
	b = xin_take(x, XDR_PAD(n));
	if (!b)
		return NULL;
	*len = n;
	return b;
}

/* opaque[n] */
static inline const uint8_t *xin_fixed(struct xdr_in *x, size_t n)
{
	return xin_take(x, XDR_PAD(n));
}

struct xdr_out {
	uint8_t *buf;
	size_t len;
	size_t cap;
	bool err;
};

/* A writer over a caller-owned buffer; overflow sets err, never writes past cap. */
static inline void xout_init(struct xdr_out *x, void *buf, size_t cap)
{
	x->buf = buf;
	x->len = 0;
	x->cap = cap;
	x->err = false;
}

static inline uint8_t *xout_reserve(struct xdr_out *x, size_t n)
{
	uint8_t *at;

	if (x->err || x->cap - x->len < n) {
		x->err = true;
		return NULL;
	}
	at = x->buf + x->len;
	x->len += n;
	return at;
}

static inline void xout_u32(struct xdr_out *x, uint32_t v)
{
	uint8_t *b = xout_reserve(x, 4);

	uint32_t be = htonl(v);

	if (b)
		memcpy(b, &be, 4);
}

static inline void xout_u64(struct xdr_out *x, uint64_t v)
{
	xout_u32(x, (uint32_t)(v >> 32));
	xout_u32(x, (uint32_t)v);
}

static inline void xout_bool(struct xdr_out *x, bool v)
{
	xout_u32(x, v ? 1 : 0);
}

static inline void xout_fixed(struct xdr_out *x, const void *data, size_t n)
{
	uint8_t *b = xout_reserve(x, XDR_PAD(n));

	if (!b)
		return;
	memcpy(b, data, n);
	memset(b + n, 0, XDR_PAD(n) - n);
}

static inline void xout_opaque(struct xdr_out *x, const void *data, uint32_t n)
{
	xout_u32(x, n);
	xout_fixed(x, data, n);
}

#endif
