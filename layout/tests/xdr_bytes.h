/* Notation for hand-written XDR in known-answer tests: each macro spells
 * out the bytes of one field, big-endian, as RFC 4506 lays them down. */
#ifndef PANDO_LAYOUT_XDR_BYTES_H
#define PANDO_LAYOUT_XDR_BYTES_H

/* by hand: clang-format would read `(v) & 0x...` as a cast */
/* clang-format off */
#define U32(v) (uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16), \
	       (uint8_t)((uint32_t)(v) >> 8), (uint8_t)(v)
#define U64(v) U32((uint64_t)(v) >> 32), U32((uint64_t)(v) & 0xffffffffu)
/* clang-format on */
#define REP4(b) b, b, b, b
#define REP12(b) REP4(b), REP4(b), REP4(b)
#define REP16(b) REP4(b), REP4(b), REP4(b), REP4(b)

#endif
