/* LEB128 unsigned varints (7 bits a byte, low group first, high bit set
 * on every byte but the last) and zigzag for signed deltas, as RocksDB and
 * protobuf use them.  Decoding accepts only the shortest form, so every
 * value has exactly one encoding. */
#ifndef PANDO_LAYOUT_VARINT_H
#define PANDO_LAYOUT_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX_LEN 10

/* Byte cursor shared by the map codec: `len` counts every byte asked for,
 * written or not, so an encoder learns its full size from one pass. */
struct byte_out {
	uint8_t *buf;
	size_t cap;
	size_t len;
};

struct byte_in {
	const uint8_t *p;
	const uint8_t *end;
	bool err;
};

static inline void bout_byte(struct byte_out *o, uint8_t b)
{
	if (o->len < o->cap)
		o->buf[o->len] = b;
	o->len++;
}

static inline void bout_varint(struct byte_out *o, uint64_t v)
{
	while (v >= 0x80) {
		bout_byte(o, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	bout_byte(o, (uint8_t)v);
}

static inline uint8_t bin_byte(struct byte_in *in)
{
	if (in->err || in->p == in->end) {
		in->err = true;
		return 0;
	}
	return *in->p++;
}

static inline uint64_t bin_varint(struct byte_in *in)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < VARINT_MAX_LEN; i++) {
		uint8_t b = bin_byte(in);

		if (in->err)
			return 0;
		/* the 10th byte holds only bit 63; a zero last byte after
		 * the first is a longer-than-needed encoding */
		if ((i == VARINT_MAX_LEN - 1 && b > 1) || (i > 0 && b == 0)) {
			in->err = true;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	in->err = true;
	return 0;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
