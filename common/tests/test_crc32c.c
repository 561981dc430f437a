/* CRC32C against the published check value and RFC 3720's vector, both
 * paths (SSE4.2 and table) agreeing, and chaining over pieces. */
#include "check.h"

#include <stdint.h>

#include "crc32c.h"

static void test_known_values(void)
{
	static uint8_t zeros[32];
	uint32_t a = crc32c(0, "1234", 4);

	CHECK_EQ(crc32c(0, "123456789", 9), 0xe3069283u);
	CHECK_EQ(crc32c(a, "56789", 5), 0xe3069283u); /* chains */
	CHECK_EQ(crc32c(0, "", 0), 0);
	CHECK_EQ(crc32c(0, zeros, 32), 0x8a9136aau); /* RFC 3720 B.4 */
}

/* Every split of a buffer gives the CRC of the whole, whatever path each
 * piece takes (the fast path works in 8-byte steps). */
static void test_pieces_chain_to_the_whole(void)
{
	uint8_t buf[67];
	uint32_t whole;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	whole = crc32c(0, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut++)
		CHECK_EQ(crc32c(crc32c(0, buf, cut), buf + cut, sizeof(buf) - cut), whole);
}

int main(void)
{
	test_known_values();
	test_pieces_chain_to_the_whole();
	CHECK_DONE();
}
