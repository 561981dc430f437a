/* Capabilities (file handles) and the cluster key file: known-answer
 * vectors computed independently (Python hmac over the README layout),
 * tamper detection, a key rotation.  AUTH_PANDO is test_ctl_auth.c's. */
#include <string.h>

#include "byteorder.h"
#include "check.h"
#include "pando/capability.h"
#include "pando/cluster_key.h"

static const uint8_t known_handle[CAPABILITY_SIZE] = {
	0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x71, 0x3f, 0xb3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0xb5,
	0x9a, 0x5f, 0x0d, 0x22, 0xe1, 0x0b, 0x7f, 0x4e, 0xa4, 0xee, 0x0d, 0x46, 0x61, 0x76,
};

/* known_handle's fields bound to holder 4000 (bytes 36..39). */
static const uint8_t known_holder_handle[CAPABILITY_SIZE] = {
	0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x71, 0x3f, 0xb3, 0x00, 0x00, 0x00, 0x0f, 0xa0, 0xa8, 0xd3,
	0x91, 0xc9, 0x97, 0xb6, 0x84, 0x95, 0x2e, 0x54, 0x57, 0x58, 0xd8, 0x98, 0x76, 0x28,
};

static void test_key(struct cluster_key *key)
{
	memset(key, 0, sizeof(*key));
	key->id = 1;
	for (int i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		key->secret[i] = (uint8_t)i;
}

static const struct capability known_cap = {
	.rights = CAP_RIGHTS_RW,
	.osd_id = 7,
	.partition = 0x10,
	.object = 0x1234,
	.cap_version = 2,
	.expiry = 1900000000,
};

static void test_mint_known_bytes(void)
{
	struct cluster_key key;
	uint8_t fh[CAPABILITY_SIZE];

	test_key(&key);
	capability_mint(&key, &known_cap, fh);
	CHECK(memcmp(fh, known_handle, sizeof(fh)) == 0);
}

static void test_verify_round_trip(void)
{
	struct cluster_key key;
	struct capability cap;

	test_key(&key);
	CHECK_EQ(capability_verify(&key, known_handle, CAPABILITY_SIZE, &cap), CAP_VALID);
	CHECK_EQ(cap.rights, CAP_RIGHTS_RW);
	CHECK_EQ(cap.key_id, 1);
	CHECK_EQ(cap.osd_id, 7);
	CHECK_EQ(cap.partition, 0x10);
	CHECK_EQ(cap.object, 0x1234);
	CHECK_EQ(cap.cap_version, 2);
	CHECK_EQ(cap.expiry, 1900000000);
	CHECK_EQ(cap.holder, 0);
}

/* The holder takes the bytes that were reserved zero, so a handle minted
 * before it reads as holder 0 (any caller), and CAPABILITY_FORMAT stays 1. */
static void test_holder_known_bytes_and_round_trip(void)
{
	struct capability bound = known_cap, cap;
	struct cluster_key key;
	uint8_t fh[CAPABILITY_SIZE];

	test_key(&key);
	bound.holder = 4000;
	capability_mint(&key, &bound, fh);
	CHECK(memcmp(fh, known_holder_handle, sizeof(fh)) == 0);
	CHECK_EQ(fh[0], 1);
	CHECK_EQ(capability_verify(&key, known_holder_handle, CAPABILITY_SIZE, &cap), CAP_VALID);
	CHECK_EQ(cap.holder, 4000);
	CHECK_EQ(cap.cap_version, 2);
	bound.holder = 0xffffffffu;
	capability_mint(&key, &bound, fh);
	CHECK_EQ(capability_verify(&key, fh, sizeof(fh), &cap), CAP_VALID);
	CHECK_EQ(cap.holder, 0xffffffffu);
}

/* Every single-bit flip anywhere in the handle must be caught. */
static void test_every_bit_flip_rejected(void)
{
	struct cluster_key key;
	struct capability cap;
	uint8_t fh[CAPABILITY_SIZE];
	int accepted = 0;

	test_key(&key);
	for (int bit = 0; bit < CAPABILITY_SIZE * 8; bit++) {
		memcpy(fh, known_handle, sizeof(fh));
		fh[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		if (capability_verify(&key, fh, sizeof(fh), &cap) == CAP_VALID)
			accepted++;
	}
	CHECK_EQ(accepted, 0);
}

static void test_malformed(void)
{
	struct cluster_key key, other;
	struct capability cap;
	uint8_t fh[CAPABILITY_SIZE];

	test_key(&key);
	CHECK_EQ(capability_verify(&key, known_handle, CAPABILITY_SIZE - 1, &cap), CAP_MALFORMED);
	CHECK_EQ(capability_verify(&key, known_handle, 0, &cap), CAP_MALFORMED);
	memcpy(fh, known_handle, sizeof(fh));
	fh[0] = 2;
	CHECK_EQ(capability_verify(&key, fh, sizeof(fh), &cap), CAP_MALFORMED);
	memcpy(fh, known_handle, sizeof(fh));
	fh[1] = 2;
	CHECK_EQ(capability_verify(&key, fh, sizeof(fh), &cap), CAP_MALFORMED);
	/* Same secret under another id, and another secret under the same id. */
	other = key;
	other.id = 9;
	CHECK_EQ(capability_verify(&other, known_handle, CAPABILITY_SIZE, &cap), CAP_UNKNOWN_KEY);
	other = key;
	other.secret[0] ^= 1;
	CHECK_EQ(capability_verify(&other, known_handle, CAPABILITY_SIZE, &cap), CAP_BAD_MAC);
}

static void test_key_file_parsing(void)
{
	struct cluster_key key;
	const char *why = NULL;
	char text[128];

	CHECK_EQ(cluster_key_parse("id = 3\nsecret = 000102030405060708090a0b0c0d0e0f"
				   "101112131415161718191a1b1c1d1e1f\n",
				   &key, &why),
		 0);
	CHECK_EQ(key.id, 3);
	CHECK_EQ(key.secret[31], 0x1f);
	cluster_key_format(&key, text, sizeof(text));
	CHECK_EQ(cluster_key_parse(text, &key, &why), 0);
	CHECK_EQ(key.id, 3);
	CHECK(cluster_key_parse("id = 3\n", &key, &why) < 0);
	CHECK(cluster_key_parse("id = 0\nsecret = 00\n", &key, &why) < 0);
	CHECK(cluster_key_parse("id = 70000\nsecret = 00\n", &key, &why) < 0);
	CHECK(cluster_key_parse("id = 1\nsecret = zz0102030405060708090a0b0c0d0e0f"
				"101112131415161718191a1b1c1d1e1f\n",
				&key, &why) < 0);
	CHECK(cluster_key_parse("id = 1\nsecret = 0102\n", &key, &why) < 0);
	CHECK(cluster_key_parse("colour = blue\n", &key, &why) < 0);
	CHECK(why != NULL);
}

#define SECRET_A "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define SECRET_B "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f"

/* A rotation's key file: the new key, and the one it replaces. */
static void test_key_file_with_previous_key(void)
{
	struct cluster_key key;
	const char *why = NULL;
	char text[CLUSTER_KEY_TEXT_MAX];

	CHECK_EQ(cluster_key_parse("id = 2\nsecret = " SECRET_B "\nprevious_id = 1\n"
				   "previous_secret = " SECRET_A "\n",
				   &key, &why),
		 0);
	CHECK_EQ(key.id, 2);
	CHECK_EQ(key.previous_id, 1);
	CHECK_EQ(key.previous_secret[31], 0x1f);
	CHECK(cluster_key_secret(&key, 2) == key.secret);
	CHECK(cluster_key_secret(&key, 1) == key.previous_secret);
	CHECK(cluster_key_secret(&key, 3) == NULL);
	CHECK(cluster_key_secret(&key, 0) == NULL);
	cluster_key_format(&key, text, sizeof(text));
	CHECK_EQ(cluster_key_parse(text, &key, &why), 0);
	CHECK_EQ(key.previous_id, 1);
	CHECK_EQ(key.previous_secret[0], 0);
	/* without a previous key, id 0 is nobody's */
	CHECK_EQ(cluster_key_parse("id = 2\nsecret = " SECRET_B "\n", &key, &why), 0);
	CHECK(cluster_key_secret(&key, 0) == NULL);
	cluster_key_format(&key, text, sizeof(text));
	CHECK(strstr(text, "previous") == NULL);

	CHECK(cluster_key_parse("id = 2\nsecret = " SECRET_B "\nprevious_id = 1\n", &key, &why) <
	      0);
	CHECK(strstr(why, "previous_secret") != NULL);
	CHECK(cluster_key_parse("id = 2\nsecret = " SECRET_B "\nprevious_secret = " SECRET_A "\n",
				&key, &why) < 0);
	CHECK(cluster_key_parse("id = 2\nsecret = " SECRET_B "\nprevious_id = 2\n"
				"previous_secret = " SECRET_A "\n",
				&key, &why) < 0);
	CHECK(strstr(why, "differ") != NULL);
	CHECK(cluster_key_parse("id = 2\nsecret = " SECRET_B "\nprevious_id = 0\n"
				"previous_secret = " SECRET_A "\n",
				&key, &why) < 0);
	CHECK(cluster_key_parse("id = 2\nsecret = " SECRET_B "\nprevious_key = 1\n", &key, &why) <
	      0);
	CHECK_EQ(key.id, 0); /* a refused file leaves no key behind */
}

/* During a rotation handles minted with either key verify, and are
 * minted with the new one; afterwards the old ones are unknown. */
static void test_capabilities_across_a_rotation(void)
{
	struct cluster_key old, rotated, done;
	struct capability cap;
	uint8_t fh[CAPABILITY_SIZE];

	test_key(&old);
	memset(&rotated, 0, sizeof(rotated));
	rotated.id = 2;
	memset(rotated.secret, 0xab, sizeof(rotated.secret));
	rotated.previous_id = old.id;
	memcpy(rotated.previous_secret, old.secret, sizeof(old.secret));
	done = rotated;
	done.previous_id = 0;

	CHECK_EQ(capability_verify(&rotated, known_handle, CAPABILITY_SIZE, &cap), CAP_VALID);
	CHECK_EQ(cap.key_id, 1);
	capability_mint(&rotated, &known_cap, fh);
	CHECK_EQ(get_be16(fh + 2), 2);
	CHECK_EQ(capability_verify(&rotated, fh, sizeof(fh), &cap), CAP_VALID);
	CHECK_EQ(capability_verify(&done, fh, sizeof(fh), &cap), CAP_VALID);
	CHECK_EQ(capability_verify(&old, fh, sizeof(fh), &cap), CAP_UNKNOWN_KEY);
	CHECK_EQ(capability_verify(&done, known_handle, CAPABILITY_SIZE, &cap), CAP_UNKNOWN_KEY);
	/* the old id with another secret is a forgery, not the previous key */
	fh[2] = 0;
	fh[3] = 1;
	CHECK_EQ(capability_verify(&rotated, fh, sizeof(fh), &cap), CAP_BAD_MAC);
}

int main(void)
{
	test_mint_known_bytes();
	test_verify_round_trip();
	test_holder_known_bytes_and_round_trip();
	test_every_bit_flip_rejected();
	test_malformed();
	test_key_file_parsing();
	test_key_file_with_previous_key();
	test_capabilities_across_a_rotation();
	CHECK_DONE();
}
