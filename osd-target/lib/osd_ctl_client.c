/* OSD control protocol client: a small ONC RPC (RFC 5531) caller over one
 * TCP connection, with AUTH_PANDO signing, and one function per procedure.
 *
 * The socket is non-blocking and every wait is a poll() bounded by the
 * call's deadline, so a stalled target costs at most timeout_ms, in
 * send as well as in receive. */
#include "pando/osd_ctl_client.h"

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
#include "hmac.h"
#include "hostport.h"
#include "iov.h"
#include "osd_ctl.h"
#include "xdr.h"

/* rpcgen filters return bool_t, xdrproc_t wants bool: the same 0/1 either
 * way; the detour through void (*)(void) says the cast is meant. */
#define CTL_XDRPROC(fn) ((xdrproc_t)(void (*)(void))(fn))

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
#define BUF_MIN 4096                   /* first size of both buffers */
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
	pthread_mutex_t lock;          /* one call at a time */
	char host[256];
	char port[16];
	struct cluster_key key;
	int timeout_ms;
	int fd;                        /* -1 between a broken connection and the next call */
	uint32_t next_xid;
	uint8_t *sbuf;                 /* record mark, call header, encoded arguments */
	size_t scap;
	uint8_t *rbuf;                 /* the reply record */
	size_t rcap;
};

/* Results are decoded while the client is still locked: res points into rbuf. */
typedef int (*decode_fn)(const uint8_t *res, size_t len, void *out);

struct ctl_call {
	uint32_t proc;
	xdrproc_t xdr_args;
	void *args;
	const void *tail;              /* WRITE data: sent after the arguments, uncopied */
	size_t tail_len;
	decode_fn decode;
	void *out;
};

/* ---- time and errors ---------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int status_errno(uint32_t status)
{
	switch (status) {
	case OSD_OK:
		return 0;
	case OSD_ERR_NOENT:
		return -ENOENT;
	case OSD_ERR_IO:
		return -EIO;
	case OSD_ERR_ACCES:
		return -EACCES;
	case OSD_ERR_EXIST:
		return -EEXIST;
	case OSD_ERR_INVAL:
		return -EINVAL;
	case OSD_ERR_FBIG:
		return -EFBIG;
	case OSD_ERR_NOSPC:
		return -ENOSPC;
	case OSD_ERR_NOTEMPTY:
		return -ENOTEMPTY;
	case OSD_ERR_SERVERFAULT:
		return -EREMOTEIO;
	default:
		return -EPROTO;
	}
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
				       int timeout_ms, int *err)
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
	c->key = *key;
	c->timeout_ms = timeout_ms;
	rc = pando_hostport_split(host_port, c->host, sizeof(c->host), c->port, sizeof(c->port));
	if (!rc && getrandom(&c->next_xid, sizeof(c->next_xid), 0) != sizeof(c->next_xid))
		rc = -EIO;
	if (!rc)
		rc = conn_open(c);
	if (!rc)
		rc = -pthread_mutex_init(&c->lock, NULL);
	if (rc) {
		conn_close(c);
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

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : BUF_MIN;
	uint8_t *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static void encode_header(struct osd_ctl_client *c, uint32_t xid, uint32_t proc,
			  uint64_t nonce)
{
	struct ctl_auth_cred cred = { .key_id = c->key.id, .time_s = (uint64_t)time(NULL),
				      .nonce = nonce };
	uint8_t cred_body[CTL_AUTH_CRED_LEN], verf_body[CTL_AUTH_VERF_LEN];
	struct xdr_w x;

	ctl_auth_sign(&c->key, xid, PANDO_OSD_CTL, PANDO_OSD_CTL_V1, proc, &cred, cred_body,
		      verf_body);
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
		rc = grow(&c->sbuf, &c->scap, c->scap * 2);
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
	size_t args_len, body;
	int rc = grow(&c->sbuf, &c->scap, BUF_MIN);

	if (!rc)
		rc = encode_args(c, call, &args_len);
	if (rc)
		return rc;
	encode_header(c, xid, call->proc, nonce);
	body = CALL_HEADER_LEN + args_len + call->tail_len + pad;
	put_be32(c->sbuf, LAST_FRAGMENT | (uint32_t)body);
	*niov = 0;
	iov[(*niov)++] = (struct iovec){ c->sbuf, MARK_LEN + CALL_HEADER_LEN + args_len };
	if (call->tail_len)
		iov[(*niov)++] = (struct iovec){ (void *)call->tail, call->tail_len };
	if (pad)
		iov[(*niov)++] = (struct iovec){ (void *)zeros, pad };
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
		rc = grow(&c->rbuf, &c->rcap, *len + (frag & ~LAST_FRAGMENT));
		if (!rc)
			rc = recv_exact(c->fd, c->rbuf + *len, frag & ~LAST_FRAGMENT, deadline);
		if (rc)
			return rc;
		*len += frag & ~LAST_FRAGMENT;
	} while (!(frag & LAST_FRAGMENT));
	return 0;
}

/* Checks the reply header: our xid, accepted, the verifier only the key
 * holder can compute, SUCCESS.  *res points at the results. */
static int parse_reply(struct osd_ctl_client *c, size_t len, uint32_t xid, uint64_t nonce,
		       const uint8_t **res, size_t *res_len)
{
	uint8_t want[CTL_AUTH_REPLY_VERF_LEN];
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
	if (x.err)
		return -EPROTO;
	ctl_auth_reply_verf(&c->key, xid, nonce, want);
	if (flavor != CTL_AUTH_FLAVOR || verf_len != sizeof(want) ||
	    !hmac_equal(verf, want, sizeof(want)))
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

/* Sends the call and waits for its reply; *res points at the results. */
static int transmit(struct osd_ctl_client *c, struct iovec *iov, int niov, uint32_t xid,
		    uint64_t nonce, const uint8_t **res, size_t *res_len)
{
	int64_t deadline = now_ms() + c->timeout_ms;
	size_t len;
	int rc = c->fd < 0 ? conn_open(c) : 0;

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
static int ctl_call(struct osd_ctl_client *c, const struct ctl_call *call)
{
	const uint8_t *res = NULL;
	size_t res_len = 0;
	struct iovec iov[3];
	int niov;
	uint64_t nonce;
	uint32_t xid;
	int rc;

	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -EIO;
	pthread_mutex_lock(&c->lock);
	xid = c->next_xid++;
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

/* Decodes results with an rpcgen filter; they must fill the reply exactly. */
static int xdr_decode_exact(const uint8_t *res, size_t len, xdrproc_t proc, void *obj)
{
	XDR xdrs;
	bool ok;

	xdrmem_ncreate(&xdrs, (char *)res, (u_int)len, XDR_DECODE);
	ok = proc(&xdrs, obj) && xdr_getpos(&xdrs) == len;
	XDR_DESTROY(&xdrs);
	if (!ok) {
		xdr_free(proc, obj);
		return -EPROTO;
	}
	return 0;
}

/* ---- procedures ----------------------------------------------------------- */

static int decode_void(const uint8_t *res, size_t len, void *out)
{
	return len == 0 ? 0 : -EPROTO;
}

static int decode_status(const uint8_t *res, size_t len, void *out)
{
	return len == 4 ? status_errno(get_be32(res)) : -EPROTO;
}

int osd_ctl_null(struct osd_ctl_client *c)
{
	struct ctl_call call = { .proc = OSDCTL_NULL, .xdr_args = CTL_XDRPROC(xdr_void),
				 .decode = decode_void };

	return ctl_call(c, &call);
}

static int decode_statfs(const uint8_t *res, size_t len, void *arg)
{
	struct osd_ctl_statfs *out = arg;
	osd_statfs_res r = { 0 };
	const osd_statfs_res_ok *ok = &r.osd_statfs_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_statfs_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc) {
		memcpy(out->uuid, ok->target_uuid, sizeof(out->uuid));
		out->osd_id = ok->osd_id;
		out->key_id = ok->key_id;
		out->total_bytes = ok->total_bytes;
		out->free_bytes = ok->free_bytes;
		out->partitions = ok->partitions;
		out->objects = ok->objects;
		out->created_ns = ok->created_ns;
	}
	xdr_free(CTL_XDRPROC(xdr_osd_statfs_res), &r);
	return rc;
}

int osd_ctl_statfs(struct osd_ctl_client *c, struct osd_ctl_statfs *out)
{
	struct ctl_call call = { .proc = OSDCTL_STATFS, .xdr_args = CTL_XDRPROC(xdr_void),
				 .decode = decode_statfs, .out = out };

	return ctl_call(c, &call);
}

static int decode_stats(const uint8_t *res, size_t len, void *arg)
{
	struct osd_ctl_stats *out = arg;
	osd_stats_res r = { 0 };
	const osd_stats_res_ok *ok = &r.osd_stats_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_stats_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc) {
		out->started_ns = ok->started_ns;
		out->nfs_read_ops = ok->nfs_read_ops;
		out->nfs_read_bytes = ok->nfs_read_bytes;
		out->nfs_write_ops = ok->nfs_write_ops;
		out->nfs_write_bytes = ok->nfs_write_bytes;
		out->nfs_write_unstable = ok->nfs_write_unstable;
		out->nfs_write_data_sync = ok->nfs_write_data_sync;
		out->nfs_write_file_sync = ok->nfs_write_file_sync;
		out->nfs_commit_ops = ok->nfs_commit_ops;
		out->nfs_err_rejected = ok->nfs_err_rejected;
		out->nfs_err_io = ok->nfs_err_io;
		out->nfs_err_other = ok->nfs_err_other;
		out->ctl_read_ops = ok->ctl_read_ops;
		out->ctl_read_bytes = ok->ctl_read_bytes;
		out->ctl_write_ops = ok->ctl_write_ops;
		out->ctl_write_bytes = ok->ctl_write_bytes;
	}
	xdr_free(CTL_XDRPROC(xdr_osd_stats_res), &r);
	return rc;
}

int osd_ctl_stats(struct osd_ctl_client *c, struct osd_ctl_stats *out)
{
	struct ctl_call call = { .proc = OSDCTL_STATS, .xdr_args = CTL_XDRPROC(xdr_void),
				 .decode = decode_stats, .out = out };

	return ctl_call(c, &call);
}

int osd_ctl_format(struct osd_ctl_client *c, const uint8_t uuid[OSD_CTL_UUID_LEN])
{
	osd_format_args args;
	struct ctl_call call = { .proc = OSDCTL_FORMAT,
				 .xdr_args = CTL_XDRPROC(xdr_osd_format_args), .args = &args,
				 .decode = decode_status };

	memcpy(args.target_uuid, uuid, sizeof(args.target_uuid));
	return ctl_call(c, &call);
}

static int partition_call(struct osd_ctl_client *c, uint32_t proc, uint64_t partition)
{
	osd_partition_args args = { .partition = partition };
	struct ctl_call call = { .proc = proc, .xdr_args = CTL_XDRPROC(xdr_osd_partition_args),
				 .args = &args, .decode = decode_status };

	return ctl_call(c, &call);
}

int osd_ctl_partition_create(struct osd_ctl_client *c, uint64_t partition)
{
	return partition_call(c, OSDCTL_CREATE_PARTITION, partition);
}

int osd_ctl_partition_remove(struct osd_ctl_client *c, uint64_t partition)
{
	return partition_call(c, OSDCTL_REMOVE_PARTITION, partition);
}

struct create_out {
	struct osd_ctl_create_item *items;
	int *results;
	size_t n;
};

static int decode_create(const uint8_t *res, size_t len, void *arg)
{
	struct create_out *out = arg;
	osd_create_res r = { 0 };
	const osd_create_res_ok *ok = &r.osd_create_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_create_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && ok->results.results_len != out->n)
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < out->n; i++) {
		out->results[i] = status_errno(ok->results.results_val[i].status);
		if (!out->results[i])
			out->items[i].object = ok->results.results_val[i].object;
	}
	xdr_free(CTL_XDRPROC(xdr_osd_create_res), &r);
	return rc;
}

int osd_ctl_objects_create(struct osd_ctl_client *c, uint64_t partition,
			   struct osd_ctl_create_item *items, size_t n, int *results)
{
	struct create_out out = { items, results, n };
	osd_create_args args = { .partition = partition };
	struct ctl_call call = { .proc = OSDCTL_CREATE_OBJECTS,
				 .xdr_args = CTL_XDRPROC(xdr_osd_create_args), .args = &args,
				 .decode = decode_create, .out = &out };
	int rc;

	if (n > OSD_CTL_MAX_BATCH)
		return -EINVAL;
	args.items.items_len = (u_int)n;
	args.items.items_val = calloc(n + 1, sizeof(osd_create_item));
	if (!args.items.items_val)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		args.items.items_val[i] = (osd_create_item){
			.object = items[i].object,
			.owner_file = items[i].owner_file,
			.component = items[i].component,
			.cap_version = items[i].cap_version,
		};
	rc = ctl_call(c, &call);
	free(args.items.items_val);
	return rc;
}

struct remove_out {
	int *results;
	size_t n;
};

static int decode_remove(const uint8_t *res, size_t len, void *arg)
{
	struct remove_out *out = arg;
	osd_remove_res r = { 0 };
	const osd_remove_res_ok *ok = &r.osd_remove_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_remove_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && ok->results.results_len != out->n)
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < out->n; i++)
		out->results[i] = status_errno(ok->results.results_val[i]);
	xdr_free(CTL_XDRPROC(xdr_osd_remove_res), &r);
	return rc;
}

int osd_ctl_objects_remove(struct osd_ctl_client *c, uint64_t partition,
			   const uint64_t *objects, size_t n, int *results)
{
	struct remove_out out = { results, n };
	osd_remove_args args = { .partition = partition };
	struct ctl_call call = { .proc = OSDCTL_REMOVE_OBJECTS,
				 .xdr_args = CTL_XDRPROC(xdr_osd_remove_args), .args = &args,
				 .decode = decode_remove, .out = &out };

	if (n > OSD_CTL_MAX_BATCH)
		return -EINVAL;
	args.objects.objects_len = (u_int)n;
	/* Encoding only reads the ids. */
	args.objects.objects_val = (osd_u64 *)objects;
	return ctl_call(c, &call);
}

struct read_out {
	void *buf;
	size_t len;
	size_t *n;
	bool *eof;
};

/* By hand rather than rpcgen: the data goes straight to the caller's buffer,
 * and a target sending more than was asked is caught before the copy. */
static int decode_read(const uint8_t *res, size_t len, void *arg)
{
	struct read_out *out = arg;
	struct xdr_r x;
	uint32_t status, n;
	const uint8_t *data;
	bool eof;

	xr_init(&x, res, len);
	status = xr_u32(&x);
	if (status != OSD_OK)
		return x.err || xr_left(&x) ? -EPROTO : status_errno(status);
	eof = xr_bool(&x);
	data = xr_opaque_ref(&x, (uint32_t)out->len, &n);
	if (x.err || xr_left(&x))
		return -EPROTO;
	memcpy(out->buf, data, n);
	*out->n = n;
	*out->eof = eof;
	return 0;
}

int osd_ctl_read(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t off,
		 void *buf, size_t len, size_t *n, bool *eof)
{
	size_t count = len < OSD_CTL_MAX_DATA ? len : OSD_CTL_MAX_DATA;
	struct read_out out = { buf, count, n, eof };
	osd_read_args args = { .id = { id->partition, id->object }, .offset = off,
			       .count = (u_int)count };
	struct ctl_call call = { .proc = OSDCTL_READ, .xdr_args = CTL_XDRPROC(xdr_osd_read_args),
				 .args = &args, .decode = decode_read, .out = &out };

	return ctl_call(c, &call);
}

/* WRITE arguments up to the data's length; the data follows uncopied. */
static bool_t xdr_write_head(XDR *xdrs, osd_write_args *args)
{
	return xdr_osd_obj_id(xdrs, &args->id) && xdr_osd_u64(xdrs, &args->offset) &&
	       xdr_osd_stable(xdrs, &args->stable) && xdr_u_int(xdrs, &args->data.data_len);
}

struct write_out {
	size_t len;
	uint8_t *verf;
};

static int decode_write(const uint8_t *res, size_t len, void *arg)
{
	struct write_out *out = arg;
	osd_write_res r = { 0 };
	const osd_write_res_ok *ok = &r.osd_write_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_write_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && ok->count != out->len)
		rc = -EIO;
	if (!rc && out->verf)
		memcpy(out->verf, ok->verifier, sizeof(ok->verifier));
	return rc;
}

int osd_ctl_write(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t off,
		  const void *buf, size_t len, enum osd_ctl_stable stable, uint8_t verf[8])
{
	struct write_out out = { len, verf };
	osd_write_args args = { .id = { id->partition, id->object }, .offset = off,
				.stable = (osd_stable)stable };
	struct ctl_call call = { .proc = OSDCTL_WRITE, .xdr_args = CTL_XDRPROC(xdr_write_head),
				 .args = &args, .tail = buf, .tail_len = len,
				 .decode = decode_write, .out = &out };

	if (len > OSD_CTL_MAX_DATA || (unsigned)stable > OSD_CTL_FILE_SYNC)
		return -EINVAL;
	args.data.data_len = (u_int)len;
	return ctl_call(c, &call);
}

struct getattr_out {
	struct osd_ctl_attr *attrs;
	size_t max;
	size_t *n;
};

static int decode_getattr(const uint8_t *res, size_t len, void *arg)
{
	struct getattr_out *out = arg;
	osd_getattr_res r = { 0 };
	const osd_getattr_res_ok *ok = &r.osd_getattr_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_getattr_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && ok->attrs.attrs_len > out->max)
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < ok->attrs.attrs_len; i++) {
		const osd_attr *a = &ok->attrs.attrs_val[i];

		out->attrs[i].page = a->page;
		out->attrs[i].number = a->number;
		out->attrs[i].len = a->value.value_len;
		memcpy(out->attrs[i].value, a->value.value_val, a->value.value_len);
	}
	if (!rc)
		*out->n = ok->attrs.attrs_len;
	xdr_free(CTL_XDRPROC(xdr_osd_getattr_res), &r);
	return rc;
}

int osd_ctl_getattr(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		    const struct osd_ctl_attr_key *keys, size_t nkeys,
		    struct osd_ctl_attr *attrs, size_t max, size_t *n)
{
	struct getattr_out out = { attrs, max, n };
	osd_getattr_args args = { .id = { id->partition, id->object } };
	struct ctl_call call = { .proc = OSDCTL_GETATTR,
				 .xdr_args = CTL_XDRPROC(xdr_osd_getattr_args), .args = &args,
				 .decode = decode_getattr, .out = &out };
	int rc;

	if (nkeys > OSD_CTL_MAX_ATTRS)
		return -EINVAL;
	args.keys.keys_len = (u_int)nkeys;
	args.keys.keys_val = calloc(nkeys + 1, sizeof(osd_attr_key));
	if (!args.keys.keys_val)
		return -ENOMEM;
	for (size_t i = 0; i < nkeys; i++)
		args.keys.keys_val[i] = (osd_attr_key){ keys[i].page, keys[i].number };
	rc = ctl_call(c, &call);
	free(args.keys.keys_val);
	return rc;
}

static int decode_setattr(const uint8_t *res, size_t len, void *arg)
{
	size_t *failed_index = arg;
	osd_setattr_res r = { 0 };
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_setattr_res), &r);

	if (rc)
		return rc;
	if (failed_index)
		*failed_index = r.failed_index;
	return status_errno(r.status);
}

int osd_ctl_setattr(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		    const struct osd_ctl_attr *attrs, size_t n, size_t *failed_index)
{
	osd_setattr_args args = { .id = { id->partition, id->object } };
	struct ctl_call call = { .proc = OSDCTL_SETATTR,
				 .xdr_args = CTL_XDRPROC(xdr_osd_setattr_args), .args = &args,
				 .decode = decode_setattr, .out = failed_index };
	int rc;

	if (n > OSD_CTL_MAX_ATTRS)
		return -EINVAL;
	args.attrs.attrs_len = (u_int)n;
	args.attrs.attrs_val = calloc(n + 1, sizeof(osd_attr));
	if (!args.attrs.attrs_val)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (attrs[i].len > OSD_CTL_MAX_ATTR_LEN) {
			free(args.attrs.attrs_val);
			return -EINVAL;
		}
		args.attrs.attrs_val[i] = (osd_attr){
			.page = attrs[i].page,
			.number = attrs[i].number,
			.value = { attrs[i].len, (char *)attrs[i].value },
		};
	}
	rc = ctl_call(c, &call);
	free(args.attrs.attrs_val);
	return rc;
}

struct list_out {
	uint64_t *ids;
	size_t max;
	size_t *n;
	bool *eof;
};

static int decode_list(const uint8_t *res, size_t len, void *arg)
{
	struct list_out *out = arg;
	osd_list_res r = { 0 };
	const osd_list_res_ok *ok = &r.osd_list_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_list_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && ok->ids.ids_len > out->max)
		rc = -EPROTO;
	if (!rc) {
		memcpy(out->ids, ok->ids.ids_val, ok->ids.ids_len * sizeof(uint64_t));
		*out->n = ok->ids.ids_len;
		*out->eof = ok->eof;
	}
	xdr_free(CTL_XDRPROC(xdr_osd_list_res), &r);
	return rc;
}

int osd_ctl_list(struct osd_ctl_client *c, uint64_t partition, uint64_t after,
		 uint64_t *ids, size_t max, size_t *n, bool *eof)
{
	struct list_out out = { ids, max, n, eof };
	osd_list_args args = { .partition = partition, .after = after, .max = (u_int)max };
	struct ctl_call call = { .proc = OSDCTL_LIST, .xdr_args = CTL_XDRPROC(xdr_osd_list_args),
				 .args = &args, .decode = decode_list, .out = &out };

	/* max 0 would ask the target for a full page we have no room for. */
	if (max == 0 || max > OSD_CTL_MAX_BATCH)
		return -EINVAL;
	return ctl_call(c, &call);
}

int osd_ctl_flush(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id)
{
	osd_flush_args args = { .id = { id ? id->partition : 0, id ? id->object : 0 } };
	struct ctl_call call = { .proc = OSDCTL_FLUSH, .xdr_args = CTL_XDRPROC(xdr_osd_flush_args),
				 .args = &args, .decode = decode_status };

	return ctl_call(c, &call);
}

static int decode_setcap(const uint8_t *res, size_t len, void *arg)
{
	uint32_t *old = arg;
	osd_setcap_res r = { 0 };
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_setcap_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && old)
		*old = r.old_version;
	return rc;
}

int osd_ctl_set_cap_version(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
			    uint32_t version, uint32_t *old)
{
	osd_setcap_args args = { .id = { id->partition, id->object }, .cap_version = version };
	struct ctl_call call = { .proc = OSDCTL_SET_CAP_VERSION,
				 .xdr_args = CTL_XDRPROC(xdr_osd_setcap_args), .args = &args,
				 .decode = decode_setcap, .out = old };

	return ctl_call(c, &call);
}

struct csum_out {
	struct osd_ctl_extent_csum *ext;
	size_t max;
	size_t *n;
	uint64_t *length;
};

static int decode_checksums(const uint8_t *res, size_t len, void *arg)
{
	struct csum_out *out = arg;
	osd_checksums_res r = { 0 };
	const osd_checksums_res_ok *ok = &r.osd_checksums_res_u.ok;
	int rc = xdr_decode_exact(res, len, CTL_XDRPROC(xdr_osd_checksums_res), &r);

	if (rc)
		return rc;
	rc = status_errno(r.status);
	if (!rc && ok->extents.extents_len > out->max)
		rc = -EPROTO;
	for (u_int i = 0; !rc && i < ok->extents.extents_len; i++) {
		const osd_extent_csum *e = &ok->extents.extents_val[i];

		if ((unsigned)e->verify > OSD_CSUM_UNREADABLE) {
			rc = -EPROTO;
			break;
		}
		out->ext[i] = (struct osd_ctl_extent_csum){
			e->crc, e->stored, (enum osd_ctl_csum_verify)e->verify };
	}
	if (!rc) {
		*out->n = ok->extents.extents_len;
		if (out->length)
			*out->length = ok->length;
	}
	xdr_free(CTL_XDRPROC(xdr_osd_checksums_res), &r);
	return rc;
}

int osd_ctl_checksums(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		      uint64_t first, size_t count, bool verify,
		      struct osd_ctl_extent_csum *out, size_t *n, uint64_t *length)
{
	struct csum_out res = { out, count, n, length };
	osd_checksums_args args = { .id = { id->partition, id->object }, .first_extent = first,
				    .count = (u_int)count, .verify = verify };
	struct ctl_call call = { .proc = OSDCTL_CHECKSUMS,
				 .xdr_args = CTL_XDRPROC(xdr_osd_checksums_args), .args = &args,
				 .decode = decode_checksums, .out = &res };

	if (count > (verify ? OSD_CTL_MAX_CSUMS_VERIFY : OSD_CTL_MAX_CSUMS))
		return -EINVAL;
	*n = 0;
	return ctl_call(c, &call);
}
