/* XDR (RFC 4506) over plain buffers, for the flexfiles codecs.
 *
 * The writer counts every byte it is asked for, written or not, so one
 * pass tells an encoder the size it needs.  The reader's first failure
 * (short input, a length over its bound, non-zero padding, a count the
 * remaining bytes cannot hold) is sticky: later reads return zeros and a
 * decoder checks `err` once. */
#ifndef PANDO_LAYOUT_XDR_H
#define PANDO_LAYOUT_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XDR_PAD(n) (((size_t)(n) + 3u) & ~(size_t)3u)

struct xdr_w {
	uint8_t *buf;
	size_t cap;
	size_t len;
};

struct xdr_r {
	const uint8_t *p;
	const uint8_t *end;
	bool err;
	bool nomem;	/* the failure was an allocation, not the input */
};

void xw_u32(struct xdr_w *w, uint32_t v);
void xw_u64(struct xdr_w *w, uint64_t v);
void xw_bool(struct xdr_w *w, bool v);
void xw_fixed(struct xdr_w *w, const void *data, size_t n);		/* opaque[n] */
void xw_opaque(struct xdr_w *w, const void *data, uint32_t n);		/* opaque<> */
void xw_string(struct xdr_w *w, const char *s);				/* string<> */

uint32_t xr_u32(struct xdr_r *r);
uint64_t xr_u64(struct xdr_r *r);
bool xr_bool(struct xdr_r *r);
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
