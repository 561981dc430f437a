/* The control-protocol client library against a scripted fake target on
 * loopback: the exact bytes of a call (header, AUTH_PANDO credential, its
 * tag and MAC over the arguments computed here independently with
 * OpenSSL, arguments, WRITE data and padding), a nonce of its own per
 * call, and how replies are judged: statuses, a wrong verifier or xid,
 * results changed on their way, an oversized READ, STATS from known bytes,
 * a procedure the target does not know, a denial, a timeout, a closed
 * connection, the reconnect on the next call, and one client shared by
 * several threads. */
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "check.h"
#include "loopback.h"
#include "pando/osd_ctl_client.h"

#define PROG 0x20504e44u
#define FLAVOR 0x50414e44u
#define KEY_ID 3
#define OSD_ID 5
#define CALL_HEAD 116 /* up to the arguments: cred 28, verf 48 */

static struct cluster_key test_key;
static uint8_t ctl_key[32]; /* osd 5's control key, derived in main */

/* ---- the fake target ---------------------------------------------------------- */

struct call_seen {
	uint32_t xid, rpcvers, prog, vers, proc;
	uint32_t cred_flavor, cred_len, verf_flavor, verf_len;
	uint8_t cred[28], verf[48];
	uint64_t nonce;
	const uint8_t *args;
	size_t args_len;
};

static int accept_conn(int lfd)
{
	struct timeval tv = { .tv_sec = 5 };
	int fd = accept(lfd, NULL, NULL);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static bool read_exact(int fd, uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t r = read(fd, buf, n);

		if (r <= 0)
			return false;
		buf += r;
		n -= (size_t)r;
	}
	return true;
}

static size_t read_record(int fd, uint8_t *buf, size_t cap)
{
	uint8_t mark[4];
	uint32_t len;

	if (!read_exact(fd, mark, 4))
		return 0;
	len = get_be32(mark);
	CHECK(len & 0x80000000u);
	len &= 0x7fffffffu;
	if (len > cap || !read_exact(fd, buf, len))
		return 0;
	return len;
}

/* HMAC-SHA256 with the control key over label | head | tail. */
static void ctl_hmac(const char *label, const uint8_t *head, size_t head_len, const uint8_t *tail,
		     size_t tail_len, uint8_t out[32])
{
	static uint8_t msg[8192];
	size_t l = strlen(label);
	unsigned int mac_len = 0;

	CHECK(l + head_len + tail_len <= sizeof(msg));
	memcpy(msg, label, l);
	memcpy(msg + l, head, head_len);
	if (tail_len)
		memcpy(msg + l + head_len, tail, tail_len);
	HMAC(EVP_sha256(), ctl_key, sizeof(ctl_key), msg, l + head_len + tail_len, out, &mac_len);
}

/* The call's tag and MAC, as proto/osd_ctl.x defines them. */
static void check_call_mac(const struct call_seen *c)
{
	uint8_t head[16 + 28], mac[32];

	put_be32(head, c->xid);
	put_be32(head + 4, c->prog);
	put_be32(head + 8, c->vers);
	put_be32(head + 12, c->proc);
	memcpy(head + 16, c->cred, 28);
	ctl_hmac("pando-ctl-hdr", head, sizeof(head), NULL, 0, mac);
	CHECK_MEM(c->verf, mac, 16);
	ctl_hmac("pando-ctl-call", head, sizeof(head), c->args, c->args_len, mac);
	CHECK_MEM(c->verf + 16, mac, 32);
}

static void parse_call(const uint8_t *rec, size_t len, struct call_seen *c)
{
	memset(c, 0, sizeof(*c));
	CHECK(len >= CALL_HEAD);
	if (len < CALL_HEAD) {
		c->args = rec;
		return;
	}
	c->xid = get_be32(rec);
	CHECK_EQ(get_be32(rec + 4), 0); /* CALL */
	c->rpcvers = get_be32(rec + 8);
	c->prog = get_be32(rec + 12);
	c->vers = get_be32(rec + 16);
	c->proc = get_be32(rec + 20);
	c->cred_flavor = get_be32(rec + 24);
	c->cred_len = get_be32(rec + 28);
	memcpy(c->cred, rec + 32, 28);
	c->verf_flavor = get_be32(rec + 60);
	c->verf_len = get_be32(rec + 64);
	memcpy(c->verf, rec + 68, 48);
	c->nonce = get_be64(c->cred + 20);
	c->args = rec + CALL_HEAD;
	c->args_len = len - CALL_HEAD;
	check_call_mac(c);
}

/* What the target's reply verifier must be, computed without ctl_auth.c. */
static void reply_verf(uint32_t xid, uint64_t nonce, uint32_t stat, const uint8_t *res,
		       size_t res_len, uint8_t out[32])
{
	uint8_t head[16];

	put_be32(head, xid);
	put_be64(head + 4, nonce);
	put_be32(head + 12, stat);
	ctl_hmac("pando-ctl-reply", head, sizeof(head), res, res_len, out);
}

/* RIGHT: the target's verifier; WRONG: one bit off; CHANGED: right for
 * the results, whose last byte is then changed on the way. */
enum verf_kind { VERF_RIGHT, VERF_WRONG, VERF_CHANGED };

static void send_reply(int fd, uint32_t xid, uint64_t nonce, enum verf_kind kind,
		       const uint8_t *res, size_t res_len)
{
	uint8_t buf[256];
	size_t n = 0;

	CHECK(res_len + 60 <= sizeof(buf));
	put_be32(buf + 4, xid);
	put_be32(buf + 8, 1);  /* REPLY */
	put_be32(buf + 12, 0); /* MSG_ACCEPTED */
	put_be32(buf + 16, FLAVOR);
	put_be32(buf + 20, 32);
	reply_verf(xid, nonce, 0, res, res_len, buf + 24);
	if (kind == VERF_WRONG)
		buf[24] ^= 1;
	put_be32(buf + 56, 0); /* SUCCESS */
	memcpy(buf + 60, res, res_len);
	n = 60 + res_len;
	if (kind == VERF_CHANGED)
		buf[n - 1] ^= 1;
	put_be32(buf, 0x80000000u | (uint32_t)(n - 4));
	CHECK_EQ(write(fd, buf, n), (long long)n);
}

static void send_status(int fd, const struct call_seen *c, uint32_t status)
{
	uint8_t res[4];

	put_be32(res, status);
	send_reply(fd, c->xid, c->nonce, VERF_RIGHT, res, sizeof(res));
}

/* Accepted, with the right verifier, but PROC_UNAVAIL: what an older
 * target answers to a procedure it does not have. */
static void send_proc_unavail(int fd, uint32_t xid, uint64_t nonce)
{
	uint8_t buf[60];

	put_be32(buf, 0x80000000u | 56);
	put_be32(buf + 4, xid);
	put_be32(buf + 8, 1);  /* REPLY */
	put_be32(buf + 12, 0); /* MSG_ACCEPTED */
	put_be32(buf + 16, FLAVOR);
	put_be32(buf + 20, 32);
	reply_verf(xid, nonce, 3, NULL, 0, buf + 24);
	put_be32(buf + 56, 3); /* PROC_UNAVAIL */
	CHECK_EQ(write(fd, buf, sizeof(buf)), (long long)sizeof(buf));
}

static void send_denied(int fd, uint32_t xid, uint32_t auth_stat)
{
	uint8_t buf[24];

	put_be32(buf, 0x80000000u | 20);
	put_be32(buf + 4, xid);
	put_be32(buf + 8, 1);  /* REPLY */
	put_be32(buf + 12, 1); /* MSG_DENIED */
	put_be32(buf + 16, 1); /* AUTH_ERROR */
	put_be32(buf + 20, auth_stat);
	CHECK_EQ(write(fd, buf, sizeof(buf)), (long long)sizeof(buf));
}

/* ---- client calls on their own thread, the test playing the target ------------ */

enum op {
	OP_NULL,
	OP_MKPART,
	OP_READ,
	OP_WRITE,
	OP_STATS,
	OP_CHECKSUMS,
	OP_SETATTR,
	OP_GETATTR,
	OP_REVOKE,
};

struct pending {
	pthread_t thread;
	struct osd_ctl_client *c;
	enum op op;
	uint8_t buf[64];
	struct osd_ctl_stats stats;
	struct osd_ctl_extent_csum csums[4];
	struct osd_ctl_attr attrs[2];
	uint64_t length;
	uint32_t old;
	size_t n;
	size_t failed;
	bool eof;
	int rc;
};

static void *run_op(void *arg)
{
	static const struct osd_ctl_obj_id id = { 0x11, 0x22 };
	static const struct osd_ctl_attr attrs[2] = { { 1, 2, 1, { 'a' } }, { 1, 3, 1, { 'b' } } };
	static const struct osd_ctl_attr_key keys[2] = { { 1, 2 }, { 1, 3 } };
	struct pending *p = arg;

	switch (p->op) {
	case OP_NULL:
		p->rc = osd_ctl_null(p->c);
		break;
	case OP_MKPART:
		p->rc = osd_ctl_partition_create(p->c, 0x0102030405060708ull);
		break;
	case OP_READ:
		p->rc = osd_ctl_read(p->c, &id, 7, p->buf, 8, &p->n, &p->eof);
		break;
	case OP_WRITE:
		p->rc = osd_ctl_write(p->c, &id, 9, "hello", 5, OSD_CTL_DATA_SYNC, NULL);
		break;
	case OP_STATS:
		p->rc = osd_ctl_stats(p->c, &p->stats);
		break;
	case OP_CHECKSUMS:
		p->rc = osd_ctl_checksums(p->c, &id, 0x0a0b, 4, true, p->csums, &p->n, &p->length);
		break;
	case OP_SETATTR:
		p->failed = 99;
		p->rc = osd_ctl_setattr(p->c, &id, attrs, 2, &p->failed);
		break;
	case OP_GETATTR:
		p->rc = osd_ctl_getattr(p->c, &id, keys, 2, p->attrs, 2, &p->n);
		break;
	case OP_REVOKE:
		p->old = 99;
		p->rc = osd_ctl_revoke_writers(p->c, &id, 7, &p->old);
		break;
	}
	return NULL;
}

static void start(struct pending *p, struct osd_ctl_client *c, enum op op)
{
	memset(p, 0, sizeof(*p));
	p->c = c;
	p->op = op;
	pthread_create(&p->thread, NULL, run_op, p);
}

static int finish(struct pending *p)
{
	pthread_join(p->thread, NULL);
	return p->rc;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_call_bytes(struct osd_ctl_client *c, int fd)
{
	uint8_t rec[4096];
	struct call_seen s;
	struct pending p;
	uint64_t now = (uint64_t)time(NULL), first_nonce = 0;

	for (int i = 0; i < 2; i++) {
		start(&p, c, OP_MKPART);
		parse_call(rec, read_record(fd, rec, sizeof(rec)), &s); /* tag and MAC checked */
		CHECK_EQ(s.rpcvers, 2);
		CHECK_EQ(s.prog, PROG);
		CHECK_EQ(s.vers, 1);
		CHECK_EQ(s.proc, 3); /* CREATE_PARTITION */
		CHECK_EQ(s.cred_flavor, FLAVOR);
		CHECK_EQ(s.cred_len, 28);
		CHECK_EQ(get_be32(s.cred), 2); /* version */
		CHECK_EQ(get_be32(s.cred + 4), KEY_ID);
		CHECK_EQ(get_be32(s.cred + 8), OSD_ID);
		CHECK(get_be64(s.cred + 12) + 5 >= now && get_be64(s.cred + 12) <= now + 5);
		CHECK_EQ(s.verf_flavor, FLAVOR);
		CHECK_EQ(s.verf_len, 48);
		CHECK_EQ(s.args_len, 8);
		CHECK(memcmp(s.args, "\1\2\3\4\5\6\7\10", 8) == 0);
		/* every call a nonce of its own: the target refuses one seen before */
		if (i)
			CHECK(s.nonce != first_nonce);
		first_nonce = s.nonce;
		send_status(fd, &s, 0);
		CHECK_EQ(finish(&p), 0);
	}
}

static void test_write_data_and_padding(struct osd_ctl_client *c, int fd)
{
	static const uint8_t want[] = {
		0, 0, 0, 0, 0,   0,   0,   0x11, 0,   0, 0, 0, 0, 0, 0, 0x22, /* id */
		0, 0, 0, 0, 0,   0,   0,   9,                                 /* offset */
		0, 0, 0, 1,                                                   /* DATA_SYNC */
		0, 0, 0, 5, 'h', 'e', 'l', 'l',  'o', 0, 0, 0,                /* data, pad */
	};
	uint8_t rec[4096], res[16] = { 0 };
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_WRITE);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.proc, 8);
	CHECK_EQ(s.args_len, sizeof(want));
	CHECK(memcmp(s.args, want, sizeof(want)) == 0);
	put_be32(res + 4, 5); /* count, then the verifier */
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
	CHECK_EQ(finish(&p), 0);
	/* a target that claims to have written less than it was sent */
	start(&p, c, OP_WRITE);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	put_be32(res + 4, 4);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
	CHECK_EQ(finish(&p), -EIO);
}

/* A NULL round trip on the connection the client opens next. */
static int expect_reconnect(struct osd_ctl_client *c, int lfd, int old_fd)
{
	uint8_t rec[4096];
	struct call_seen s;
	struct pending p;
	int fd;

	close(old_fd);
	start(&p, c, OP_NULL);
	fd = accept_conn(lfd);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.proc, 0);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, rec, 0);
	CHECK_EQ(finish(&p), 0);
	return fd;
}

static int test_statuses(struct osd_ctl_client *c, int lfd, int fd)
{
	static const struct {
		uint32_t status;
		int err;
	} map[] = {
		{ 2, -ENOENT },  { 17, -EEXIST },       { 39, -ENOTEMPTY },
		{ 28, -ENOSPC }, { 10006, -EREMOTEIO }, { 12345, -EPROTO },
	};
	uint8_t rec[4096];
	struct call_seen s;
	struct pending p;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		start(&p, c, OP_MKPART);
		parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
		send_status(fd, &s, map[i].status);
		CHECK_EQ(finish(&p), map[i].err);
	}
	/* a status outside the protocol: a peer not to be trusted further */
	return expect_reconnect(c, lfd, fd);
}

static int test_read(struct osd_ctl_client *c, int lfd, int fd)
{
	uint8_t rec[4096], res[24];
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_READ);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.args_len, 28);
	CHECK_EQ(get_be32(s.args + 24), 8); /* count */
	put_be32(res, 0);
	put_be32(res + 4, 1); /* eof */
	put_be32(res + 8, 3);
	memcpy(res + 12, "abc\0", 4);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, 16);
	CHECK_EQ(finish(&p), 0);
	CHECK_EQ(p.n, 3);
	CHECK(p.eof);
	CHECK(memcmp(p.buf, "abc", 3) == 0);
	/* more data than asked for is refused before it is copied */
	start(&p, c, OP_READ);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	put_be32(res + 4, 0);
	put_be32(res + 8, 12);
	memset(res + 12, 'x', 12);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, 24);
	CHECK_EQ(finish(&p), -EPROTO);
	return expect_reconnect(c, lfd, fd);
}

/* STATS: procedure 14 without arguments; its result, status and sixteen
 * hypers in osd_ctl.x's order, decoded field by field. */
static int test_stats(struct osd_ctl_client *c, int lfd, int fd)
{
	uint8_t rec[4096], res[4 + 16 * 8];
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_STATS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.proc, 14);
	CHECK_EQ(s.args_len, 0);
	put_be32(res, 0);
	for (int i = 0; i < 16; i++) /* field i holds 0x0i0000000000010i */
		put_be64(res + 4 + 8 * i, (uint64_t)i << 56 | 0x100 | (uint64_t)i);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
	CHECK_EQ(finish(&p), 0);
	CHECK_EQ(p.stats.started_ns, 0x0000000000000100ull);
	CHECK_EQ(p.stats.nfs_read_ops, 0x0100000000000101ull);
	CHECK_EQ(p.stats.nfs_read_bytes, 0x0200000000000102ull);
	CHECK_EQ(p.stats.nfs_write_ops, 0x0300000000000103ull);
	CHECK_EQ(p.stats.nfs_write_bytes, 0x0400000000000104ull);
	CHECK_EQ(p.stats.nfs_write_unstable, 0x0500000000000105ull);
	CHECK_EQ(p.stats.nfs_write_data_sync, 0x0600000000000106ull);
	CHECK_EQ(p.stats.nfs_write_file_sync, 0x0700000000000107ull);
	CHECK_EQ(p.stats.nfs_commit_ops, 0x0800000000000108ull);
	CHECK_EQ(p.stats.nfs_err_rejected, 0x0900000000000109ull);
	CHECK_EQ(p.stats.nfs_err_io, 0x0a0000000000010aull);
	CHECK_EQ(p.stats.nfs_err_other, 0x0b0000000000010bull);
	CHECK_EQ(p.stats.ctl_read_ops, 0x0c0000000000010cull);
	CHECK_EQ(p.stats.ctl_read_bytes, 0x0d0000000000010dull);
	CHECK_EQ(p.stats.ctl_write_ops, 0x0e0000000000010eull);
	CHECK_EQ(p.stats.ctl_write_bytes, 0x0f0000000000010full);
	/* a target older than STATS: -EOPNOTSUPP on the same connection */
	start(&p, c, OP_STATS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_proc_unavail(fd, s.xid, s.nonce);
	CHECK_EQ(finish(&p), -EOPNOTSUPP);
	start(&p, c, OP_MKPART);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_status(fd, &s, 0);
	CHECK_EQ(finish(&p), 0);
	/* a result one hyper short does not decode */
	start(&p, c, OP_STATS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res) - 8);
	CHECK_EQ(finish(&p), -EPROTO);
	return expect_reconnect(c, lfd, fd);
}

/* CHECKSUMS: procedure 15, its arguments' bytes, and its results decoded
 * extent by extent; more extents than asked, or a verify value outside
 * the enum, is a reply not to trust. */
static int test_checksums(struct osd_ctl_client *c, int lfd, int fd)
{
	static const uint8_t want_args[] = {
		0, 0, 0, 0, 0, 0, 0,    0x11, 0, 0, 0, 0, 0, 0, 0, 0x22, /* id */
		0, 0, 0, 0, 0, 0, 0x0a, 0x0b,                            /* first_extent */
		0, 0, 0, 4,                                              /* count */
		0, 0, 0, 1,                                              /* verify */
	};
	uint8_t rec[4096], res[16 + 12 * 5];
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_CHECKSUMS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.proc, 15);
	CHECK_EQ(s.args_len, sizeof(want_args));
	CHECK_MEM(s.args, want_args, sizeof(want_args));
	put_be32(res, 0);
	put_be64(res + 4, 0x30005); /* length */
	put_be32(res + 12, 2);
	put_be32(res + 16, 0xdeadbeef); /* crc, stored, verify */
	put_be32(res + 20, 1);
	put_be32(res + 24, 2);
	put_be32(res + 28, 0x12345678);
	put_be32(res + 32, 0);
	put_be32(res + 36, 1);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, 16 + 12 * 2);
	CHECK_EQ(finish(&p), 0);
	CHECK_EQ(p.n, 2);
	CHECK_EQ(p.length, 0x30005);
	CHECK_EQ(p.csums[0].crc, 0xdeadbeef);
	CHECK_EQ(p.csums[0].stored, true);
	CHECK_EQ(p.csums[0].verify, OSD_CTL_CSUM_MISMATCH);
	CHECK_EQ(p.csums[1].crc, 0x12345678);
	CHECK_EQ(p.csums[1].stored, false);
	CHECK_EQ(p.csums[1].verify, OSD_CTL_CSUM_OK);
	/* a verify of 4 is no value of the enum */
	start(&p, c, OP_CHECKSUMS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	put_be32(res + 24, 4);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, 16 + 12 * 2);
	CHECK_EQ(finish(&p), -EPROTO);
	fd = expect_reconnect(c, lfd, fd);
	/* five extents for four asked */
	start(&p, c, OP_CHECKSUMS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	put_be32(res + 24, 1);
	put_be32(res + 12, 5);
	memset(res + 40, 0, sizeof(res) - 40);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
	CHECK_EQ(finish(&p), -EPROTO);
	return expect_reconnect(c, lfd, fd);
}

/* A reply the client must not trust closes the connection; the next call
 * opens a new one. */
static int test_untrusted_reply(struct osd_ctl_client *c, int lfd, int fd, bool wrong_xid)
{
	uint8_t rec[4096], res[4] = { 0 };
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_NULL);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	if (wrong_xid)
		send_reply(fd, s.xid + 1, s.nonce, VERF_RIGHT, res, 0);
	else
		send_reply(fd, s.xid, s.nonce, VERF_WRONG, res, 0);
	CHECK_EQ(finish(&p), -EPROTO);
	return expect_reconnect(c, lfd, fd);
}

/* Results changed on their way (a counter of STATS, the status of a
 * MKPART): the verifier covers them, so the reply is not believed. */
static int test_changed_results(struct osd_ctl_client *c, int lfd, int fd)
{
	uint8_t rec[4096], res[4 + 16 * 8] = { 0 };
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_STATS);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_reply(fd, s.xid, s.nonce, VERF_CHANGED, res, sizeof(res));
	CHECK_EQ(finish(&p), -EPROTO);
	fd = expect_reconnect(c, lfd, fd);
	start(&p, c, OP_MKPART);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	put_be32(res, 2); /* NOENT, changed to 3 */
	send_reply(fd, s.xid, s.nonce, VERF_CHANGED, res, 4);
	CHECK_EQ(finish(&p), -EPROTO);
	return expect_reconnect(c, lfd, fd);
}

static void test_denied_keeps_connection(struct osd_ctl_client *c, int fd)
{
	uint8_t rec[4096];
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_MKPART);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_denied(fd, s.xid, 3); /* AUTH_BADVERF */
	CHECK_EQ(finish(&p), -EACCES);
	start(&p, c, OP_MKPART); /* same connection */
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_status(fd, &s, 0);
	CHECK_EQ(finish(&p), 0);
}

static int test_timeout_then_reconnect(struct osd_ctl_client *c, int lfd, int fd)
{
	uint8_t rec[4096];
	struct call_seen s;
	struct pending p;
	struct timespec t0, t1;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	start(&p, c, OP_MKPART);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(finish(&p), -ETIMEDOUT); /* we never answer */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(ms >= 250 && ms < 2000);
	/* A late reply on that connection could be taken for the next call's:
	 * the client must have dropped it and come back on a new one. */
	return expect_reconnect(c, lfd, fd);
}

static int test_peer_closes(struct osd_ctl_client *c, int lfd, int fd)
{
	uint8_t rec[4096];
	struct pending p;

	start(&p, c, OP_NULL);
	read_record(fd, rec, sizeof(rec));
	shutdown(fd, SHUT_RDWR);
	CHECK_EQ(finish(&p), -ECONNRESET);
	return expect_reconnect(c, lfd, fd);
}

#define THREADS 4
#define CALLS_PER_THREAD 25

struct worker {
	pthread_t thread;
	struct osd_ctl_client *c;
	int failures;
};

static void *null_calls(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < CALLS_PER_THREAD; i++)
		w->failures += osd_ctl_null(w->c) != 0;
	return NULL;
}

/* One client shared by several threads: calls reach the target one whole
 * record at a time, each answered by its own reply. */
static void test_shared_between_threads(struct osd_ctl_client *c, int fd)
{
	struct worker w[THREADS];
	uint8_t rec[4096];
	struct call_seen s;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .c = c };
		pthread_create(&w[i].thread, NULL, null_calls, &w[i]);
	}
	for (int i = 0; i < THREADS * CALLS_PER_THREAD; i++) {
		parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
		CHECK_EQ(s.args_len, 0);
		send_reply(fd, s.xid, s.nonce, VERF_RIGHT, rec, 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i].thread, NULL);
		CHECK_EQ(w[i].failures, 0);
	}
}

/* SETATTR: the failed index comes back with a failing status too (it
 * names the attribute the target refused), and with success. */
static void test_setattr_reports_the_failed_index(struct osd_ctl_client *c, int fd)
{
	static const struct {
		uint32_t status, index;
		int err;
	} replies[] = {
		{ 22, 1, -EINVAL },
		{ 0, 0, 0 },
	};
	uint8_t rec[4096], res[8];
	struct call_seen s;
	struct pending p;

	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		start(&p, c, OP_SETATTR);
		parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
		CHECK_EQ(s.proc, 10);
		put_be32(res, replies[i].status);
		put_be32(res + 4, replies[i].index);
		send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
		CHECK_EQ(finish(&p), replies[i].err);
		CHECK_EQ(p.failed, replies[i].index);
	}
}

/* GETATTR: an attribute the target has no value for comes back empty
 * (XDR leaves no buffer for it), beside one that has a value. */
static void test_getattr_takes_an_unset_attribute(struct osd_ctl_client *c, int fd)
{
	uint8_t rec[4096], res[4 + 4 + 12 + 16];
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_GETATTR);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.proc, 9);
	put_be32(res, 0);     /* OSD_OK */
	put_be32(res + 4, 2); /* two attributes */
	put_be32(res + 8, 1);
	put_be32(res + 12, 2);
	put_be32(res + 16, 0); /* unset */
	put_be32(res + 20, 1);
	put_be32(res + 24, 3);
	put_be32(res + 28, 3);
	memcpy(res + 32, "xyz", 4);
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
	CHECK_EQ(finish(&p), 0);
	CHECK_EQ(p.n, 2);
	CHECK_EQ(p.attrs[0].len, 0);
	CHECK_EQ(p.attrs[1].len, 3);
	CHECK(memcmp(p.attrs[1].value, "xyz", 3) == 0);
}

/* REVOKE_WRITERS is procedure 16 with SET_CAP_VERSION's arguments and
 * result: the old version comes back; a target older than it answers
 * PROC_UNAVAIL, which is -EOPNOTSUPP. */
static void test_revoke_writers(struct osd_ctl_client *c, int fd)
{
	static const uint8_t want[] = {
		0, 0, 0, 0, 0, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 0x22, /* id */
		0, 0, 0, 7,                                           /* version */
	};
	uint8_t rec[4096], res[8];
	struct call_seen s;
	struct pending p;

	start(&p, c, OP_REVOKE);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	CHECK_EQ(s.proc, 16);
	CHECK_EQ(s.args_len, sizeof(want));
	CHECK(memcmp(s.args, want, sizeof(want)) == 0);
	put_be32(res, 0);     /* OSD_OK */
	put_be32(res + 4, 5); /* the version before */
	send_reply(fd, s.xid, s.nonce, VERF_RIGHT, res, sizeof(res));
	CHECK_EQ(finish(&p), 0);
	CHECK_EQ(p.old, 5);

	start(&p, c, OP_REVOKE);
	parse_call(rec, read_record(fd, rec, sizeof(rec)), &s);
	send_proc_unavail(fd, s.xid, s.nonce);
	CHECK_EQ(finish(&p), -EOPNOTSUPP);
	CHECK_EQ(p.old, 99);
}

static void test_local_argument_checks(struct osd_ctl_client *c)
{
	static const struct osd_ctl_obj_id id = { 1, 1 };
	static uint8_t big[OSD_CTL_CLIENT_MAX_DATA + 1];
	uint64_t ids[4];
	size_t n;
	bool eof;

	/* refused before anything is sent: the fake target sees nothing */
	CHECK_EQ(osd_ctl_write(c, &id, 0, big, sizeof(big), OSD_CTL_UNSTABLE, NULL), -EINVAL);
	CHECK_EQ(osd_ctl_write(c, &id, 0, big, 1, (enum osd_ctl_stable)3, NULL), -EINVAL);
	CHECK_EQ(osd_ctl_objects_create(c, 1, NULL, OSD_CTL_CLIENT_MAX_BATCH + 1, NULL), -EINVAL);
	CHECK_EQ(osd_ctl_list(c, 1, 0, ids, 0, &n, &eof), -EINVAL);
	CHECK_EQ(osd_ctl_checksums(c, &id, 0, OSD_CTL_CLIENT_MAX_CSUMS_VERIFY + 1, true, NULL, &n,
				   NULL),
		 -EINVAL);
	CHECK_EQ(osd_ctl_checksums(c, &id, 0, OSD_CTL_CLIENT_MAX_CSUMS + 1, false, NULL, &n, NULL),
		 -EINVAL);
}

int main(void)
{
	struct osd_ctl_client *c;
	char addr[32];
	uint16_t port = 0;
	unsigned int key_len = 0;
	int lfd, fd, err;

	test_key.id = KEY_ID;
	for (int i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		test_key.secret[i] = (uint8_t)i;
	HMAC(EVP_sha256(), test_key.secret, sizeof(test_key.secret),
	     (const unsigned char *)"pando-ctl osd 5", 15, ctl_key, &key_len);
	lfd = listen_loopback(&port);
	CHECK(lfd >= 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);

	CHECK(osd_ctl_connect("no-port", &test_key, OSD_ID, 300, &err) == NULL);
	CHECK_EQ(err, -EINVAL);
	c = osd_ctl_connect(addr, &test_key, OSD_ID, 300, &err);
	CHECK(c != NULL);
	if (!c)
		CHECK_DONE();
	fd = accept_conn(lfd);

	test_call_bytes(c, fd);
	test_write_data_and_padding(c, fd);
	fd = test_statuses(c, lfd, fd);
	fd = test_read(c, lfd, fd);
	fd = test_stats(c, lfd, fd);
	fd = test_checksums(c, lfd, fd);
	test_setattr_reports_the_failed_index(c, fd);
	test_getattr_takes_an_unset_attribute(c, fd);
	test_revoke_writers(c, fd);
	test_local_argument_checks(c);
	test_shared_between_threads(c, fd);
	test_denied_keeps_connection(c, fd);
	fd = test_untrusted_reply(c, lfd, fd, false);
	fd = test_untrusted_reply(c, lfd, fd, true);
	fd = test_changed_results(c, lfd, fd);
	fd = test_timeout_then_reconnect(c, lfd, fd);
	fd = test_peer_closes(c, lfd, fd);

	osd_ctl_close(c);
	close(fd);
	close(lfd);
	CHECK_DONE();
}
