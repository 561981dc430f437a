/* XDR (RFC 4506) over plain buffers: the one cursor of every component.
 *
 * The writer stores a field only when it fits whole, and counts every
 * byte it is asked for, stored or not: one pass over a NULL buffer sizes
 * an encoding, and a writer over a fixed buffer never writes past `cap`:
 * it has overflowed when `len` > `cap` (xw_overflowed).  Callers that
 * send `len` bytes check that first.
 *
 * The reader never reads past `end`.  Its first failure (short input, a
 * length over its bound, a bool that is not 0 or 1, non-zero padding in a
 * copying read, a count the remaining bytes cannot hold) is sticky: later
 * reads return zeros and a decoder checks `err` once.  Two kinds of read:
 * the `_ref` ones return pointers into the buffer (no copy, padding not
 * inspected), which is how WRITE payloads reach pwrite() untouched; the
 * others copy into the caller's storage.
 *
 * The fixed-size fields are inline: they are the NFSv3 data path. */
#ifndef PANDO_XDR_H
#define PANDO_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byteorder.h"

#define XDR_PAD(n) (((size_t)(n) + 3u) & ~(size_t)3u)

struct xdr_w {
	uint8_t *buf;
	size_t cap;
	size_t len; /* bytes asked for, stored or not */
};

struct xdr_r {
	const uint8_t *p;
	const uint8_t *end;
	bool err;
	bool nomem; /* the failure was an allocation, not the input */
};

static inline void xw_init(struct xdr_w *w, void *buf, size_t cap)
{
	*w = (struct xdr_w){ .buf = buf, .cap = cap };
}

static inline bool xw_overflowed(const struct xdr_w *w)
{
	return w->len > w->cap;
}

/* Bytes still free in the buffer. */
static inline size_t xw_room(const struct xdr_w *w)
{
	return w->len <= w->cap ? w->cap - w->len : 0;
}

/* n bytes at the current end, for a field written in place (or later);
 * NULL, and counted all the same, when they do not fit. */
static inline uint8_t *xw_reserve(struct xdr_w *w, size_t n)
{
	uint8_t *at = NULL;

	if (w->buf && !xw_overflowed(w) && n <= w->cap - w->len)
		at = w->buf + w->len;
	w->len += n;
	return at;
}

static inline void xw_u32(struct xdr_w *w, uint32_t v)
{
	uint8_t *b = xw_reserve(w, 4);

	if (b)
		put_be32(b, v);
}

static inline void xw_u64(struct xdr_w *w, uint64_t v)
{
	xw_u32(w, (uint32_t)(v >> 32));
	xw_u32(w, (uint32_t)v);
}

static inline void xw_bool(struct xdr_w *w, bool v)
{
	xw_u32(w, v ? 1 : 0);
}

void xw_fixed(struct xdr_w *w, const void *data, size_t n);    /* opaque[n] */
void xw_opaque(struct xdr_w *w, const void *data, uint32_t n); /* opaque<> */
void xw_string(struct xdr_w *w, const char *s);                /* string<> */

static inline void xr_init(struct xdr_r *r, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* An empty buffer may be NULL, and NULL + 0 is undefined in C. */
	*r = (struct xdr_r){ .p = p, .end = len ? p + len : p };
}

static inline size_t xr_left(const struct xdr_r *r)
{
	return (size_t)(r->end - r->p);
}

/* The next n bytes, as they are; NULL (and err) when fewer are left. */
static inline const uint8_t *xr_take(struct xdr_r *r, size_t n)
{
	const uint8_t *at = r->p;

	if (r->err || xr_left(r) < n) {
		r->err = true;
		return NULL;
	}
	r->p += n;
	return at;
}

static inline uint32_t xr_u32(struct xdr_r *r)
{
	const uint8_t *b = xr_take(r, 4);

	return b ? get_be32(b) : 0;
}

static inline uint64_t xr_u64(struct xdr_r *r)
{
	uint64_t hi = xr_u32(r);

	return hi << 32 | xr_u32(r);
}

static inline bool xr_bool(struct xdr_r *r)
{
	uint32_t v = xr_u32(r);

	if (v > 1)
		r->err = true;
	return v == 1;
}

/* opaque[n] in place, padding skipped. */
static inline const uint8_t *xr_fixed_ref(struct xdr_r *r, size_t n)
{
	return xr_take(r, XDR_PAD(n));
}

/* opaque<max> in place, padding skipped; *len is 0 on failure. */
static inline const uint8_t *xr_opaque_ref(struct xdr_r *r, uint32_t max, uint32_t *len)
{
	uint32_t n = xr_u32(r);
	const uint8_t *b;

	*len = 0;
	if (!r->err && n > max)
		r->err = true;
	b = xr_fixed_ref(r, n);
	if (b)
		*len = n;
	return b;
}

/* opaque[n] into out (zeroed on failure). */
void xr_fixed(struct xdr_r *r, void *out, size_t n);
/* opaque<max> into out (max bytes); returns the length. */
uint32_t xr_opaque(struct xdr_r *r, void *out, uint32_t max);
/* string<max> into out (max + 1 bytes, NUL-terminated); an embedded NUL
 * is malformed, since the string would not survive as a C string. */
void xr_string(struct xdr_r *r, char *out, uint32_t max);
/* An array count, refused when count items of at least min_item bytes
 * each cannot fit in what is left. */
uint32_t xr_count(struct xdr_r *r, size_t min_item);
/* A zeroed array of n items for a decoder to fill; NULL for n == 0 or
 * after a failure (which it records). */
void *xr_alloc(struct xdr_r *r, uint32_t n, size_t size);
/* What a decoder returns: 0, -EBADMSG or -ENOMEM, and whether all the
 * input was one structure. */
int xr_result(const struct xdr_r *r);

#endif
