/* A journal record: one namespace batch the active metadata manager
 * committed, as it is written to the journal's objects for its standbys
 * to apply in order.  Big-endian, every field at its natural alignment:
 *
 *    0  magic   u32  JOURNAL_RECORD_MAGIC ("PJRN")
 *    4  length  u32  payload bytes, at most JOURNAL_RECORD_MAX
 *    8  seq     u64  the batch's sequence number in the active's store, >= 1
 *   16  term    u64  the active's term (its leadership's number) at the write
 *   24  crc     u32  CRC32C of bytes 0..23, then of the payload
 *   28  zero    u32  0
 *   32  payload, then zeros up to a multiple of 8
 *
 * Records follow each other in an object with no gap; the object's
 * unwritten tail reads as zeros.  So a reader tells three ends apart:
 * zeros (nothing written there yet), a record cut short (a write not
 * finished, or the object's end), and bytes that are no record at all. */
#ifndef PANDO_JOURNAL_RECORD_H
#define PANDO_JOURNAL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define JOURNAL_RECORD_MAGIC 0x504a524eu
#define JOURNAL_RECORD_HEADER 32u
#define JOURNAL_RECORD_MAX (16u << 20)

struct journal_record {
	uint64_t seq;
	uint64_t term;
	const uint8_t *payload; /* into the buffer decoded */
	uint32_t len;
};

/* Bytes a record of len payload bytes takes, padding included. */
size_t journal_record_size(uint32_t len);

/* Writes the record into out[cap]; *used = journal_record_size(len).
 * -EINVAL: seq 0 or len over JOURNAL_RECORD_MAX; -ENOSPC: cap too small
 * (nothing written). */
int journal_record_encode(uint64_t seq, uint64_t term, const void *payload, uint32_t len,
			  uint8_t *out, size_t cap, size_t *used);

/* The record at the start of buf[avail], and *used, the bytes it takes.
 * -ENODATA: a header of zeros (nothing written here); -EAGAIN: fewer
 * bytes than the record needs (a write cut short, or read more);
 * -EINVAL: not a record (magic, length, CRC, seq 0 or padding wrong).
 * *out and *used are written only on success. */
int journal_record_decode(const uint8_t *buf, size_t avail, struct journal_record *out,
			  size_t *used);

#endif
