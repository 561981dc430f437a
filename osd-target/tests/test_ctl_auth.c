/* AUTH_PANDO version 2: known-answer vectors computed independently
 * (Python hmac over the layout in proto/osd_ctl.x), what each MAC covers,
 * a key rotation, and a failed HMAC: it never verifies, the target refuses
 * the call, the client fails it.
 *
 * This file supplies hmac_sha256 and hmac_equal itself (OpenSSL's HMAC
 * over the pieces joined), so the static library's hmac.o is not linked
 * and any HMAC computation can be made to fail. */
#include <limits.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "check.h"
#include "loopback.h"
#include "ctl_auth.h"
#include "log.h"
#include "osd.h"
#include "osd_ctl.h"
#include "pando/osd_ctl_client.h"

/* ---- an HMAC that fails on demand ------------------------------------------ */

static atomic_int hmac_calls;
static int fail_first = INT_MAX, fail_last = -1;

/* The next `count` HMAC computations fail, after `skip` that do not. */
static void fail_hmacs(int skip, int count)
{
	fail_first = atomic_load(&hmac_calls) + skip;
	fail_last = fail_first + count - 1;
}

static void hmac_works(void)
{
	fail_first = INT_MAX;
	fail_last = -1;
}

int hmac_sha256(const uint8_t *key, size_t key_len, const struct hmac_piece *pieces, size_t n,
		uint8_t out[HMAC_SHA256_LEN])
{
	static uint8_t msg[1 << 16];
	unsigned int len = 0;
	size_t at = 0;
	int call = atomic_fetch_add(&hmac_calls, 1);

	if (call >= fail_first && call <= fail_last)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (pieces[i].len > sizeof(msg) - at)
			return -1;
		if (pieces[i].len) /* an empty piece may have no buffer */
			memcpy(msg + at, pieces[i].data, pieces[i].len);
		at += pieces[i].len;
	}
	return HMAC(EVP_sha256(), key, (int)key_len, msg, at, out, &len) && len == 32 ? 0 : -1;
}

int hmac_equal(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

/* ---- the known call ------------------------------------------------------------ */

#define T0 1800000000ull
#define NONCE 0x0102030405060708ull

static const struct ctl_auth_hdr known_hdr = { 0x11223344, 0x20504e44, 1, 13 };
static const struct ctl_auth_cred known_cred = { 1, 7, T0, NONCE };
/* SET_CAP_VERSION of object 4.40 to 7 */
static const uint8_t known_args[20] = {
	0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0, 7
};

static const uint8_t want_key[32] = {
	0x69, 0x73, 0x14, 0x03, 0xb1, 0xdc, 0x50, 0x7b, 0xdb, 0x17, 0x18,
	0xdb, 0x41, 0xe8, 0xe7, 0x3b, 0x91, 0xc2, 0x4f, 0x70, 0x46, 0x8a,
	0xf0, 0x2d, 0x5e, 0x57, 0x80, 0x49, 0x88, 0x18, 0x3f, 0xc6,
};
static const uint8_t want_cred[CTL_AUTH_CRED_LEN] = {
	0, 0, 0,    2,    0,    0,    0, 1, 0, 0, 0, 7, 0, 0,
	0, 0, 0x6b, 0x49, 0xd2, 0x00, 1, 2, 3, 4, 5, 6, 7, 8,
};
static const uint8_t want_verf[CTL_AUTH_VERF_LEN] = {
	0x49, 0x63, 0x31, 0xff, 0x2c, 0x1c, 0xb7, 0x42, 0xd0, 0xaa, 0x98, 0x54,
	0xf1, 0xe6, 0x5f, 0x45, 0x30, 0xb4, 0x6c, 0x9c, 0x99, 0x27, 0x9c, 0x75,
	0x76, 0x36, 0x9d, 0x6b, 0x46, 0xd3, 0xa2, 0xd9, 0x53, 0x90, 0x13, 0x68,
	0xa9, 0x8e, 0xcc, 0x27, 0x20, 0x20, 0x09, 0x6a, 0x05, 0xcc, 0xf9, 0x6e,
};
/* status OK, old version 1 */
static const uint8_t known_res[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t want_reply[CTL_AUTH_REPLY_VERF_LEN] = {
	0x81, 0xfc, 0x92, 0xfb, 0x1d, 0x68, 0x17, 0x8d, 0xe2, 0xff, 0xf6,
	0xf7, 0x54, 0x73, 0xd3, 0x7d, 0x1d, 0x62, 0xdc, 0xcc, 0xe0, 0x2b,
	0x2e, 0x76, 0x24, 0x67, 0x01, 0xca, 0xae, 0xfb, 0x1b, 0x07,
};

static void test_cluster_key(struct cluster_key *key, uint16_t id, uint8_t first)
{
	memset(key, 0, sizeof(*key));
	key->id = id;
	for (int i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		key->secret[i] = (uint8_t)(first + i);
}

struct signed_call {
	uint8_t cred[CTL_AUTH_CRED_LEN];
	uint8_t verf[CTL_AUTH_VERF_LEN];
	struct ctl_auth_msg m; /* pointing at cred and verf */
};

static void copy_call(struct signed_call *to, const struct signed_call *from)
{
	*to = *from;
	to->m.cred = to->cred;
	to->m.verf = to->verf;
}

static int sign_known(const struct ctl_auth_key *key, const struct ctl_auth_cred *cred,
		      struct signed_call *s)
{
	struct hmac_piece args = { known_args, sizeof(known_args) };
	int rc = ctl_auth_sign(key, &known_hdr, cred, &args, 1, s->cred, s->verf);

	s->m = (struct ctl_auth_msg){ known_hdr,       CTL_AUTH_FLAVOR, CTL_AUTH_FLAVOR, s->cred,
				      sizeof(s->cred), s->verf,         sizeof(s->verf) };
	return rc;
}

static void test_known_answer(void)
{
	struct cluster_key ck;
	struct ctl_auth_keyring ring;
	const struct ctl_auth_key *key = NULL;
	struct ctl_auth_cred got;
	struct signed_call s;
	struct hmac_piece res = { known_res, sizeof(known_res) };
	uint8_t reply[CTL_AUTH_REPLY_VERF_LEN];

	test_cluster_key(&ck, 1, 0);
	CHECK_EQ(ctl_auth_keyring_init(&ring, &ck, 7), 0);
	CHECK_EQ(ring.n, 1);
	CHECK_MEM(ring.keys[0].mac_key, want_key, sizeof(want_key));
	CHECK_EQ(sign_known(&ring.keys[0], &known_cred, &s), 0);
	CHECK_MEM(s.cred, want_cred, sizeof(want_cred));
	CHECK_MEM(s.verf, want_verf, sizeof(want_verf));
	CHECK_EQ(ctl_auth_reply_mac(&ring.keys[0], known_hdr.xid, NONCE, 0, &res, 1, reply), 0);
	CHECK_MEM(reply, want_reply, sizeof(want_reply));

	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0 + 300, &got, &key), CTL_AUTH_OK);
	CHECK(key == &ring.keys[0]);
	CHECK(got.key_id == 1 && got.osd_id == 7 && got.time_s == T0 && got.nonce == NONCE);
	CHECK_EQ(ctl_auth_check_args(&ring, &s.m, known_args, sizeof(known_args), &got, &key),
		 CTL_AUTH_OK);
}

/* Every argument bit, the header, the credential, the target: covered. */
static void test_what_the_call_mac_covers(void)
{
	struct cluster_key ck;
	struct ctl_auth_keyring ring, other_osd;
	const struct ctl_auth_key *key;
	struct ctl_auth_cred got;
	struct signed_call s, t;
	uint8_t args[sizeof(known_args)];
	int accepted = 0;

	test_cluster_key(&ck, 1, 0);
	ctl_auth_keyring_init(&ring, &ck, 7);
	ctl_auth_keyring_init(&other_osd, &ck, 8);
	sign_known(&ring.keys[0], &known_cred, &s);
	for (size_t bit = 0; bit < 8 * sizeof(args); bit++) {
		memcpy(args, known_args, sizeof(args));
		args[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		accepted += ctl_auth_check_args(&ring, &s.m, args, sizeof(args), &got, &key) !=
			    CTL_AUTH_BADVERF;
	}
	CHECK_EQ(accepted, 0);
	CHECK_EQ(ctl_auth_check_args(&ring, &s.m, known_args, 19, &got, &key), CTL_AUTH_BADVERF);
	/* the header: another procedure, with the tag or the MAC */
	copy_call(&t, &s);
	t.m.hdr.proc = 6;
	CHECK_EQ(ctl_auth_admit(&ring, &t.m, T0, &got, &key), CTL_AUTH_BADVERF);
	CHECK_EQ(ctl_auth_check_args(&ring, &t.m, known_args, sizeof(known_args), &got, &key),
		 CTL_AUTH_BADVERF);
	/* another target, though it holds the same cluster key */
	CHECK_EQ(ctl_auth_admit(&other_osd, &s.m, T0, &got, &key), CTL_AUTH_BADCRED);
	/* the credential's form */
	copy_call(&t, &s);
	t.cred[3] = 1; /* version 1 */
	CHECK_EQ(ctl_auth_admit(&ring, &t.m, T0, &got, &key), CTL_AUTH_BADCRED);
	copy_call(&t, &s);
	t.m.cred_len = 20;
	CHECK_EQ(ctl_auth_admit(&ring, &t.m, T0, &got, &key), CTL_AUTH_BADCRED);
	t.m.cred_len = sizeof(t.cred);
	t.m.verf_len = 32;
	CHECK_EQ(ctl_auth_admit(&ring, &t.m, T0, &got, &key), CTL_AUTH_BADVERF);
	CHECK_EQ(ctl_auth_check_args(&ring, &t.m, known_args, sizeof(known_args), &got, &key),
		 CTL_AUTH_BADVERF);
	/* the time, after the MAC */
	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0 + 301, &got, &key), CTL_AUTH_REJECTED);
	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0 - 301, &got, &key), CTL_AUTH_REJECTED);
	copy_call(&t, &s);
	t.cred[19] ^= 1; /* a later time, MAC unchanged */
	CHECK_EQ(ctl_auth_admit(&ring, &t.m, T0, &got, &key), CTL_AUTH_BADVERF);
}

/* The reply MAC: over the xid, the nonce, the accept_stat and the results. */
static void test_what_the_reply_mac_covers(void)
{
	struct cluster_key ck;
	struct ctl_auth_key key;
	uint8_t res[sizeof(known_res)], mac[CTL_AUTH_REPLY_VERF_LEN];
	struct hmac_piece piece = { res, sizeof(res) };
	struct hmac_piece split[2] = { { known_res, 3 }, { known_res + 3, 5 } };
	int same = 0;

	test_cluster_key(&ck, 1, 0);
	ctl_auth_derive(1, ck.secret, 7, &key);
	for (size_t bit = 0; bit < 8 * sizeof(res); bit++) {
		memcpy(res, known_res, sizeof(res));
		res[bit / 8] ^= (uint8_t)(1 << (bit % 8));
		ctl_auth_reply_mac(&key, known_hdr.xid, NONCE, 0, &piece, 1, mac);
		same += !memcmp(mac, want_reply, sizeof(mac));
	}
	memcpy(res, known_res, sizeof(res));
	ctl_auth_reply_mac(&key, known_hdr.xid + 1, NONCE, 0, &piece, 1, mac);
	same += !memcmp(mac, want_reply, sizeof(mac));
	ctl_auth_reply_mac(&key, known_hdr.xid, NONCE + 1, 0, &piece, 1, mac);
	same += !memcmp(mac, want_reply, sizeof(mac));
	ctl_auth_reply_mac(&key, known_hdr.xid, NONCE, 5, &piece, 1, mac);
	same += !memcmp(mac, want_reply, sizeof(mac));
	CHECK_EQ(same, 0);
	/* the results in pieces MAC as one */
	CHECK_EQ(ctl_auth_reply_mac(&key, known_hdr.xid, NONCE, 0, split, 2, mac), 0);
	CHECK_MEM(mac, want_reply, sizeof(mac));
}

/* During a rotation a target holds two keys; a third is unknown. */
static void test_previous_key_during_a_rotation(void)
{
	struct cluster_key old, rotated, stranger;
	struct ctl_auth_keyring ring;
	struct ctl_auth_key old_key, stranger_key;
	const struct ctl_auth_key *key = NULL;
	struct ctl_auth_cred got, cred = known_cred;
	struct signed_call s;

	test_cluster_key(&old, 1, 0);
	test_cluster_key(&rotated, 2, 0x40);
	rotated.previous_id = 1;
	memcpy(rotated.previous_secret, old.secret, sizeof(old.secret));
	test_cluster_key(&stranger, 3, 0x80);
	CHECK_EQ(ctl_auth_keyring_init(&ring, &rotated, 7), 0);
	CHECK_EQ(ring.n, 2);
	ctl_auth_derive(1, old.secret, 7, &old_key);
	sign_known(&old_key, &cred, &s);
	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0, &got, &key), CTL_AUTH_OK);
	CHECK(key == &ring.keys[1]);
	CHECK_EQ(ctl_auth_check_args(&ring, &s.m, known_args, sizeof(known_args), &got, &key),
		 CTL_AUTH_OK);
	cred.key_id = 2;
	sign_known(&ring.keys[0], &cred, &s);
	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0, &got, &key), CTL_AUTH_OK);
	CHECK(key == &ring.keys[0]);
	ctl_auth_derive(3, stranger.secret, 7, &stranger_key);
	cred.key_id = 3;
	sign_known(&stranger_key, &cred, &s);
	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0, &got, &key), CTL_AUTH_BADCRED);
	/* the old key's id with another secret */
	cred.key_id = 1;
	stranger_key.key_id = 1;
	sign_known(&stranger_key, &cred, &s);
	CHECK_EQ(ctl_auth_admit(&ring, &s.m, T0, &got, &key), CTL_AUTH_BADVERF);
}

/* A failed HMAC yields an error, never a MAC of zeros that would verify
 * against a verifier of zeros. */
static void test_a_failed_hmac_never_verifies(void)
{
	struct cluster_key ck;
	struct ctl_auth_keyring ring, failed;
	const struct ctl_auth_key *key;
	struct ctl_auth_cred got;
	struct signed_call s, zeros;
	struct hmac_piece res = { known_res, sizeof(known_res) };
	uint8_t mac[CTL_AUTH_REPLY_VERF_LEN];

	test_cluster_key(&ck, 1, 0);
	ctl_auth_keyring_init(&ring, &ck, 7);
	fail_hmacs(0, 1);
	CHECK_EQ(ctl_auth_keyring_init(&failed, &ck, 7), -EIO);
	fail_hmacs(1, 1);
	CHECK_EQ(sign_known(&ring.keys[0], &known_cred, &s), -EIO);
	CHECK(s.verf[0] == 0 && !memcmp(s.verf, s.verf + 1, sizeof(s.verf) - 1));
	hmac_works();
	sign_known(&ring.keys[0], &known_cred, &s);
	copy_call(&zeros, &s);
	memset(zeros.verf, 0, sizeof(zeros.verf));
	for (int i = 0; i < 2; i++) {
		const struct signed_call *c = i ? &zeros : &s;

		fail_hmacs(0, 1);
		CHECK_EQ(ctl_auth_admit(&ring, &c->m, T0, &got, &key), CTL_AUTH_ERROR);
		fail_hmacs(0, 1);
		CHECK_EQ(ctl_auth_check_args(&ring, &c->m, known_args, sizeof(known_args), &got,
					     &key),
			 CTL_AUTH_ERROR);
	}
	fail_hmacs(0, 1);
	memset(mac, 0xff, sizeof(mac));
	CHECK_EQ(ctl_auth_reply_mac(&ring.keys[0], 1, 2, 0, &res, 1, mac), -EIO);
	CHECK_EQ(mac[0], 0);
	hmac_works();
}

/* ---- the target: ctl_dispatch -------------------------------------------------- */

struct target {
	struct osd_ctx ctx;
	struct osd_stats stats;
	struct cluster_key key;
	struct osd_keys keys;
	uint8_t res[RPC_REPLY_RES_CAP];
	struct rpc_reply reply;
	uint64_t nonce;
};

static void target_init(struct target *t)
{
	memset(t, 0, sizeof(*t));
	test_cluster_key(&t->key, 1, 0);
	osd_stats_init(&t->stats);
	CHECK_EQ(osd_keys_init(&t->keys, &t->key, 7), 0);
	t->ctx = (struct osd_ctx){ .keys = &t->keys, .osd_id = 7, .stats = &t->stats };
	t->ctx.replay = ctl_replay_new(64, CTL_AUTH_MAX_SKEW_S);
	t->nonce = 1000;
}

static void target_fini(struct target *t)
{
	ctl_replay_free(t->ctx.replay);
	osd_keys_destroy(&t->keys);
}

/* An AUTH_PANDO NULL signed as a client signs it. */
static void sign_null(struct target *t, uint64_t nonce, struct signed_call *s)
{
	struct ctl_auth_cred cred = { 1, 7, (uint64_t)time(NULL), nonce };
	struct ctl_auth_hdr hdr = { 9, PANDO_OSD_CTL, PANDO_OSD_CTL_V1, OSDCTL_NULL };

	hmac_works();
	CHECK_EQ(ctl_auth_sign(&t->keys.ctl.keys[0], &hdr, &cred, NULL, 0, s->cred, s->verf), 0);
}

static enum rpc_outcome dispatch(struct target *t, const struct signed_call *s)
{
	struct rpc_call call = {
		.xid = 9, .prog = PANDO_OSD_CTL, .vers = PANDO_OSD_CTL_V1, .proc = OSDCTL_NULL
	};

	call.cred = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_CRED_LEN, s->cred };
	call.verf = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_VERF_LEN, s->verf };
	memset(&t->reply, 0, sizeof(t->reply));
	xw_init(&t->reply.res, t->res, sizeof(t->res));
	return ctl_dispatch(&t->ctx, &call, &t->reply);
}

static bool reply_signed(struct target *t, uint64_t nonce, uint32_t accept_stat)
{
	uint8_t want[CTL_AUTH_REPLY_VERF_LEN];

	hmac_works();
	ctl_auth_reply_mac(&t->keys.ctl.keys[0], 9, nonce, accept_stat, NULL, 0, want);
	return t->reply.verf_flavor == CTL_AUTH_FLAVOR &&
	       t->reply.verf_len == CTL_AUTH_REPLY_VERF_LEN &&
	       !memcmp(t->reply.verf, want, sizeof(want));
}

/* HMACs on the target, in order: the header tag (admission), the call
 * MAC (the arguments), the reply MAC (then once more for SYSTEM_ERR).
 * Whichever fails, the call is answered SYSTEM_ERR. */
static void test_the_target_refuses_when_its_hmac_fails(void)
{
	struct target t;
	struct signed_call s;
	uint64_t n;

	target_init(&t);
	for (int at = 0; at < 3; at++) {
		n = t.nonce++;
		sign_null(&t, n, &s);
		fail_hmacs(at, at < 2 ? 1 : 2);
		CHECK_EQ(dispatch(&t, &s), RPC_OUT_SYSTEM_ERR);
		CHECK(t.reply.verf_flavor != CTL_AUTH_FLAVOR);
	}
	/* only the reply's own MAC failed: a SYSTEM_ERR signed as such */
	n = t.nonce++;
	sign_null(&t, n, &s);
	fail_hmacs(2, 1);
	CHECK_EQ(dispatch(&t, &s), RPC_OUT_SYSTEM_ERR);
	CHECK(reply_signed(&t, n, 5));
	n = t.nonce++;
	sign_null(&t, n, &s);
	CHECK_EQ(dispatch(&t, &s), RPC_OUT_SUCCESS);
	CHECK(reply_signed(&t, n, 0));
	target_fini(&t);
}

/* The same credential twice: the second is refused and counted. */
static void test_the_target_refuses_a_replay(void)
{
	struct target t;
	struct signed_call s;
	uint64_t v[OSD_STAT_COUNT];

	target_init(&t);
	sign_null(&t, 77, &s);
	CHECK_EQ(dispatch(&t, &s), RPC_OUT_SUCCESS);
	CHECK(reply_signed(&t, 77, 0));
	CHECK_EQ(dispatch(&t, &s), RPC_OUT_AUTH_REJECTEDCRED);
	CHECK_EQ(dispatch(&t, &s), RPC_OUT_AUTH_REJECTEDCRED);
	osd_stats_snapshot(&t.stats, v);
	CHECK_EQ(v[OSD_STAT_CTL_REPLAYS_REFUSED], 2);
	CHECK_EQ(v[OSD_STAT_CTL_AUTH_DENIED], 2);
	target_fini(&t);
}

/* ---- the client: a call whose MAC cannot be made is not sent ---------------- */

struct client_call {
	struct osd_ctl_client *c;
	int rc;
};

static void *call_null(void *arg)
{
	struct client_call *cc = arg;

	cc->rc = osd_ctl_null(cc->c);
	return NULL;
}

/* The target's side of one NULL: the reply with its right verifier. */
static void answer_null(int fd, const struct ctl_auth_key *key)
{
	uint8_t rec[256], reply[24 + CTL_AUTH_REPLY_VERF_LEN + 4];
	uint32_t xid;
	uint64_t nonce;

	CHECK(recv(fd, rec, sizeof(rec), 0) > 4 + 32 + CTL_AUTH_CRED_LEN);
	xid = get_be32(rec + 4);
	nonce = get_be64(rec + 4 + 32 + 20);
	put_be32(reply, 0x80000000u | (uint32_t)(sizeof(reply) - 4));
	put_be32(reply + 4, xid);
	put_be32(reply + 8, 1);
	put_be32(reply + 12, 0);
	put_be32(reply + 16, CTL_AUTH_FLAVOR);
	put_be32(reply + 20, CTL_AUTH_REPLY_VERF_LEN);
	CHECK_EQ(ctl_auth_reply_mac(key, xid, nonce, 0, NULL, 0, reply + 24), 0);
	put_be32(reply + 24 + CTL_AUTH_REPLY_VERF_LEN, 0);
	CHECK_EQ(send(fd, reply, sizeof(reply), 0), (long long)sizeof(reply));
}

static void test_the_client_fails_the_call(void)
{
	struct cluster_key ck;
	struct ctl_auth_key key;
	struct client_call cc = { 0 };
	pthread_t th;
	char addr[32];
	uint16_t port = 0;
	uint8_t b;
	int lfd = listen_loopback(&port), fd, err;

	test_cluster_key(&ck, 1, 0);
	ctl_auth_derive(1, ck.secret, 7, &key);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	fail_hmacs(0, 1);
	CHECK(osd_ctl_connect(addr, &ck, 7, 1000, &err) == NULL);
	CHECK_EQ(err, -EIO);
	hmac_works();
	cc.c = osd_ctl_connect(addr, &ck, 7, 1000, &err);
	fd = accept(lfd, NULL, NULL);
	/* signing fails: -EIO, and nothing goes out */
	fail_hmacs(1, 1);
	CHECK_EQ(osd_ctl_null(cc.c), -EIO);
	CHECK(recv(fd, &b, 1, MSG_DONTWAIT) < 0);
	/* the reply's check fails (the client's third HMAC, after the target's) */
	fail_hmacs(3, 1);
	pthread_create(&th, NULL, call_null, &cc);
	answer_null(fd, &key);
	pthread_join(th, NULL);
	CHECK_EQ(cc.rc, -EIO);
	hmac_works();
	close(fd);
	/* and a call that works, on the connection opened anew */
	pthread_create(&th, NULL, call_null, &cc);
	fd = accept(lfd, NULL, NULL);
	answer_null(fd, &key);
	pthread_join(th, NULL);
	CHECK_EQ(cc.rc, 0);
	osd_ctl_close(cc.c);
	close(fd);
	close(lfd);
}

int main(void)
{
	log_init(LOG_ERROR, stderr);
	test_known_answer();
	test_what_the_call_mac_covers();
	test_what_the_reply_mac_covers();
	test_previous_key_during_a_rotation();
	test_a_failed_hmac_never_verifies();
	test_the_target_refuses_when_its_hmac_fails();
	test_the_target_refuses_a_replay();
	test_the_client_fails_the_call();
	CHECK_DONE();
}
