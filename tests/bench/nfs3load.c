/*
 * nfs3load: an NFSv3 load generator that speaks the protocol by itself.
 *
 * ONC RPC (RFC 5531) over TCP with record marking, AUTH_SYS or AUTH_NONE,
 * hand-encoded WRITE (proc 7), READ (proc 6) and COMMIT (proc 21) from
 * RFC 1813.  Each stream owns one TCP connection and one file handle
 * (round-robin over the handles given) and does sequential I/O with up to
 * --depth calls pipelined on its connection: a sender thread keeps the
 * window full, a receiver thread matches replies to calls by xid.
 *
 * Every reply is checked (RPC accept state, NFS status, counts); anything
 * but success prints a message and exits 1.  At the end one JSON line goes
 * to stdout: bytes, seconds, MB/s (10^6 bytes), MiB/s, ops, ops/s and the
 * mean call latency.
 *
 * Streams that share a handle (more streams than handles) work on disjoint
 * ranges: stream s uses handle s % H at offsets from (s / H) * bytes_per_stream.
 * With --verify, writes carry a pattern that depends only on the file
 * offset, and reads check it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "hostport.h"

#define NFS_PROGRAM 100003u
#define NFS_V3 3u
#define NFSPROC3_READ 6u
#define NFSPROC3_WRITE 7u
#define NFSPROC3_COMMIT 21u
#define AUTH_NONE_FLAVOR 0u
#define AUTH_SYS_FLAVOR 1u
#define NFS3_FHSIZE 64
#define MAX_REQ (1u << 20)
#define MAX_DEPTH 1024u
#define SLOT_BITS 10u
#define MAX_RECORD (MAX_REQ + 64u * 1024u)
#define HDR_MAX 512

enum op { OP_WRITE, OP_READ };

struct fh {
	uint8_t data[NFS3_FHSIZE];
	uint32_t len;
};

struct options {
	char host[256];
	char port[16];
	struct fh *fhs;
	size_t fh_cap;
	unsigned nfh;
	enum op op;
	uint32_t req_size;
	uint64_t bytes_per_stream;
	unsigned streams;
	unsigned depth;
	uint32_t stable; /* 0 unstable, 1 data_sync, 2 file_sync */
	bool commit;
	bool verify;
	bool auth_sys;
	uint32_t uid, gid;
	unsigned timeout_s;
	bool progress;
};

static struct options opt = {
	.req_size = 1u << 20,
	.bytes_per_stream = 64u << 20,
	.streams = 1,
	.depth = 4,
	.auth_sys = true,
	.timeout_s = 600,
};

struct slot {
	uint32_t xid;
	bool busy;
	uint64_t offset;
	uint32_t count;
	uint32_t proc;
	struct timespec sent;
};

struct stream {
	unsigned idx;
	int fd;
	const struct fh *fh;
	uint64_t base;  /* first file offset of this stream's range */
	uint64_t total; /* bytes this stream moves */
	pthread_t sender, receiver;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slot *slots;
	unsigned free_slots;
	uint32_t gen;
	bool sender_done; /* every I/O call has been sent */
	unsigned inflight;

	struct timespec t_done; /* when its last reply was checked */
	struct timespec t_data; /* when its last READ/WRITE reply was checked */
	uint64_t done_bytes;    /* completed and checked */
	uint64_t ops;
	double lat_sum_s;

	uint8_t *wbuf; /* write payload (pattern or constant) */
	uint8_t *rbuf; /* receive buffer, one record */
};

static struct stream *streams;
static pthread_barrier_t start_barrier;
static struct timespec t_start;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	fputs("nfs3load: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static const char *nfs3_status_name(uint32_t s)
{
	switch (s) {
	case 0:
		return "NFS3_OK";
	case 1:
		return "NFS3ERR_PERM";
	case 2:
		return "NFS3ERR_NOENT";
	case 5:
		return "NFS3ERR_IO";
	case 6:
		return "NFS3ERR_NXIO";
	case 13:
		return "NFS3ERR_ACCES";
	case 17:
		return "NFS3ERR_EXIST";
	case 19:
		return "NFS3ERR_NODEV";
	case 20:
		return "NFS3ERR_NOTDIR";
	case 21:
		return "NFS3ERR_ISDIR";
	case 22:
		return "NFS3ERR_INVAL";
	case 27:
		return "NFS3ERR_FBIG";
	case 28:
		return "NFS3ERR_NOSPC";
	case 30:
		return "NFS3ERR_ROFS";
	case 70:
		return "NFS3ERR_STALE";
	case 10001:
		return "NFS3ERR_BADHANDLE";
	case 10004:
		return "NFS3ERR_NOTSUPP";
	case 10006:
		return "NFS3ERR_SERVERFAULT";
	case 10008:
		return "NFS3ERR_JUKEBOX";
	default:
		return "NFS3ERR_?";
	}
}

static const char *proc_name(uint32_t p)
{
	return p == NFSPROC3_WRITE ? "WRITE" : p == NFSPROC3_READ ? "READ" : "COMMIT";
}

/* ---- XDR writer ------------------------------------------------------- */

struct xw {
	uint8_t *p;
	size_t len, cap;
};

static void xw_u32(struct xw *w, uint32_t v)
{
	if (w->len + 4 > w->cap)
		die("internal: header overflow");
	v = htonl(v);
	memcpy(w->p + w->len, &v, 4);
	w->len += 4;
}

static void xw_u64(struct xw *w, uint64_t v)
{
	xw_u32(w, (uint32_t)(v >> 32));
	xw_u32(w, (uint32_t)v);
}

static void xw_opaque(struct xw *w, const void *data, uint32_t n)
{
	size_t padded = (n + 3u) & ~3u;
	xw_u32(w, n);
	if (w->len + padded > w->cap)
		die("internal: header overflow");
	memcpy(w->p + w->len, data, n);
	memset(w->p + w->len + n, 0, padded - n);
	w->len += padded;
}

/* ---- XDR reader ------------------------------------------------------- */

struct xr {
	const uint8_t *p;
	size_t len, pos;
	bool bad;
};

static uint32_t xr_u32(struct xr *r)
{
	uint32_t v;
	if (r->pos + 4 > r->len) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p + r->pos, 4);
	r->pos += 4;
	return ntohl(v);
}

static void xr_skip(struct xr *r, size_t n)
{
	if (r->pos + n > r->len) {
		r->bad = true;
		return;
	}
	r->pos += n;
}

static void xr_skip_post_op_attr(struct xr *r)
{
	if (xr_u32(r))
		xr_skip(r, 84); /* fattr3 */
}

static void xr_skip_wcc_data(struct xr *r)
{
	if (xr_u32(r))
		xr_skip(r, 24); /* wcc_attr: size, mtime, ctime */
	xr_skip_post_op_attr(r);
}

/* ---- data pattern ----------------------------------------------------- */

static inline uint64_t pattern_word(uint64_t offset)
{
	return (offset / 8 + 1) * 0x9E3779B97F4A7C15ull;
}

static void fill_pattern(uint8_t *buf, uint64_t offset, uint32_t n)
{
	for (uint32_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w = pattern_word(offset + i);
		memcpy(buf + i, &w, 8);
	}
}

static void check_pattern(const struct stream *s, const uint8_t *buf, uint64_t offset, uint32_t n)
{
	for (uint32_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w = pattern_word(offset + i), got;
		memcpy(&got, buf + i, 8);
		if (got != w)
			die("stream %u: READ data mismatch at file offset %" PRIu64, s->idx,
			    offset + i);
	}
}

/* ---- socket I/O ------------------------------------------------------- */

static void write_all_iov(int fd, struct iovec *iov, int n, const struct stream *s)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("stream %u: send: %s", s->idx, strerror(errno));
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

static void read_all(int fd, void *buf, size_t n, const struct stream *s)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("stream %u: receive: %s", s->idx, strerror(errno));
		}
		if (r == 0)
			die("stream %u: server closed the connection", s->idx);
		p += r;
		n -= (size_t)r;
	}
}

/* Reads one whole RPC record (all fragments) into s->rbuf; returns its length. */
static size_t read_record(struct stream *s)
{
	size_t len = 0;
	for (;;) {
		uint32_t mark;
		read_all(s->fd, &mark, 4, s);
		mark = ntohl(mark);
		uint32_t flen = mark & 0x7fffffffu;
		if (len + flen > MAX_RECORD)
			die("stream %u: reply record of more than %u bytes", s->idx, MAX_RECORD);
		read_all(s->fd, s->rbuf + len, flen, s);
		len += flen;
		if (mark & 0x80000000u)
			return len;
	}
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		die("%s:%s: %s", host, port, gai_strerror(rc));
	int fd = -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("connect %s:%s: %s", host, port, strerror(errno));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* ---- calls ------------------------------------------------------------ */

static void encode_call_header(struct xw *w, uint32_t xid, uint32_t proc)
{
	xw_u32(w, 0); /* record mark, patched later */
	xw_u32(w, xid);
	xw_u32(w, 0); /* CALL */
	xw_u32(w, 2); /* RPC version */
	xw_u32(w, NFS_PROGRAM);
	xw_u32(w, NFS_V3);
	xw_u32(w, proc);
	if (opt.auth_sys) {
		static const char machine[] = "nfs3load";
		uint8_t body[64];
		struct xw b = { body, 0, sizeof body };
		xw_u32(&b, 0); /* stamp */
		xw_opaque(&b, machine, sizeof machine - 1);
		xw_u32(&b, opt.uid);
		xw_u32(&b, opt.gid);
		xw_u32(&b, 0); /* no supplementary groups */
		xw_u32(w, AUTH_SYS_FLAVOR);
		xw_opaque(w, body, (uint32_t)b.len);
	} else {
		xw_u32(w, AUTH_NONE_FLAVOR);
		xw_u32(w, 0);
	}
	xw_u32(w, AUTH_NONE_FLAVOR); /* verifier */
	xw_u32(w, 0);
}

static void send_call(struct stream *s, const struct slot *sl)
{
	uint32_t proc = sl->proc, count = sl->count;
	uint64_t offset = sl->offset;
	uint8_t hdr[HDR_MAX];
	struct xw w = { hdr, 0, sizeof hdr };
	static const uint8_t zero_pad[4];

	encode_call_header(&w, sl->xid, proc);
	xw_opaque(&w, s->fh->data, s->fh->len);
	xw_u64(&w, offset);
	xw_u32(&w, count);
	struct iovec iov[3];
	int niov = 1;
	size_t body = w.len - 4;
	if (proc == NFSPROC3_WRITE) {
		xw_u32(&w, opt.stable);
		xw_u32(&w, count);
		body = w.len - 4 + count + ((4u - (count & 3u)) & 3u);
		if (opt.verify)
			fill_pattern(s->wbuf, offset, count);
		iov[1].iov_base = s->wbuf;
		iov[1].iov_len = count;
		iov[2].iov_base = (void *)zero_pad;
		iov[2].iov_len = (4u - (count & 3u)) & 3u;
		niov = iov[2].iov_len ? 3 : 2;
	}
	uint32_t mark = htonl(0x80000000u | (uint32_t)body);
	memcpy(hdr, &mark, 4);
	iov[0].iov_base = hdr;
	iov[0].iov_len = w.len;
	write_all_iov(s->fd, iov, niov, s);
}

/* Takes a free slot (waits while the window is full) and fills it in. */
static struct slot *get_slot(struct stream *s, uint32_t proc, uint64_t offset, uint32_t count)
{
	pthread_mutex_lock(&s->lock);
	while (s->free_slots == 0)
		pthread_cond_wait(&s->cond, &s->lock);
	struct slot *sl = NULL;
	for (unsigned i = 0; i < opt.depth && !sl; i++) {
		if (!s->slots[i].busy) {
			sl = &s->slots[i];
			sl->busy = true;
			sl->xid = (++s->gen << SLOT_BITS) | i;
		}
	}
	sl->proc = proc;
	sl->offset = offset;
	sl->count = count;
	clock_gettime(CLOCK_MONOTONIC, &sl->sent);
	s->free_slots--;
	s->inflight++;
	pthread_cond_broadcast(&s->cond); /* wakes the receiver */
	pthread_mutex_unlock(&s->lock);
	return sl;
}

static void *sender_main(void *arg)
{
	struct stream *s = arg;
	pthread_barrier_wait(&start_barrier);
	uint32_t proc = opt.op == OP_WRITE ? NFSPROC3_WRITE : NFSPROC3_READ;
	for (uint64_t off = 0; off < s->total; off += opt.req_size) {
		uint64_t left = s->total - off;
		uint32_t count = left < opt.req_size ? (uint32_t)left : opt.req_size;
		/* The lock is not held while sending: the slot was filled in under
		 * it, and its reply cannot come before the call is sent. */
		send_call(s, get_slot(s, proc, s->base + off, count));
	}
	if (opt.commit && opt.op == OP_WRITE) {
		/* COMMIT after every WRITE has been answered. */
		pthread_mutex_lock(&s->lock);
		while (s->inflight > 0)
			pthread_cond_wait(&s->cond, &s->lock);
		pthread_mutex_unlock(&s->lock);
		uint32_t count = s->total > UINT32_MAX ? 0 : (uint32_t)s->total;
		send_call(s, get_slot(s, NFSPROC3_COMMIT, s->base, count));
	}
	pthread_mutex_lock(&s->lock);
	s->sender_done = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The slot a reply answers, from its xid; dies on a record that is not a
 * reply to a call in flight. */
static struct slot *reply_slot(struct stream *s, struct xr *r)
{
	uint32_t xid = xr_u32(r);
	uint32_t mtype = xr_u32(r);
	if (r->bad || mtype != 1)
		die("stream %u: record is not an RPC reply", s->idx);
	unsigned idx = xid & ((1u << SLOT_BITS) - 1);
	struct slot *sl = idx < opt.depth ? &s->slots[idx] : NULL;
	pthread_mutex_lock(&s->lock);
	bool known = sl && sl->busy && sl->xid == xid;
	pthread_mutex_unlock(&s->lock);
	if (!known)
		die("stream %u: reply with unknown xid 0x%08x", s->idx, xid);
	return sl;
}

/* The RPC reply header and the NFS status: anything but an accepted call
 * with NFS3_OK dies. */
static void check_reply_status(const struct stream *s, struct xr *r, const struct slot *sl)
{
	const char *pn = proc_name(sl->proc);
	uint32_t reply_stat = xr_u32(r);
	if (reply_stat != 0) {
		uint32_t why = xr_u32(r);
		die("stream %u: %s offset %" PRIu64 ": RPC call denied (%s, %u)", s->idx, pn,
		    sl->offset, why == 0 ? "RPC_MISMATCH" : "AUTH_ERROR", why == 0 ? 0 : xr_u32(r));
	}
	xr_u32(r); /* verifier flavor */
	uint32_t vlen = xr_u32(r);
	xr_skip(r, (vlen + 3u) & ~3u);
	uint32_t accept = xr_u32(r);
	if (r->bad)
		die("stream %u: %s: truncated RPC reply header", s->idx, pn);
	if (accept != 0) {
		static const char *names[] = { "SUCCESS",      "PROG_UNAVAIL", "PROG_MISMATCH",
					       "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR" };
		die("stream %u: %s offset %" PRIu64 ": RPC not accepted: %s (%u)", s->idx, pn,
		    sl->offset, accept < 6 ? names[accept] : "?", accept);
	}
	uint32_t status = xr_u32(r);
	if (r->bad)
		die("stream %u: %s: truncated NFS reply", s->idx, pn);
	if (status != 0)
		die("stream %u: %s offset %" PRIu64 " count %u: %s (%u)", s->idx, pn, sl->offset,
		    sl->count, nfs3_status_name(status), status);
}

/* WRITE3resok; returns the bytes written. */
static uint32_t check_write_body(const struct stream *s, struct xr *r, const struct slot *sl)
{
	xr_skip_wcc_data(r);
	uint32_t count = xr_u32(r);
	uint32_t committed = xr_u32(r);
	xr_skip(r, 8);
	if (r->bad)
		die("stream %u: WRITE offset %" PRIu64 ": truncated reply", s->idx, sl->offset);
	if (count != sl->count)
		die("stream %u: WRITE offset %" PRIu64 ": short write, %u of %u bytes", s->idx,
		    sl->offset, count, sl->count);
	if (committed < opt.stable)
		die("stream %u: WRITE offset %" PRIu64 ": asked stable=%u, server committed=%u",
		    s->idx, sl->offset, opt.stable, committed);
	return count;
}

/* READ3resok (its data checked with --verify); returns the bytes read. */
static uint32_t check_read_body(const struct stream *s, struct xr *r, const struct slot *sl)
{
	xr_skip_post_op_attr(r);
	uint32_t count = xr_u32(r);
	xr_u32(r); /* eof */
	uint32_t dlen = xr_u32(r);
	if (r->bad || dlen != count || r->pos + dlen > r->len)
		die("stream %u: READ offset %" PRIu64 ": malformed reply", s->idx, sl->offset);
	if (count != sl->count)
		die("stream %u: READ offset %" PRIu64
		    ": short read, %u of %u bytes (file too small?)",
		    s->idx, sl->offset, count, sl->count);
	if (opt.verify)
		check_pattern(s, s->rbuf + r->pos, sl->offset, count);
	return count;
}

/* The call is answered: its latency and bytes count, and its slot is free. */
static void complete_slot(struct stream *s, struct slot *sl, uint64_t moved)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&s->lock);
	s->lat_sum_s += ts_diff(&sl->sent, &now);
	s->ops++;
	s->done_bytes += moved;
	if (sl->proc != NFSPROC3_COMMIT)
		s->t_data = now;
	sl->busy = false;
	s->free_slots++;
	s->inflight--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void check_reply(struct stream *s, size_t len)
{
	struct xr r = { s->rbuf, len, 0, false };
	struct slot *sl = reply_slot(s, &r);
	uint64_t moved = 0;

	check_reply_status(s, &r, sl);
	if (sl->proc == NFSPROC3_WRITE) {
		moved = check_write_body(s, &r, sl);
	} else if (sl->proc == NFSPROC3_READ) {
		moved = check_read_body(s, &r, sl);
	} else {
		xr_skip_wcc_data(&r);
		xr_skip(&r, 8);
		if (r.bad)
			die("stream %u: COMMIT: truncated reply", s->idx);
	}
	complete_slot(s, sl, moved);
}

static void *receiver_main(void *arg)
{
	struct stream *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (s->inflight == 0 && !s->sender_done)
			pthread_cond_wait(&s->cond, &s->lock);
		bool finished = s->inflight == 0 && s->sender_done;
		pthread_mutex_unlock(&s->lock);
		if (finished) {
			clock_gettime(CLOCK_MONOTONIC, &s->t_done);
			return NULL;
		}
		check_reply(s, read_record(s));
	}
}

/* ---- options ---------------------------------------------------------- */

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		die("bad %s: %s", what, s);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' || *end == 'B')
		end += strspn(end, "iB");
	if (*end)
		die("bad %s: %s", what, s);
	return v;
}

static void parse_fh(const char *hex, struct fh *out)
{
	size_t n = strlen(hex);
	if (n == 0 || n % 2 || n / 2 > NFS3_FHSIZE)
		die("bad --fh (want 2..128 hex digits): %s", hex);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned b;
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			die("bad --fh hex: %s", hex);
		out->data[i] = (uint8_t)b;
	}
	out->len = (uint32_t)(n / 2);
}

static void usage(FILE *f)
{
	fputs("usage: nfs3load --server HOST:PORT --fh HEX [--fh HEX ...] --op write|read\n"
	      "                [--req-size BYTES] [--bytes-per-stream N] [--streams S] [--depth D]\n"
	      "                [--stable unstable|datasync|filesync] [--commit] [--verify]\n"
	      "                [--auth sys|none] [--uid N] [--gid N] [--timeout SEC] [--progress]\n"
	      "Sizes take K/M/G suffixes (powers of 2). Prints one JSON line of results.\n",
	      f);
}

enum {
	O_SERVER = 1,
	O_FH,
	O_OP,
	O_REQ,
	O_BPS,
	O_STREAMS,
	O_DEPTH,
	O_STABLE,
	O_COMMIT,
	O_VERIFY,
	O_AUTH,
	O_UID,
	O_GID,
	O_TIMEOUT,
	O_PROGRESS,
	O_HELP
};

static const struct option longopts[] = {
	{ "server", required_argument, NULL, O_SERVER },
	{ "fh", required_argument, NULL, O_FH },
	{ "op", required_argument, NULL, O_OP },
	{ "req-size", required_argument, NULL, O_REQ },
	{ "bytes-per-stream", required_argument, NULL, O_BPS },
	{ "streams", required_argument, NULL, O_STREAMS },
	{ "depth", required_argument, NULL, O_DEPTH },
	{ "stable", required_argument, NULL, O_STABLE },
	{ "commit", no_argument, NULL, O_COMMIT },
	{ "verify", no_argument, NULL, O_VERIFY },
	{ "auth", required_argument, NULL, O_AUTH },
	{ "uid", required_argument, NULL, O_UID },
	{ "gid", required_argument, NULL, O_GID },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

/* --server HOST:PORT, HOST may be an [IPv6] literal. */
static void parse_server(const char *arg)
{
	if (pando_hostport_split(arg, opt.host, sizeof opt.host, opt.port, sizeof opt.port))
		die("bad --server (want HOST:PORT): %s", arg);
}

/* The index of ARG in the NULL-terminated NAMES; dies naming OPTION if absent. */
static uint32_t parse_choice(const char *arg, const char *option, const char *const *names)
{
	for (uint32_t i = 0; names[i]; i++)
		if (!strcmp(arg, names[i]))
			return i;
	die("bad %s: %s", option, arg);
}

/* Applies one option; returns 1 for --server, 2 for --op (both required), else 0. */
static int set_option(int c, const char *arg)
{
	static const char *const ops[] = { "write", "read", NULL }; /* enum op */
	static const char *const stables[] = { "unstable", "datasync", "filesync", NULL };
	static const char *const auths[] = { "none", "sys", NULL };

	switch (c) {
	case O_SERVER:
		parse_server(arg);
		return 1;
	case O_FH:
		if (pando_grow((void **)&opt.fhs, &opt.fh_cap, opt.nfh + 1, sizeof *opt.fhs))
			die("out of memory");
		parse_fh(arg, &opt.fhs[opt.nfh++]);
		return 0;
	case O_OP:
		opt.op = (enum op)parse_choice(arg, "--op", ops);
		return 2;
	case O_REQ:
		opt.req_size = (uint32_t)parse_size(arg, "--req-size");
		return 0;
	case O_BPS:
		opt.bytes_per_stream = parse_size(arg, "--bytes-per-stream");
		return 0;
	case O_STREAMS:
		opt.streams = (unsigned)parse_size(arg, "--streams");
		return 0;
	case O_DEPTH:
		opt.depth = (unsigned)parse_size(arg, "--depth");
		return 0;
	case O_STABLE:
		opt.stable = parse_choice(arg, "--stable", stables);
		return 0;
	case O_COMMIT:
		opt.commit = true;
		return 0;
	case O_VERIFY:
		opt.verify = true;
		return 0;
	case O_AUTH:
		opt.auth_sys = parse_choice(arg, "--auth", auths) == 1;
		return 0;
	case O_UID:
		opt.uid = (uint32_t)parse_size(arg, "--uid");
		return 0;
	case O_GID:
		opt.gid = (uint32_t)parse_size(arg, "--gid");
		return 0;
	case O_TIMEOUT:
		opt.timeout_s = (unsigned)parse_size(arg, "--timeout");
		return 0;
	case O_PROGRESS:
		opt.progress = true;
		return 0;
	case O_HELP:
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		exit(2);
	}
}

static void check_options(void)
{
	if (opt.req_size == 0 || opt.req_size > MAX_REQ)
		die("--req-size must be 1..%u", MAX_REQ);
	if (opt.verify && opt.req_size % 8)
		die("--verify needs --req-size a multiple of 8");
	if (opt.streams == 0 || opt.streams > 1024)
		die("--streams must be 1..1024");
	if (opt.depth == 0 || opt.depth > MAX_DEPTH)
		die("--depth must be 1..%u", MAX_DEPTH);
	if (opt.bytes_per_stream == 0)
		die("--bytes-per-stream must be > 0");
	if (opt.verify && opt.bytes_per_stream % 8)
		die("--verify needs --bytes-per-stream a multiple of 8");
}

static void parse_args(int argc, char **argv)
{
	int c, seen = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		seen |= set_option(c, optarg);
	if (optind != argc || seen != 3 || opt.nfh == 0) {
		usage(stderr);
		exit(2);
	}
	check_options();
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "nfs3load: timed out (--timeout)\n";
	ssize_t ignored = write(2, msg, sizeof msg - 1);
	(void)ignored;
	_exit(1);
}

static uint64_t total_done(uint64_t *ops)
{
	uint64_t b = 0, o = 0;
	for (unsigned i = 0; i < opt.streams; i++) {
		pthread_mutex_lock(&streams[i].lock);
		b += streams[i].done_bytes;
		o += streams[i].ops;
		pthread_mutex_unlock(&streams[i].lock);
	}
	if (ops)
		*ops = o;
	return b;
}

/* One stream per --streams, each with its handle, range and connection. */
static void setup_streams(void)
{
	streams = calloc(opt.streams, sizeof *streams);
	if (!streams)
		die("out of memory");
	for (unsigned i = 0; i < opt.streams; i++) {
		struct stream *s = &streams[i];
		s->idx = i;
		s->fh = &opt.fhs[i % opt.nfh];
		s->base = (uint64_t)(i / opt.nfh) * opt.bytes_per_stream;
		s->total = opt.bytes_per_stream;
		s->slots = calloc(opt.depth, sizeof *s->slots);
		s->free_slots = opt.depth;
		s->wbuf = malloc(opt.req_size);
		s->rbuf = malloc(MAX_RECORD);
		if (!s->slots || !s->wbuf || !s->rbuf)
			die("out of memory");
		memset(s->wbuf, 0x5a, opt.req_size);
		pthread_mutex_init(&s->lock, NULL);
		pthread_cond_init(&s->cond, NULL);
		s->fd = connect_to(opt.host, opt.port);
	}
}

/* Starts every stream's threads; they begin together, at t_start. */
static void start_streams(void)
{
	pthread_barrier_init(&start_barrier, NULL, opt.streams + 1);
	for (unsigned i = 0; i < opt.streams; i++) {
		if (pthread_create(&streams[i].sender, NULL, sender_main, &streams[i]) ||
		    pthread_create(&streams[i].receiver, NULL, receiver_main, &streams[i]))
			die("pthread_create failed");
	}
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	pthread_barrier_wait(&start_barrier);
}

static bool all_streams_done(void)
{
	bool all_done = true;
	for (unsigned i = 0; i < opt.streams; i++) {
		pthread_mutex_lock(&streams[i].lock);
		all_done &= streams[i].sender_done && streams[i].inflight == 0;
		pthread_mutex_unlock(&streams[i].lock);
	}
	return all_done;
}

/* --progress: a line on stderr about once a second until every stream is done. */
static void report_progress(uint64_t want)
{
	double last = now_s();
	for (;;) {
		usleep(100 * 1000);
		uint64_t ops, b = total_done(&ops);
		if (all_streams_done())
			return;
		if (now_s() - last >= 1.0) {
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			double el = ts_diff(&t_start, &t);
			fprintf(stderr, "nfs3load: %s %5.1f%%  %" PRIu64 " MiB  %.1f MB/s\n",
				opt.op == OP_WRITE ? "write" : "read",
				100.0 * (double)b / (double)want, b >> 20, (double)b / el / 1e6);
			last = now_s();
		}
	}
}

/* Waits for every stream; *T_END is when the last stream's last reply was
 * checked (not when this thread noticed: the progress loop polls every
 * 100 ms), *T_DATA when the last READ/WRITE reply was. */
static void join_streams(struct timespec *t_end, struct timespec *t_data)
{
	for (unsigned i = 0; i < opt.streams; i++) {
		pthread_join(streams[i].sender, NULL);
		pthread_join(streams[i].receiver, NULL);
	}
	*t_end = streams[0].t_done;
	*t_data = streams[0].t_data;
	for (unsigned i = 1; i < opt.streams; i++) {
		if (ts_diff(t_end, &streams[i].t_done) > 0)
			*t_end = streams[i].t_done;
		if (ts_diff(t_data, &streams[i].t_data) > 0)
			*t_data = streams[i].t_data;
	}
}

/* The one JSON line of results. */
static void print_result(uint64_t bytes, uint64_t ops, double secs, double data_secs)
{
	double lat = 0;
	for (unsigned i = 0; i < opt.streams; i++)
		lat += streams[i].lat_sum_s;
	printf("{\"op\": \"%s\", \"req_size\": %u, \"streams\": %u, \"depth\": %u, \"stable\": \"%s\", "
	       "\"commit\": %s, \"bytes\": %" PRIu64
	       ", \"seconds\": %.6f, \"mb_s\": %.2f, \"mib_s\": %.2f, "
	       "\"ops\": %" PRIu64 ", \"ops_s\": %.1f, \"lat_avg_us\": %.1f, "
	       "\"data_seconds\": %.6f, \"data_mb_s\": %.2f}\n",
	       opt.op == OP_WRITE ? "write" : "read", opt.req_size, opt.streams, opt.depth,
	       opt.stable == 0   ? "unstable"
	       : opt.stable == 1 ? "datasync"
				 : "filesync",
	       opt.commit && opt.op == OP_WRITE ? "true" : "false", bytes, secs,
	       (double)bytes / secs / 1e6, (double)bytes / secs / 1048576.0, ops,
	       (double)ops / secs, ops ? lat / (double)ops * 1e6 : 0.0, data_secs,
	       (double)bytes / data_secs / 1e6);
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout_s);

	setup_streams();
	start_streams();
	uint64_t want = (uint64_t)opt.streams * opt.bytes_per_stream;
	if (opt.progress)
		report_progress(want);
	struct timespec t_end, t_data;
	join_streams(&t_end, &t_data);
	alarm(0);

	uint64_t ops, bytes = total_done(&ops);
	if (bytes != want)
		die("moved %" PRIu64 " bytes, expected %" PRIu64, bytes, want);
	/* The data phase ends with the last READ/WRITE reply, before COMMIT:
	 * what the server's request path moves, apart from the disk flush. */
	print_result(bytes, ops, ts_diff(&t_start, &t_end), ts_diff(&t_start, &t_data));
	for (unsigned i = 0; i < opt.streams; i++)
		close(streams[i].fd);
	return 0;
}
