/* RFC 5531 call decoding and reply encoding against hand-assembled bytes,
 * and every truncation of a valid call. */
#include <string.h>

#include "check.h"
#include "rpc_msg.h"

/* xid 0x01020304, CALL, rpcvers 2, prog 100003, vers 3, proc 1,
 * AUTH_SYS cred of 8 bytes, AUTH_NONE verifier, 4 bytes of arguments. */
static const uint8_t call_bytes[] = {
	0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0, 0, 0, 0, 2, 0x00, 0x01, 0x86, 0xa3, 0,   0,
	0,    3,    0,    0,    0, 1, 0, 0, 0, 1, 0, 0, 0,    8,    'a',  'b',  'c', 'd',
	'e',  'f',  'g',  'h',  0, 0, 0, 0, 0, 0, 0, 0, 0xca, 0xfe, 0xba, 0xbe,
};

static void test_decode_call(void)
{
	struct rpc_call call;

	CHECK_EQ(rpc_msg_decode_call(call_bytes, sizeof(call_bytes), &call), RPC_CALL_OK);
	CHECK_EQ(call.xid, 0x01020304);
	CHECK_EQ(call.prog, 100003);
	CHECK_EQ(call.vers, 3);
	CHECK_EQ(call.proc, 1);
	CHECK_EQ(call.cred.flavor, 1);
	CHECK_EQ(call.cred.len, 8);
	CHECK(memcmp(call.cred.body, "abcdefgh", 8) == 0);
	CHECK_EQ(call.verf.flavor, 0);
	CHECK_EQ(call.verf.len, 0);
	CHECK_EQ(call.args_len, 4);
	CHECK_EQ(call.args[0], 0xca);
	CHECK_EQ(call.header_len, sizeof(call_bytes) - 4);
}

/* Each prefix of a valid call decodes to a verdict, never past its end. */
static void test_truncations(void)
{
	struct rpc_call call;

	for (size_t len = 0; len < sizeof(call_bytes) - 4; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		enum rpc_call_verdict v;

		memcpy(copy, call_bytes, len);
		v = rpc_msg_decode_call(copy, len, &call);
		CHECK(v == RPC_CALL_IGNORE || v == RPC_CALL_BADCRED);
		if (len < 8)
			CHECK_EQ(v, RPC_CALL_IGNORE);
		free(copy);
	}
}

static void test_bad_fields(void)
{
	uint8_t b[sizeof(call_bytes)];
	struct rpc_call call;

	memcpy(b, call_bytes, sizeof(b));
	b[7] = 1; /* a REPLY, not a CALL */
	CHECK_EQ(rpc_msg_decode_call(b, sizeof(b), &call), RPC_CALL_IGNORE);
	memcpy(b, call_bytes, sizeof(b));
	b[11] = 3; /* rpcvers 3 */
	CHECK_EQ(rpc_msg_decode_call(b, sizeof(b), &call), RPC_CALL_RPC_MISMATCH);
	memcpy(b, call_bytes, sizeof(b));
	b[30] = 0x02; /* credential of 520 bytes, over 400 */
	b[31] = 0x08;
	CHECK_EQ(rpc_msg_decode_call(b, sizeof(b), &call), RPC_CALL_BADCRED);
	memcpy(b, call_bytes, sizeof(b));
	b[31] = 0xff; /* credential longer than the record */
	CHECK_EQ(rpc_msg_decode_call(b, sizeof(b), &call), RPC_CALL_BADCRED);
}

static void test_encode_replies(void)
{
	static const uint8_t success[] = {
		0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t mismatch[] = {
		0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3,
	};
	static const uint8_t badcred[] = {
		0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,
	};
	static const uint8_t rpc_mismatch[] = {
		0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2,
	};
	static const uint8_t verf[] = {
		0,    0,    0, 9, 0, 0, 0,   1,   0,   0, 0, 0, 0x50, 0x41,
		0x4e, 0x44, 0, 0, 0, 3, 'x', 'y', 'z', 0, 0, 0, 0,    0,
	};
	struct rpc_reply reply = { 0 };
	uint8_t buf[RPC_REPLY_HEADER_MAX];
	size_t n;

	n = rpc_msg_encode_reply_header(buf, 9, RPC_OUT_SUCCESS, &reply);
	CHECK(n == sizeof(success) && memcmp(buf, success, n) == 0);
	reply.mismatch_low = reply.mismatch_high = 3;
	n = rpc_msg_encode_reply_header(buf, 9, RPC_OUT_PROG_MISMATCH, &reply);
	CHECK(n == sizeof(mismatch) && memcmp(buf, mismatch, n) == 0);
	n = rpc_msg_encode_reply_header(buf, 9, RPC_OUT_AUTH_BADCRED, &reply);
	CHECK(n == sizeof(badcred) && memcmp(buf, badcred, n) == 0);
	n = rpc_msg_encode_rpc_mismatch(buf, 9);
	CHECK(n == sizeof(rpc_mismatch) && memcmp(buf, rpc_mismatch, n) == 0);
	reply.verf_flavor = 0x50414e44;
	reply.verf_len = 3;
	memcpy(reply.verf, "xyz", 3);
	n = rpc_msg_encode_reply_header(buf, 9, RPC_OUT_SUCCESS, &reply);
	CHECK(n == sizeof(verf) && memcmp(buf, verf, n) == 0);
}

int main(void)
{
	test_decode_call();
	test_truncations();
	test_bad_fields();
	test_encode_replies();
	CHECK_DONE();
}
