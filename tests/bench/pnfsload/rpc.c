#include "rpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xdr.h"

#define RPC_CALL 0u
#define RPC_REPLY 1u
#define AUTH_NONE 0u
#define AUTH_SYS 1u
#define DISCARD_CHUNK 4096u
#define CALL_MAX 65536u
#define CALL_REPLY_MAX 4096u
#define MSG_ACCEPTED 0u
#define GARBAGE_ARGS 4u

int rpc_resolve(const char *host, const char *port, struct sockaddr_storage *out, socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;

	if (getaddrinfo(host, port, &hints, &res))
		return -EHOSTUNREACH;
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int read_full(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ECONNRESET;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int discard(int fd, size_t n)
{
	uint8_t junk[DISCARD_CHUNK];

	while (n > 0) {
		size_t k = n < sizeof(junk) ? n : sizeof(junk);

		if (read_full(fd, junk, k))
			return -ECONNRESET;
		n -= k;
	}
	return 0;
}

/* Reads the rest of a record whose first fragment began with 8 bytes
 * already in hdr; into call's buffer when there is a call for it. */
static int read_record_into(struct rpc_conn *c, uint32_t mark, const uint8_t *hdr,
			    struct rpc_call *call)
{
	size_t flen = mark & 0x7fffffffu, len = 8;
	bool last = mark & 0x80000000u;

	if (call)
		memcpy(call->buf, hdr, 8);
	for (flen -= 8;; flen = mark & 0x7fffffffu) {
		if (call && flen > call->cap - len)
			return -EMSGSIZE;
		if (call ? read_full(c->fd, call->buf + len, flen) : discard(c->fd, flen))
			return -ECONNRESET;
		len += flen;
		if (last)
			break;
		if (read_full(c->fd, &mark, 4))
			return -ECONNRESET;
		mark = ntohl(mark);
		last = mark & 0x80000000u;
		if ((mark & 0x7fffffffu) > RPC_MAX_RECORD)
			return -EBADMSG;
	}
	if (call)
		call->len = len;
	return 0;
}

static struct rpc_call *find_call(struct rpc_conn *c, uint32_t xid)
{
	unsigned slot = xid & (RPC_MAX_SLOTS - 1);
	struct rpc_call *call = NULL;

	pthread_mutex_lock(&c->lock);
	if (slot < c->ncalls && c->calls[slot].busy && !c->calls[slot].done &&
	    c->calls[slot].xid == xid)
		call = &c->calls[slot];
	pthread_mutex_unlock(&c->lock);
	return call;
}

static void fail_all(struct rpc_conn *c, int err)
{
	pthread_mutex_lock(&c->lock);
	c->dead = err;
	for (unsigned i = 0; i < c->ncalls; i++) {
		if (c->calls[i].busy && !c->calls[i].done) {
			c->calls[i].err = err;
			c->calls[i].done = true;
			pthread_cond_signal(&c->calls[i].cond);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

static int send_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
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
	return 0;
}

static void skip_auth(struct xdr_r *r)
{
	uint32_t len;

	xr_u32(r); /* flavour */
	len = xr_u32(r);
	if (!r->err && (len > 400 || (size_t)(r->end - r->p) < XDR_PAD(len)))
		r->err = true;
	if (!r->err)
		r->p += XDR_PAD(len);
}

/* Reads one call from the server, lets the handler answer it, sends the
 * reply.  Malformed calls get GARBAGE_ARGS; only a broken connection is
 * an error. */
static int serve_call(struct rpc_conn *c, uint32_t mark, const uint8_t *words)
{
	struct rpc_call tmp = { .buf = c->call_buf, .cap = CALL_MAX };
	uint8_t reply[CALL_REPLY_MAX];
	struct xdr_w w = { reply, sizeof(reply), 0 };
	uint32_t stat = GARBAGE_ARGS, prog, proc, body;
	int err;

	if ((err = read_record_into(c, mark, words, &tmp)))
		return err;
	struct xdr_r r = { tmp.buf + 8, tmp.buf + tmp.len, false, false };

	xr_u32(&r); /* RPC version */
	prog = xr_u32(&r);
	xr_u32(&r); /* program version */
	proc = xr_u32(&r);
	skip_auth(&r);
	skip_auth(&r);
	xw_u32(&w, 0);            /* record mark */
	xw_fixed(&w, tmp.buf, 4); /* xid */
	xw_u32(&w, RPC_REPLY);
	xw_u32(&w, MSG_ACCEPTED);
	xw_u32(&w, AUTH_NONE);
	xw_u32(&w, 0);
	size_t stat_at = w.len;

	xw_u32(&w, 0);
	if (!r.err)
		stat = c->handler(c->handler_arg, prog, proc, r.p, (size_t)(r.end - r.p), &w);
	if (stat != 0 || w.len > w.cap)
		w.len = stat_at + 4;
	body = htonl(stat);
	memcpy(reply + stat_at, &body, 4);
	mark = htonl(0x80000000u | (uint32_t)(w.len - 4));
	memcpy(reply, &mark, 4);
	struct iovec iov = { reply, w.len };

	pthread_mutex_lock(&c->send_lock);
	err = send_all(c->fd, &iov, 1);
	pthread_mutex_unlock(&c->send_lock);
	return err;
}

int rpc_serve_calls(struct rpc_conn *c, rpc_call_handler fn, void *arg)
{
	uint8_t *buf = malloc(CALL_MAX);

	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	free(c->call_buf);
	c->call_buf = buf;
	c->handler_arg = arg;
	c->handler = fn;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Replies go to their callers; calls from the server go to the handler,
 * if any, else (like replies nobody waits for) are read and dropped. */
static void *receiver_main(void *arg)
{
	struct rpc_conn *c = arg;
	int err;

	for (;;) {
		uint32_t mark, words[2];

		if ((err = read_full(c->fd, &mark, 4)) || (err = read_full(c->fd, words, 8)))
			break;
		mark = ntohl(mark);
		/* Not RPC at all (an HTTP server, say): fail now rather than
		 * wait for a gigabyte that never comes. */
		if ((mark & 0x7fffffffu) < 8 || (mark & 0x7fffffffu) > RPC_MAX_RECORD) {
			err = -EBADMSG;
			break;
		}
		if (ntohl(words[1]) == RPC_CALL && c->handler) {
			if ((err = serve_call(c, mark, (const uint8_t *)words)))
				break;
			continue;
		}
		struct rpc_call *call = ntohl(words[1]) == RPC_REPLY ? find_call(c, ntohl(words[0]))
								     : NULL;

		if ((err = read_record_into(c, mark, (const uint8_t *)words, call)))
			break;
		if (call) {
			pthread_mutex_lock(&c->lock);
			call->done = true;
			pthread_cond_signal(&call->cond);
			pthread_mutex_unlock(&c->lock);
		}
	}
	fail_all(c, err);
	return NULL;
}

int rpc_connect(struct rpc_conn *c, const struct sockaddr *sa, socklen_t salen, uint32_t prog,
		uint32_t vers, unsigned nslots, const char *name)
{
	int one = 1;

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->prog = prog;
	c->vers = vers;
	c->ncalls = nslots;
	if (nslots == 0 || nslots > RPC_MAX_SLOTS)
		return -EINVAL;
	c->calls = calloc(nslots, sizeof(*c->calls));
	if (!c->calls)
		return -ENOMEM;
	for (unsigned i = 0; i < nslots; i++)
		pthread_cond_init(&c->calls[i].cond, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->send_lock, NULL);
	c->fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	if (connect(c->fd, sa, salen) < 0)
		return -errno;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (pthread_create(&c->receiver, NULL, receiver_main, c))
		return -EAGAIN;
	c->started = true;
	return 0;
}

static size_t encode_header(uint8_t *hdr, uint32_t xid, const struct rpc_conn *c, uint32_t proc,
			    const struct rpc_cred *cred)
{
	static const char machine[] = "pnfsload";
	struct xdr_w w = { hdr, RPC_HDR_MAX, 0 };

	xw_u32(&w, 0); /* record mark, filled in by the sender */
	xw_u32(&w, xid);
	xw_u32(&w, RPC_CALL);
	xw_u32(&w, 2);
	xw_u32(&w, c->prog);
	xw_u32(&w, c->vers);
	xw_u32(&w, proc);
	xw_u32(&w, AUTH_SYS);
	xw_u32(&w, 4 + 4 + 8 + 4 + 4 + 4); /* stamp, machine, uid, gid, no groups */
	xw_u32(&w, 0);
	xw_opaque(&w, machine, sizeof(machine) - 1);
	xw_u32(&w, cred->uid);
	xw_u32(&w, cred->gid);
	xw_u32(&w, 0);
	xw_u32(&w, AUTH_NONE);
	xw_u32(&w, 0);
	return w.len;
}

static int start_call(struct rpc_conn *c, unsigned slot, uint8_t *buf, size_t cap, uint32_t *xid)
{
	struct rpc_call *call = &c->calls[slot];

	pthread_mutex_lock(&c->lock);
	if (c->dead || call->busy) {
		int err = c->dead ? c->dead : -EBUSY;

		pthread_mutex_unlock(&c->lock);
		return err;
	}
	call->busy = true;
	call->done = false;
	call->err = 0;
	call->buf = buf;
	call->cap = cap;
	call->xid = (++c->gen << RPC_SLOT_BITS) | slot;
	*xid = call->xid;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static int wait_call(struct rpc_conn *c, unsigned slot, size_t *len)
{
	struct rpc_call *call = &c->calls[slot];
	int err;

	pthread_mutex_lock(&c->lock);
	while (!call->done)
		pthread_cond_wait(&call->cond, &c->lock);
	err = call->err;
	*len = call->len;
	call->busy = false;
	pthread_mutex_unlock(&c->lock);
	return err;
}

int rpc_start(struct rpc_conn *c, unsigned slot, uint32_t proc, const struct rpc_cred *cred,
	      const struct iovec *args, int nargs, uint8_t *buf, size_t cap)
{
	uint8_t hdr[RPC_HDR_MAX];
	struct iovec iov[8];
	uint32_t xid, mark;
	size_t total = 0;
	int err;

	if (slot >= c->ncalls || nargs > 7 || cap < 8)
		return -EINVAL;
	if ((err = start_call(c, slot, buf, cap, &xid)))
		return err;
	iov[0].iov_base = hdr;
	iov[0].iov_len = encode_header(hdr, xid, c, proc, cred);
	for (int i = 0; i < nargs; i++) {
		iov[i + 1] = args[i];
		total += args[i].iov_len;
	}
	mark = htonl(0x80000000u | (uint32_t)(iov[0].iov_len - 4 + total));
	memcpy(hdr, &mark, 4);
	pthread_mutex_lock(&c->send_lock);
	err = send_all(c->fd, iov, nargs + 1);
	pthread_mutex_unlock(&c->send_lock);
	/* On a failed send the receiver sees the broken connection too and
	 * ends the call with an error; rpc_finish reports it. */
	if (err)
		shutdown(c->fd, SHUT_RDWR);
	return 0;
}

int rpc_finish(struct rpc_conn *c, unsigned slot, const uint8_t **res, size_t *res_len,
	       uint32_t *why)
{
	size_t len, off;
	int err;

	if ((err = wait_call(c, slot, &len)))
		return err;
	if ((err = rpc_reply_body(c->calls[slot].buf, len, &off, why)))
		return err;
	*res = c->calls[slot].buf + off;
	*res_len = len - off;
	return 0;
}

int rpc_call(struct rpc_conn *c, unsigned slot, uint32_t proc, const struct rpc_cred *cred,
	     const struct iovec *args, int nargs, uint8_t *buf, size_t cap, const uint8_t **res,
	     size_t *res_len, uint32_t *why)
{
	int err = rpc_start(c, slot, proc, cred, args, nargs, buf, cap);

	return err ? err : rpc_finish(c, slot, res, res_len, why);
}

int rpc_reply_body(const uint8_t *rec, size_t len, size_t *off, uint32_t *why)
{
	struct xdr_r r = { rec, rec + len, false, false };
	uint32_t stat, vlen;

	xr_u32(&r); /* xid */
	if (xr_u32(&r) != RPC_REPLY)
		return -EBADMSG;
	stat = xr_u32(&r);
	if (!r.err && stat != 0) {
		*why = xr_u32(&r);
		return r.err ? -EBADMSG : -EACCES;
	}
	xr_u32(&r); /* verifier flavour */
	vlen = xr_u32(&r);
	if (r.err || vlen > 400 || (size_t)(r.end - r.p) < XDR_PAD(vlen) + 4)
		return -EBADMSG;
	r.p += XDR_PAD(vlen);
	*why = xr_u32(&r);
	if (*why != 0)
		return -EPROTO;
	*off = (size_t)(r.p - rec);
	return 0;
}

void rpc_close(struct rpc_conn *c)
{
	if (c->started) {
		shutdown(c->fd, SHUT_RDWR);
		pthread_join(c->receiver, NULL);
		c->started = false;
	}
	if (c->fd > 0)
		close(c->fd);
	c->fd = -1;
	free(c->calls);
	c->calls = NULL;
	free(c->call_buf);
	c->call_buf = NULL;
}
