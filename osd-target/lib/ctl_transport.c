/* OSD control protocol client, the transport: a small ONC RPC (RFC 5531)
 * caller over one TCP connection, with AUTH_PANDO signing.  The procedure
 * stubs are in ctl_call_*.c, one family per file.
 *
 * The socket is non-blocking and every wait is a poll() bounded by the
 * call's deadline, so a stalled target costs at most timeout_ms, in
 * send as well as in receive. */
#include "ctl_client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "ctl_auth.h"
#include "grow.h"
#include "hmac.h"
#include "hostport.h"
#include "iov.h"
#include "xdr.h"

#define RPC_VERSION 2
#define MSG_CALL 0
#define MSG_REPLY 1
#define MSG_DENIED 1
#define REJECT_AUTH_ERROR 1
#define ACCEPT_SUCCESS 0
#define ACCEPT_PROC_UNAVAIL 3
#define RPC_MAX_AUTH 400
#define LAST_FRAGMENT 0x80000000u

/* xid, type, rpcvers, prog, vers, proc; cred and verf with flavor and length */
#define CALL_HEADER_LEN (6 * 4 + 8 + CTL_AUTH_CRED_LEN + 8 + CTL_AUTH_VERF_LEN)
#define MARK_LEN 4
#define BUF_MIN 4096 /* first size of both buffers */
/* The largest arguments (SETATTR with 256 full attributes) are 265 KiB. */
#define SEND_BUF_MAX (512u << 10)
/* The largest reply is a full READ. */
#define REPLY_MAX (OSD_CTL_MAX_DATA + (64u << 10))

_Static_assert(OSD_CTL_CLIENT_MAX_DATA == OSD_CTL_MAX_DATA, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CLIENT_MAX_BATCH == OSD_CTL_MAX_BATCH, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CLIENT_MAX_ATTRS == OSD_CTL_MAX_ATTRS, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CLIENT_MAX_ATTR_LEN == OSD_CTL_MAX_ATTR_LEN, "osd_ctl.x changed");
_Static_assert(OSD_CTL_FILE_SYNC == (int)OSD_FILE_SYNC, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CLIENT_MAX_CSUMS == OSD_CTL_MAX_CSUMS, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CLIENT_MAX_CSUMS_VERIFY == OSD_CTL_MAX_CSUMS_VERIFY, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CSUM_EXTENT_BYTES == OSD_CTL_CSUM_EXTENT, "osd_ctl.x changed");
_Static_assert(OSD_CTL_CSUM_UNREADABLE == (int)OSD_CSUM_UNREADABLE, "osd_ctl.x changed");

struct osd_ctl_client {
	pthread_mutex_t lock; /* one call at a time */
	char host[256];
	char port[16];
	struct ctl_auth_key key; /* the target's control key */
	int timeout_ms;
	int fd; /* -1 between a broken connection and the next call */
	uint32_t next_xid;
	/* From a random start, one per call: no two calls of any client to a
	 * target share a credential, which the target's replay cache needs. */
	uint64_t next_nonce;
	uint8_t *sbuf; /* record mark, call header, encoded arguments */
	size_t scap;
	uint8_t *rbuf; /* the reply record */
	size_t rcap;
};

/* ---- time and errors ---------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- connection ----------------------------------------------------------- */

static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_addr(const struct addrinfo *ai, int64_t deadline)
{
	int one = 1, soerr = 0;
	socklen_t len = sizeof(soerr);
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int rc;

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
		rc = 0;
	} else if (errno != EINPROGRESS) {
		rc = -errno;
	} else {
		rc = wait_fd(fd, POLLOUT, deadline);
		if (!rc && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
			rc = -errno;
		else if (!rc && soerr)
			rc = -soerr;
	}
	if (!rc && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* Tries every address of host:port; the fd, or the last address's error
 * (-ENXIO when the name does not resolve). */
static int conn_open(struct osd_ctl_client *c)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	int64_t deadline = now_ms() + c->timeout_ms;
	int fd = -ENXIO;

	if (getaddrinfo(c->host, c->port, &hints, &res))
		return -ENXIO;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = connect_addr(ai, deadline);
		if (fd >= 0 || fd == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		c->fd = fd;
	return fd < 0 ? fd : 0;
}

static void conn_close(struct osd_ctl_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

struct osd_ctl_client *osd_ctl_connect(const char *host_port, const struct cluster_key *key,
				       uint32_t osd_id, int timeout_ms, int *err)
{
	struct osd_ctl_client *c;
	int rc;

	if (!host_port || !key || timeout_ms <= 0) {
		*err = -EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	c->fd = -1;
	c->timeout_ms = timeout_ms;
	rc = ctl_auth_derive(key->id, key->secret, osd_id, &c->key);
	if (!rc)
		rc = pando_hostport_split(host_port, c->host, sizeof(c->host), c->port,
					  sizeof(c->port));
	if (!rc && (getrandom(&c->next_xid, sizeof(c->next_xid), 0) != sizeof(c->next_xid) ||
		    getrandom(&c->next_nonce, sizeof(c->next_nonce), 0) != sizeof(c->next_nonce)))
		rc = -EIO;
	if (!rc)
		rc = conn_open(c);
	if (!rc)
		rc = -pthread_mutex_init(&c->lock, NULL);
	if (rc) {
		conn_close(c);
		explicit_bzero(&c->key, sizeof(c->key));
		free(c);
		*err = rc;
		return NULL;
	}
	*err = 0;
	return c;
}

void osd_ctl_close(struct osd_ctl_client *c)
{
	if (!c)
		return;
	conn_close(c);
	pthread_mutex_destroy(&c->lock);
	explicit_bzero(&c->key, sizeof(c->key));
	free(c->sbuf);
	free(c->rbuf);
	free(c);
}

/* ---- sending -------------------------------------------------------------- */

static int send_all(int fd, struct iovec *iov, int n, int64_t deadline)
{
	while (n > 0) {
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);
		int rc;

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return errno == EPIPE ? -ECONNRESET : -errno;
			rc = wait_fd(fd, POLLOUT, deadline);
			if (rc)
				return rc;
			continue;
		}
		iov_advance(&iov, &n, (size_t)w);
	}
	return 0;
}

/* Both buffers start at BUF_MIN bytes and double from there. */
static int buf_reserve(uint8_t **buf, size_t *cap, size_t need)
{
	return pando_grow((void **)buf, cap, need < BUF_MIN ? BUF_MIN : need, 1);
}

/* The header, signed over the argument bytes that follow it (args: the
 * encoded arguments, then the tail and its padding, if any). */
static int encode_header(struct osd_ctl_client *c, uint32_t xid, uint32_t proc, uint64_t nonce,
			 const struct hmac_piece *args, size_t nargs)
{
	struct ctl_auth_cred cred = { .key_id = c->key.key_id,
				      .osd_id = c->key.osd_id,
				      .time_s = (uint64_t)time(NULL),
				      .nonce = nonce };
	struct ctl_auth_hdr hdr = { xid, PANDO_OSD_CTL, PANDO_OSD_CTL_V1, proc };
	uint8_t cred_body[CTL_AUTH_CRED_LEN], verf_body[CTL_AUTH_VERF_LEN];
	struct xdr_w x;
	int rc = ctl_auth_sign(&c->key, &hdr, &cred, args, nargs, cred_body, verf_body);

	if (rc)
		return rc;
	xw_init(&x, c->sbuf + MARK_LEN, CALL_HEADER_LEN);
	xw_u32(&x, xid);
	xw_u32(&x, MSG_CALL);
	xw_u32(&x, RPC_VERSION);
	xw_u32(&x, PANDO_OSD_CTL);
	xw_u32(&x, PANDO_OSD_CTL_V1);
	xw_u32(&x, proc);
	xw_u32(&x, CTL_AUTH_FLAVOR);
	xw_opaque(&x, cred_body, sizeof(cred_body));
	xw_u32(&x, CTL_AUTH_FLAVOR);
	xw_opaque(&x, verf_body, sizeof(verf_body));
	return 0;
}

/* Encodes the arguments after the header, growing the buffer until they
 * fit; their length, or -EINVAL for arguments the protocol cannot carry. */
static int encode_args(struct osd_ctl_client *c, const struct ctl_call *call, size_t *len)
{
	const size_t at = MARK_LEN + CALL_HEADER_LEN;

	for (;;) {
		XDR xdrs;
		bool ok;
		int rc;

		xdrmem_ncreate(&xdrs, (char *)c->sbuf + at, (u_int)(c->scap - at), XDR_ENCODE);
		ok = call->xdr_args(&xdrs, call->args);
		*len = xdr_getpos(&xdrs);
		XDR_DESTROY(&xdrs);
		if (ok)
			return 0;
		if (c->scap >= SEND_BUF_MAX)
			return -EINVAL;
		rc = buf_reserve(&c->sbuf, &c->scap, c->scap * 2);
		if (rc)
			return rc;
	}
}

/* Encodes the whole call into sbuf and the iovecs that send it; nothing
 * touches the socket yet, so a failure here leaves the connection usable. */
static int encode_call(struct osd_ctl_client *c, const struct ctl_call *call, uint32_t xid,
		       uint64_t nonce, struct iovec iov[3], int *niov)
{
	static const uint8_t zeros[4];
	size_t pad = XDR_PAD(call->tail_len) - call->tail_len;
	struct hmac_piece pieces[3];
	size_t args_len, body;
	int rc = buf_reserve(&c->sbuf, &c->scap, BUF_MIN);

	if (!rc)
		rc = encode_args(c, call, &args_len);
	if (rc)
		return rc;
	*niov = 0;
	iov[(*niov)++] = (struct iovec){ c->sbuf, MARK_LEN + CALL_HEADER_LEN + args_len };
	if (call->tail_len)
		iov[(*niov)++] = (struct iovec){ (void *)call->tail, call->tail_len };
	if (pad)
		iov[(*niov)++] = (struct iovec){ (void *)zeros, pad };
	/* The MAC covers every argument byte as sent: iov[0] past the header,
	 * then the tail and its padding. */
	pieces[0] = (struct hmac_piece){ c->sbuf + MARK_LEN + CALL_HEADER_LEN, args_len };
	for (int i = 1; i < *niov; i++)
		pieces[i] = (struct hmac_piece){ iov[i].iov_base, iov[i].iov_len };
	rc = encode_header(c, xid, call->proc, nonce, pieces, (size_t)*niov);
	if (rc)
		return rc;
	body = CALL_HEADER_LEN + args_len + call->tail_len + pad;
	put_be32(c->sbuf, LAST_FRAGMENT | (uint32_t)body);
	return 0;
}

/* ---- receiving ------------------------------------------------------------ */

static int recv_exact(int fd, uint8_t *buf, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t r = recv(fd, buf, n, 0);
		int rc;

		if (r > 0) {
			buf += r;
			n -= (size_t)r;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		rc = wait_fd(fd, POLLIN, deadline);
		if (rc)
			return rc;
	}
	return 0;
}

/* Reads one whole record (all its fragments) into rbuf. */
static int recv_record(struct osd_ctl_client *c, size_t *len, int64_t deadline)
{
	uint8_t mark[MARK_LEN];
	uint32_t frag;

	*len = 0;
	do {
		/* Checked per fragment too: a stream of empty fragments never waits. */
		int rc = now_ms() < deadline ? recv_exact(c->fd, mark, sizeof(mark), deadline)
					     : -ETIMEDOUT;

		if (rc)
			return rc;
		frag = get_be32(mark);
		if ((frag & ~LAST_FRAGMENT) > REPLY_MAX - *len)
			return -EPROTO;
		rc = buf_reserve(&c->rbuf, &c->rcap, *len + (frag & ~LAST_FRAGMENT));
		if (!rc)
			rc = recv_exact(c->fd, c->rbuf + *len, frag & ~LAST_FRAGMENT, deadline);
		if (rc)
			return rc;
		*len += frag & ~LAST_FRAGMENT;
	} while (!(frag & LAST_FRAGMENT));
	return 0;
}

/* Checks the reply: our xid, accepted, and a verifier only the holder of
 * the target's key can compute over its accept_stat and results, then
 * SUCCESS.  *res points at the results. */
static int parse_reply(struct osd_ctl_client *c, size_t len, uint32_t xid, uint64_t nonce,
		       const uint8_t **res, size_t *res_len)
{
	uint8_t want[CTL_AUTH_REPLY_VERF_LEN];
	struct hmac_piece results;
	const uint8_t *verf;
	uint32_t flavor, verf_len, stat;
	struct xdr_r x;

	xr_init(&x, c->rbuf, len);
	if (xr_u32(&x) != xid || xr_u32(&x) != MSG_REPLY)
		return -EPROTO;
	if (xr_u32(&x) == MSG_DENIED) {
		stat = xr_u32(&x);
		return !x.err && stat == REJECT_AUTH_ERROR ? -EACCES : -EPROTO;
	}
	flavor = xr_u32(&x);
	verf = xr_opaque_ref(&x, RPC_MAX_AUTH, &verf_len);
	stat = xr_u32(&x);
	if (x.err || flavor != CTL_AUTH_FLAVOR || verf_len != sizeof(want))
		return -EPROTO;
	results = (struct hmac_piece){ x.p, xr_left(&x) };
	if (ctl_auth_reply_mac(&c->key, xid, nonce, stat, &results, 1, want))
		return -EIO;
	if (!hmac_equal(verf, want, sizeof(want)))
		return -EPROTO;
	/* A procedure newer than the target: the stream is still in step. */
	if (stat == ACCEPT_PROC_UNAVAIL)
		return -EOPNOTSUPP;
	if (stat != ACCEPT_SUCCESS)
		return -EPROTO;
	*res = x.p;
	*res_len = xr_left(&x);
	return 0;
}

/* ---- one call ------------------------------------------------------------- */

/* Between calls nothing may arrive: a readable connection was closed by
 * the target (its idle deadline, a restart) or carries a stray reply.
 * Either way it is reopened before the call, as the Linux NFS client
 * does, rather than failing a call the target never saw. */
static void drop_if_closed(struct osd_ctl_client *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLRDHUP };

	if (c->fd >= 0 && poll(&pfd, 1, 0) > 0)
		conn_close(c);
}

/* Sends the call and waits for its reply; *res points at the results. */
static int transmit(struct osd_ctl_client *c, struct iovec *iov, int niov, uint32_t xid,
		    uint64_t nonce, const uint8_t **res, size_t *res_len)
{
	int64_t deadline = now_ms() + c->timeout_ms;
	size_t len;
	int rc;

	drop_if_closed(c);
	rc = c->fd < 0 ? conn_open(c) : 0;

	if (!rc)
		rc = send_all(c->fd, iov, niov, deadline);
	if (!rc)
		rc = recv_record(c, &len, deadline);
	if (!rc)
		rc = parse_reply(c, len, xid, nonce, res, res_len);
	return rc;
}

/* Runs a call and decodes its results.  A transport or protocol failure
 * leaves the stream in doubt (a late reply, a half-sent record, a peer we
 * do not trust), so the connection is closed and the next call opens a
 * fresh one; an authentication denial, an unknown procedure or a target
 * status does not. */
int ctl_call(struct osd_ctl_client *c, const struct ctl_call *call)
{
	const uint8_t *res = NULL;
	size_t res_len = 0;
	struct iovec iov[3];
	int niov;
	uint64_t nonce;
	uint32_t xid;
	int rc;

	pthread_mutex_lock(&c->lock);
	xid = c->next_xid++;
	nonce = c->next_nonce++;
	rc = encode_call(c, call, xid, nonce, iov, &niov);
	if (!rc) {
		rc = transmit(c, iov, niov, xid, nonce, &res, &res_len);
		if (rc && rc != -EACCES && rc != -EOPNOTSUPP)
			conn_close(c);
	}
	if (!rc) {
		rc = call->decode(res, res_len, call->out);
		if (rc == -EPROTO)
			conn_close(c);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}
