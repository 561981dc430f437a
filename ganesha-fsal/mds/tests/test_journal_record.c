/* The journal's record format (journal_record.h): the known bytes of one
 * record (its CRC computed apart, by a bitwise CRC32C), round trips of
 * every length across the padding, and each way a reader meets the end
 * of what was written: zeros, a record cut short at every byte, and any
 * byte of a record changed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "journal_record.h"

static const uint8_t known[] = {
	0x50, 0x4a, 0x52, 0x4e, 0x00, 0x00, 0x00, 0x03, /* magic, length 3 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* seq 1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, /* term 2 */
	0x71, 0x63, 0x85, 0x5d, 0x00, 0x00, 0x00, 0x00, /* crc, zero */
	0x61, 0x62, 0x63, 0x00, 0x00, 0x00, 0x00, 0x00, /* "abc", padding */
};

static void test_a_record_has_the_known_bytes(void)
{
	uint8_t out[64];
	struct journal_record r;
	size_t used = 0;

	CHECK_EQ(journal_record_encode(1, 2, "abc", 3, out, sizeof(out), &used), 0);
	CHECK_EQ(used, sizeof(known));
	CHECK(!memcmp(out, known, sizeof(known)));
	CHECK_EQ(journal_record_decode(known, sizeof(known), &r, &used), 0);
	CHECK(r.seq == 1 && r.term == 2 && r.len == 3 && !memcmp(r.payload, "abc", 3));
	CHECK_EQ(used, sizeof(known));
}

static void test_every_length_round_trips_and_records_follow_each_other(void)
{
	static uint8_t buf[4096], payload[200];
	struct journal_record r;
	size_t off = 0, used;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	for (uint32_t len = 0; len < 40; len++) {
		CHECK_EQ(journal_record_encode(100 + len, 9, payload, len, buf + off,
					       sizeof(buf) - off, &used),
			 0);
		CHECK_EQ(used % 8, 0);
		off += used;
	}
	off = 0;
	for (uint32_t len = 0; len < 40; len++) {
		CHECK_EQ(journal_record_decode(buf + off, sizeof(buf) - off, &r, &used), 0);
		CHECK(r.seq == 100 + len && r.len == len && !memcmp(r.payload, payload, len));
		off += used;
	}
	/* Past the last record: the buffer's zeros, nothing written. */
	CHECK_EQ(journal_record_decode(buf + off, sizeof(buf) - off, &r, &used), -ENODATA);
}

static void test_a_record_cut_short_at_any_byte_asks_for_more(void)
{
	struct journal_record r;
	size_t used;

	for (size_t n = 1; n < sizeof(known); n++)
		CHECK_EQ(journal_record_decode(known, n, &r, &used), -EAGAIN);
	CHECK_EQ(journal_record_decode(known, 0, &r, &used), -EAGAIN);
}

/* Any byte of header, payload or padding changed: not a record, except
 * a change that leaves a header cut short... which no single byte does. */
static void test_any_byte_changed_is_not_a_record(void)
{
	uint8_t bad[sizeof(known)];
	struct journal_record r;
	size_t used;

	for (size_t i = 0; i < sizeof(known); i++) {
		for (int bit = 0; bit < 8; bit++) {
			int rc;

			memcpy(bad, known, sizeof(bad));
			bad[i] ^= (uint8_t)(1u << bit);
			rc = journal_record_decode(bad, sizeof(bad), &r, &used);
			/* A longer length is a record cut short, not garbage. */
			CHECK(rc == -EINVAL || (i >= 4 && i < 8 && rc == -EAGAIN));
		}
	}
}

static void test_what_the_encoder_refuses(void)
{
	uint8_t out[64];
	size_t used = 7;

	CHECK_EQ(journal_record_encode(0, 1, "a", 1, out, sizeof(out), &used), -EINVAL);
	CHECK_EQ(journal_record_encode(1, 1, "a", JOURNAL_RECORD_MAX + 1, out, sizeof(out), &used),
		 -EINVAL);
	CHECK_EQ(journal_record_encode(1, 1, "abc", 3, out, 39, &used), -ENOSPC);
	CHECK_EQ(used, 7);
}

static void test_a_length_over_the_bound_is_refused_before_reading_on(void)
{
	uint8_t hdr[JOURNAL_RECORD_HEADER];
	struct journal_record r;
	size_t used;

	memcpy(hdr, known, sizeof(hdr));
	hdr[4] = 0x01; /* 16 MiB + 3 */
	CHECK_EQ(journal_record_decode(hdr, sizeof(hdr), &r, &used), -EINVAL);
	CHECK_EQ(journal_record_decode(hdr, 8, &r, &used), -EINVAL);
}

int main(void)
{
	test_a_record_has_the_known_bytes();
	test_every_length_round_trips_and_records_follow_each_other();
	test_a_record_cut_short_at_any_byte_asks_for_more();
	test_any_byte_changed_is_not_a_record();
	test_what_the_encoder_refuses();
	test_a_length_over_the_bound_is_refused_before_reading_on();
	CHECK_DONE();
}
