/* The record assembler's memory policy (rpc_record.h), the reply queue's
 * ordering and broken state (rpc_sendq.h), and the log rate limit. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bufpool.h"
#include "byteorder.h"
#include "check.h"
#include "log.h"
#include "rpc_record.h"
#include "rpc_sendq.h"

#define MAX_RECORD (256u << 10)
#define LAST 0x80000000u

static struct bufpool pool;

/* Feeds bytes as a peer would, in reads of at most `chunk`; stops at the
 * first step that is not MORE and returns it. */
static int feed(struct rpc_record *r, const uint8_t *data, size_t len, size_t chunk, size_t *used)
{
	static uint8_t scratch[512];
	size_t off = 0;
	int step = RPC_REC_MORE;

	while (off < len && step == RPC_REC_MORE) {
		uint8_t *dst;
		size_t room, n;

		CHECK_EQ(rpc_record_space(r, scratch, sizeof(scratch), &dst, &room), 0);
		n = room < chunk ? room : chunk;
		n = n < len - off ? n : len - off;
		memcpy(dst, data + off, n);
		off += n;
		step = rpc_record_got(r, n);
	}
	*used = off;
	return step;
}

static size_t mark(uint8_t *p, uint32_t len, int last)
{
	put_be32(p, len | (last ? LAST : 0));
	return 4;
}

static void test_small_record(void)
{
	struct rpc_record r;
	uint8_t in[4 + 100];
	struct rpc_buf b;
	size_t used;

	rpc_record_init(&r, &pool, MAX_RECORD);
	mark(in, 100, 1);
	for (int i = 0; i < 100; i++)
		in[4 + i] = (uint8_t)i;
	CHECK_EQ(feed(&r, in, sizeof(in), 7, &used), RPC_REC_ADMIT);
	CHECK_EQ(used, sizeof(in));
	CHECK_EQ(r.cap, 100); /* exactly what arrived */
	CHECK_EQ(rpc_record_admit(&r, 1000), RPC_REC_DONE);
	rpc_record_take(&r, &b);
	CHECK_EQ(b.len, 100);
	CHECK_MEM(b.data, in + 4, 100);
	CHECK(!rpc_record_started(&r));
	rpc_buf_release(&pool, &b);
}

/* A fragment declaring 200 KiB buys RPC_RECORD_PREAUTH bytes until the
 * call is admitted; admitted, it moves to a pool buffer. */
static void test_declared_size_is_not_allocated(void)
{
	size_t len = 4 + (200u << 10);
	uint8_t *in = calloc(1, len);
	struct rpc_record r;
	struct rpc_buf b;
	size_t used;

	rpc_record_init(&r, &pool, MAX_RECORD);
	mark(in, 200u << 10, 1);
	CHECK_EQ(feed(&r, in, len, 100000, &used), RPC_REC_ADMIT);
	CHECK_EQ(used, 4 + RPC_RECORD_PREAUTH);
	CHECK_EQ(rpc_record_preauth_bytes(&r), RPC_RECORD_PREAUTH);
	CHECK_EQ(rpc_record_admit(&r, MAX_RECORD), RPC_REC_MORE);
	CHECK_EQ(feed(&r, in + used, len - used, 100000, &used), RPC_REC_DONE);
	rpc_record_take(&r, &b);
	CHECK(b.pooled);
	CHECK_EQ(b.len, 200u << 10);
	rpc_buf_release(&pool, &b);
	free(in);
}

/* Denied: the rest is read into the scratch buffer, never kept. */
static void test_denied_record_is_dropped(void)
{
	size_t body = 100u << 10, len = 2 * 4 + body;
	uint8_t *in = calloc(1, len);
	struct rpc_record r;
	struct rpc_buf b;
	size_t used, off;

	rpc_record_init(&r, &pool, MAX_RECORD);
	off = mark(in, (uint32_t)(body / 2), 0);
	off += body / 2;
	mark(in + off, (uint32_t)(body / 2), 1);
	CHECK_EQ(feed(&r, in, len, 65536, &used), RPC_REC_ADMIT);
	CHECK_EQ(rpc_record_deny(&r), RPC_REC_MORE);
	CHECK_EQ(feed(&r, in + used, len - used, 65536, &off), RPC_REC_DONE);
	CHECK_EQ(used + off, len);
	CHECK_EQ(r.cap, RPC_RECORD_PREAUTH);
	CHECK_EQ(r.dropped, body - RPC_RECORD_PREAUTH);
	rpc_record_take(&r, &b);
	CHECK_EQ(b.len, RPC_RECORD_PREAUTH);
	rpc_buf_release(&pool, &b);
	free(in);
}

static void test_limits(void)
{
	uint8_t in[16];
	struct rpc_record r;
	size_t used;

	/* A fragment over max_record is refused from its mark. */
	rpc_record_init(&r, &pool, MAX_RECORD);
	mark(in, MAX_RECORD + 1, 1);
	CHECK_EQ(feed(&r, in, 4, 4, &used), -EMSGSIZE);
	rpc_record_reset(&r);
	/* Too many fragments (empty ones). */
	rpc_record_init(&r, &pool, MAX_RECORD);
	mark(in, 0, 0);
	for (unsigned i = 0; i < RPC_RECORD_MAX_FRAGMENTS; i++)
		CHECK_EQ(feed(&r, in, 4, 4, &used), RPC_REC_MORE);
	CHECK_EQ(feed(&r, in, 4, 4, &used), -EPROTO);
	rpc_record_reset(&r);
}

static void test_admission_limit(void)
{
	uint8_t in[4 + 4096 + 100] = { 0 };
	struct rpc_record r;
	size_t used;

	rpc_record_init(&r, &pool, MAX_RECORD);
	mark(in, 4096 + 100, 1);
	CHECK_EQ(feed(&r, in, sizeof(in), 8192, &used), RPC_REC_ADMIT);
	CHECK_EQ(rpc_record_admit(&r, 4096 + 50), -EMSGSIZE);
	rpc_record_reset(&r);
}

static void test_sendq_order_and_break(void)
{
	int sv[2];
	struct rpc_sendq q;
	struct rpc_out out;
	uint8_t hdr[8] = "abcdefgh", got[64];
	uint64_t progress;
	size_t n = 0;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rpc_sendq_init(&q, sv[0]);
	rpc_out_init(&out, hdr, sizeof(hdr));
	CHECK_EQ(rpc_sendq_send(&q, &out, 1), 0); /* written at once */
	CHECK_EQ(rpc_sendq_pending(&q, &progress), 0);
	while (n < 12)
		n += (size_t)read(sv[1], got + n, sizeof(got) - n);
	CHECK_EQ(get_be32(got), 0x80000000u | 8);
	CHECK_MEM(got + 4, hdr, 8);
	close(sv[1]);
	rpc_out_init(&out, hdr, sizeof(hdr));
	CHECK(rpc_sendq_send(&q, &out, 2) < 0); /* peer gone: broken */
	rpc_out_init(&out, hdr, sizeof(hdr));
	CHECK_EQ(rpc_sendq_send(&q, &out, 3), 0); /* dropped quietly */
	CHECK(rpc_sendq_flush(&q, 4) < 0);
	rpc_sendq_destroy(&q);
	close(sv[0]);
}

/* A reply the socket does not take whole waits, and so does every reply
 * after it; the thread's flush writes them in order. */
static void test_sendq_queues_in_order(void)
{
	int sv[2], small = 4096;
	struct rpc_sendq q;
	struct rpc_out out;
	uint8_t hdr[4] = { 1, 2, 3, 4 };
	uint8_t *big = malloc(1 << 20), *got = malloc(2 << 20);
	uint64_t progress;
	size_t n = 0;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	memset(big, 7, 1 << 20);
	rpc_sendq_init(&q, sv[0]);
	rpc_out_init(&out, hdr, sizeof(hdr));
	out.res = big;
	out.res_len = 1 << 20;
	CHECK_EQ(rpc_sendq_send(&q, &out, 10), 1); /* queued */
	rpc_out_init(&out, hdr, sizeof(hdr));
	CHECK_EQ(rpc_sendq_send(&q, &out, 11), 1); /* behind it */
	CHECK(rpc_sendq_pending(&q, &progress) > 0);
	CHECK_EQ(progress, 10);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	while (n < (1u << 20) + 16) {
		ssize_t k = read(sv[1], got + n, (2u << 20) - n);

		if (k > 0)
			n += (size_t)k;
		CHECK_EQ(rpc_sendq_flush(&q, 12), 0);
	}
	CHECK_EQ(rpc_sendq_pending(&q, &progress), 0);
	CHECK_EQ(get_be32(got), 0x80000000u | ((1u << 20) + 4));
	CHECK_EQ(get_be32(got + 8 + (1u << 20)), 0x80000000u | 4);
	rpc_sendq_destroy(&q);
	close(sv[0]);
	close(sv[1]);
	free(got);
}

int main(void)
{
	CHECK_EQ(bufpool_init(&pool, MAX_RECORD, 4), 0);
	test_small_record();
	test_declared_size_is_not_allocated();
	test_denied_record_is_dropped();
	test_limits();
	test_admission_limit();
	test_sendq_order_and_break();
	test_sendq_queues_in_order();
	bufpool_destroy(&pool);
	CHECK_DONE();
}
