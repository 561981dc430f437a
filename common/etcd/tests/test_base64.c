/* base64 as etcd's gateway writes it: RFC 4648's test vectors, every
 * length round trip, and what is not canonical base64 refused. */
#include <errno.h>

#include "check.h"
#include "etcd_base64.h"

static void check_vector(const char *raw, const char *enc)
{
	char out[64], back[64];
	size_t n = strlen(raw), got = 0;

	CHECK_EQ(base64_encoded_len(n), strlen(enc));
	CHECK_EQ(base64_encode(raw, n, out), strlen(enc));
	CHECK(strcmp(out, enc) == 0);
	CHECK_EQ(base64_decode(enc, strlen(enc), back, &got), 0);
	CHECK_EQ(got, n);
	CHECK_MEM(back, raw, n);
}

static void rfc4648_vectors(void)
{
	check_vector("", "");
	check_vector("f", "Zg==");
	check_vector("fo", "Zm8=");
	check_vector("foo", "Zm9v");
	check_vector("foob", "Zm9vYg==");
	check_vector("fooba", "Zm9vYmE=");
	check_vector("foobar", "Zm9vYmFy");
	check_vector("/pando/osd/1", "L3BhbmRvL29zZC8x");
}

static void every_byte_round_trips(void)
{
	unsigned char raw[256], back[256];
	char enc[400];
	size_t got;

	for (int i = 0; i < 256; i++)
		raw[i] = (unsigned char)(255 - i);
	for (size_t n = 0; n <= 256; n += 1) {
		size_t len = base64_encode(raw, n, enc);
		CHECK_EQ(base64_decode(enc, len, back, &got), 0);
		CHECK_EQ(got, n);
		CHECK_MEM(back, raw, n);
	}
}

static void bad_input_is_refused(void)
{
	const char *bad[] = { "Zg=",  "Zg",   "Z===",  "Zm9v!A==", "Zg==Zg==",
			      "Zh==", "Zm9=", "Zm 9v", "=Zm9",     "Zm=v" };
	unsigned char out[16];
	size_t got;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(base64_decode(bad[i], strlen(bad[i]), out, &got), -EINVAL);
}

int main(void)
{
	rfc4648_vectors();
	every_byte_round_trips();
	bad_input_is_refused();
	CHECK_DONE();
}
