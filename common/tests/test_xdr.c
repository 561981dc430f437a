/* The XDR cursor: known encodings both ways, a writer that sizes in one
 * pass yet never writes past its buffer, and malformed input that fails
 * without touching memory beyond the buffer. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "xdr.h"

static const uint8_t known[] = {
	0xde, 0xad, 0xbe, 0xef,                         /* u32 */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, /* u64 */
	0x00, 0x00, 0x00, 0x01,                         /* bool */
	0x00, 0x00, 0x00, 0x03, 'a',  'b',  'c',  0,    /* opaque<> */
	'x',  'y',  0,    0,                            /* opaque[2] */
	0x00, 0x00, 0x00, 0x02, 'h',  'i',  0,    0,    /* string<> */
};

static void encode_known(struct xdr_w *w)
{
	xw_u32(w, 0xdeadbeef);
	xw_u64(w, 0x100000002ull);
	xw_bool(w, true);
	xw_opaque(w, "abc", 3);
	xw_fixed(w, "xy", 2);
	xw_string(w, "hi");
}

static void test_writer_lays_down_the_known_bytes(void)
{
	uint8_t buf[64];
	struct xdr_w w;

	memset(buf, 0xff, sizeof(buf));
	xw_init(&w, buf, sizeof(buf));
	encode_known(&w);
	CHECK(!xw_overflowed(&w));
	CHECK_EQ(w.len, sizeof(known));
	CHECK(memcmp(buf, known, sizeof(known)) == 0);
	CHECK_EQ(buf[sizeof(known)], 0xff);
}

static void test_writer_without_a_buffer_sizes_in_one_pass(void)
{
	struct xdr_w w = { NULL, 0, 0 };

	encode_known(&w);
	CHECK_EQ(w.len, sizeof(known));
	CHECK(xw_overflowed(&w));
}

static void test_writer_never_passes_its_capacity(void)
{
	uint8_t buf[12];
	struct xdr_w w;

	memset(buf, 0xff, sizeof(buf));
	xw_init(&w, buf, 6);
	xw_u32(&w, 1);
	xw_u32(&w, 2);
	CHECK(xw_overflowed(&w));
	CHECK_EQ(w.len, 8);
	CHECK_EQ(xw_room(&w), 0);
	/* a later field that would fit in the gap stays unwritten */
	xw_fixed(&w, "z", 1);
	CHECK_EQ(w.len, 12);
	CHECK_EQ(buf[4], 0xff);
	CHECK_EQ(buf[5], 0xff);
	CHECK_EQ(buf[6], 0xff);
}

static void test_reserve_hands_out_space_for_back_patching(void)
{
	uint8_t buf[8];
	struct xdr_w w;
	uint8_t *at;

	xw_init(&w, buf, sizeof(buf));
	at = xw_reserve(&w, 4);
	xw_u32(&w, 7);
	CHECK(at == buf);
	put_be32(at, 3);
	CHECK_EQ(get_be32(buf), 3);
	CHECK_EQ(xw_room(&w), 0);
	CHECK(xw_reserve(&w, 1) == NULL);
	CHECK(xw_overflowed(&w));
}

static void test_copying_reads_give_back_the_known_values(void)
{
	struct xdr_r r;
	uint8_t op[8], fixed[2];
	char s[8];

	xr_init(&r, known, sizeof(known));
	CHECK_EQ(xr_u32(&r), 0xdeadbeef);
	CHECK(xr_u64(&r) == 0x100000002ull);
	CHECK(xr_bool(&r));
	CHECK_EQ(xr_opaque(&r, op, sizeof(op)), 3);
	CHECK(memcmp(op, "abc", 3) == 0);
	xr_fixed(&r, fixed, 2);
	CHECK(memcmp(fixed, "xy", 2) == 0);
	xr_string(&r, s, sizeof(s) - 1);
	CHECK(strcmp(s, "hi") == 0);
	CHECK_EQ(xr_result(&r), 0);
}

static void test_in_place_reads_point_into_the_buffer(void)
{
	struct xdr_r r;
	const uint8_t *p;
	uint32_t len;

	xr_init(&r, known, sizeof(known));
	xr_take(&r, 16);
	p = xr_opaque_ref(&r, 16, &len);
	CHECK(p == known + 20 && len == 3);
	p = xr_fixed_ref(&r, 2);
	CHECK(p == known + 24);
	CHECK_EQ(xr_left(&r), 8);
	CHECK(!r.err);
}

static void test_short_input_fails_and_stays_failed(void)
{
	uint8_t buf[8] = { 0, 0, 0, 9, 'a', 'b', 'c', 'd' };
	uint8_t out[16];
	struct xdr_r r;
	uint32_t len = 99;

	/* opaque claims 9 bytes, only 4 present */
	xr_init(&r, buf, sizeof(buf));
	CHECK(xr_opaque_ref(&r, 100, &len) == NULL);
	CHECK(r.err);
	CHECK_EQ(len, 0);
	CHECK_EQ(xr_u32(&r), 0);
	CHECK_EQ(xr_result(&r), -EBADMSG);
	xr_init(&r, buf, sizeof(buf));
	CHECK_EQ(xr_opaque(&r, out, sizeof(out)), 0);
	CHECK(r.err);
	/* a u64 cut in half */
	xr_init(&r, buf, 6);
	xr_u32(&r);
	CHECK(xr_u64(&r) == 0);
	CHECK(r.err);
}

static void test_lengths_over_their_bound_are_refused(void)
{
	uint8_t buf[8] = { 0, 0, 0, 4, 'a', 'b', 'c', 'd' };
	uint8_t out[3];
	struct xdr_r r;
	uint32_t len;

	xr_init(&r, buf, sizeof(buf));
	CHECK(xr_opaque_ref(&r, 3, &len) == NULL);
	CHECK(r.err);
	xr_init(&r, buf, sizeof(buf));
	CHECK_EQ(xr_opaque(&r, out, 3), 0);
	CHECK(r.err);
}

static void test_bools_are_zero_or_one(void)
{
	uint8_t two[4] = { 0, 0, 0, 2 };
	struct xdr_r r;

	xr_init(&r, two, sizeof(two));
	xr_bool(&r);
	CHECK(r.err);
}

static void test_copying_reads_refuse_nonzero_padding(void)
{
	uint8_t buf[8] = { 0, 0, 0, 3, 'a', 'b', 'c', 1 };
	uint8_t out[4];
	struct xdr_r r;
	uint32_t len;

	xr_init(&r, buf, sizeof(buf));
	xr_opaque(&r, out, sizeof(out));
	CHECK(r.err);
	/* in place, the padding is not looked at */
	xr_init(&r, buf, sizeof(buf));
	CHECK(xr_opaque_ref(&r, 4, &len) != NULL && len == 3);
	CHECK(!r.err);
}

static void test_strings_with_an_embedded_nul_are_malformed(void)
{
	uint8_t buf[8] = { 0, 0, 0, 3, 'a', 0, 'c', 0 };
	char s[4];
	struct xdr_r r;

	xr_init(&r, buf, sizeof(buf));
	xr_string(&r, s, 3);
	CHECK(r.err);
}

static void test_counts_are_bounded_by_the_bytes_left(void)
{
	uint8_t buf[12] = { 0, 0, 0, 2 };
	struct xdr_r r;

	xr_init(&r, buf, sizeof(buf));
	CHECK_EQ(xr_count(&r, 4), 2);
	CHECK(!r.err);
	xr_init(&r, buf, sizeof(buf));
	CHECK_EQ(xr_count(&r, 5), 0);
	CHECK(r.err);
	CHECK(xr_alloc(&r, 2, 8) == NULL);
	CHECK(!r.nomem);
}

static void test_result_wants_all_the_input_used(void)
{
	uint8_t buf[8] = { 0 };
	struct xdr_r r;
	void *p;

	xr_init(&r, buf, sizeof(buf));
	xr_u32(&r);
	CHECK_EQ(xr_result(&r), -EBADMSG);
	xr_u32(&r);
	CHECK_EQ(xr_result(&r), 0);
	CHECK(xr_alloc(&r, 0, 8) == NULL);
	p = xr_alloc(&r, 2, 8);
	CHECK(p && ((uint64_t *)p)[1] == 0);
	free(p);
	r.nomem = true;
	CHECK_EQ(xr_result(&r), -ENOMEM);
}

int main(void)
{
	test_writer_lays_down_the_known_bytes();
	test_writer_without_a_buffer_sizes_in_one_pass();
	test_writer_never_passes_its_capacity();
	test_reserve_hands_out_space_for_back_patching();
	test_copying_reads_give_back_the_known_values();
	test_in_place_reads_point_into_the_buffer();
	test_short_input_fails_and_stays_failed();
	test_lengths_over_their_bound_are_refused();
	test_bools_are_zero_or_one();
	test_copying_reads_refuse_nonzero_padding();
	test_strings_with_an_embedded_nul_are_malformed();
	test_counts_are_bounded_by_the_bytes_left();
	test_result_wants_all_the_input_used();
	CHECK_DONE();
}
