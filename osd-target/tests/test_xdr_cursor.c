/* The bounds-checked XDR cursor: known encodings, and reads past the end
 * that must fail without touching memory beyond the buffer. */
#include <string.h>

#include "check.h"
#include "xdr_cursor.h"

static void test_known_encoding(void)
{
	static const uint8_t want[] = {
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c', 0,
	};
	uint8_t buf[64];
	struct xdr_out out;

	xout_init(&out, buf, sizeof(buf));
	xout_u32(&out, 0xdeadbeef);
	xout_u64(&out, 0x100000002ull);
	xout_bool(&out, true);
	xout_opaque(&out, "abc", 3);
	CHECK(!out.err);
	CHECK_EQ(out.len, sizeof(want));
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
}

static void test_round_trip(void)
{
	uint8_t buf[64];
	struct xdr_out out;
	struct xdr_in in;
	const uint8_t *p;
	uint32_t len;

	xout_init(&out, buf, sizeof(buf));
	xout_u64(&out, UINT64_MAX);
	xout_opaque(&out, "hello", 5);
	xin_init(&in, buf, out.len);
	CHECK(xin_u64(&in) == UINT64_MAX);
	p = xin_opaque(&in, 16, &len);
	CHECK(p && len == 5 && memcmp(p, "hello", 5) == 0);
	CHECK(!in.err);
	CHECK_EQ(xin_left(&in), 0);
}

static void test_overflow_and_bounds(void)
{
	uint8_t buf[8] = { 0, 0, 0, 9, 'a', 'b', 'c', 'd' };
	struct xdr_out out;
	struct xdr_in in;
	uint32_t len;

	/* opaque claims 9 bytes, only 4 present */
	xin_init(&in, buf, sizeof(buf));
	CHECK(xin_opaque(&in, 100, &len) == NULL);
	CHECK(in.err);
	CHECK_EQ(len, 0);
	CHECK_EQ(xin_u32(&in), 0);
	/* opaque over its declared bound */
	buf[3] = 4;
	xin_init(&in, buf, sizeof(buf));
	CHECK(xin_opaque(&in, 3, &len) == NULL);
	CHECK(in.err);
	/* bool must be 0 or 1 */
	xin_init(&in, buf, 4);
	xin_bool(&in);
	CHECK(in.err);
	/* writer never passes its capacity */
	xout_init(&out, buf, 6);
	xout_u32(&out, 1);
	xout_u32(&out, 2);
	CHECK(out.err);
	CHECK_EQ(out.len, 4);
}

int main(void)
{
	test_known_encoding();
	test_round_trip();
	test_overflow_and_bounds();
	CHECK_DONE();
}
