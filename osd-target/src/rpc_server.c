#include "rpc_server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bufpool.h"
#include "byteorder.h"
#include "hostport.h"
#include "iov.h"
#include "log.h"
#include "rpc_msg.h"

#define LAST_FRAGMENT 0x80000000u
#define MAX_FRAGMENTS 1024
/* Records and payloads above this come from the buffer pool. */
#define SMALL_BUF (64u << 10)

struct rpc_conn {
	struct rpc_server *srv;
	int fd;
	struct sockaddr_storage peer;
	char name[64];
	pthread_mutex_t send_lock;
	pthread_mutex_t lock;           /* guards refs, inflight */
	pthread_cond_t drained;
	unsigned refs;                  /* the reader, plus one per queued job */
	unsigned inflight;
	struct rpc_conn *next, *prev;   /* server's connection list */
};

struct rpc_job {
	struct rpc_conn *conn;
	uint8_t *record;
	size_t len;
	int pooled;             /* record is a pool buffer */
	struct rpc_job *next;
};

struct rpc_server {
	struct rpc_server_config cfg;
	struct rpc_program prog;
	int listen_fd;
	int wake_fd;                    /* eventfd: tells the acceptor to stop */
	uint16_t port;
	pthread_t acceptor;
	pthread_t *workers;
	struct bufpool pool;            /* max_record-sized buffers */

	pthread_mutex_t lock;           /* guards everything below */
	pthread_cond_t work;
	pthread_cond_t conns_gone;
	struct rpc_job *head, *tail;
	struct rpc_conn *conns;
	unsigned nconns;
	int stopping;
};

static int open_listener(const char *spec, uint16_t *bound, const char **why)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, one = 1, rc;

	if (pando_hostport_split(spec, host, sizeof(host), port, sizeof(port))) {
		*why = "listen address must be HOST:PORT";
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		*why = gai_strerror(rc);
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		*why = "socket";
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		rc = -errno;
		*why = "bind/listen";
		close(fd);
		goto out;
	}
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						: ((struct sockaddr_in *)&ss)->sin_port);
	rc = fd;
out:
	freeaddrinfo(ai);
	return rc;
}

static void peer_name(const struct sockaddr_storage *ss, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN + 1] = "?", port[8] = "?";

	getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host, sizeof(host), port,
		    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, cap, "%s:%s", host, port);
}

static void conn_put(struct rpc_conn *c)
{
	struct rpc_server *srv = c->srv;
	unsigned left;

	pthread_mutex_lock(&c->lock);
	left = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (left)
		return;
	/* Not after srv->lock is let go: rpc_server_stop may free srv as
	 * soon as the last connection is off the list. */
	log_debug("%s: connection %s closed", srv->prog.name, c->name);
	pthread_mutex_lock(&srv->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	pthread_cond_broadcast(&srv->conns_gone);
	pthread_mutex_unlock(&srv->lock);
	close(c->fd);
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->drained);
	free(c);
}

static int read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Room for `more` bytes after `len`: a large or fragmented record moves
 * into a pool buffer (max_record bytes, so it never grows again), a small
 * single-fragment one gets a plain allocation of its size. */
static int reserve_record(struct rpc_conn *c, struct rpc_job *job, size_t more, int last)
{
	struct bufpool *pool = &c->srv->pool;
	uint8_t *buf;

	if (job->pooled)
		return 0;
	if (job->len == 0 && last && more <= SMALL_BUF) {
		job->record = malloc(more ? more : 1);
		return job->record ? 0 : -ENOMEM;
	}
	buf = bufpool_get(pool);
	if (!buf)
		return -ENOMEM;
	if (job->len)
		memcpy(buf, job->record, job->len);
	free(job->record);
	job->record = buf;
	job->pooled = 1;
	return 0;
}

/* Appends one fragment to the job's record; sets *last.  -errno closes
 * the connection. */
static int read_fragment(struct rpc_conn *c, struct rpc_job *job, int *last)
{
	size_t max = c->srv->cfg.max_record;
	uint8_t mark[4];
	uint32_t flen;
	int rc = read_full(c->fd, mark, 4);

	if (rc)
		return rc;
	flen = get_be32(mark) & ~LAST_FRAGMENT;
	*last = (get_be32(mark) & LAST_FRAGMENT) != 0;
	if (flen > max - job->len) {
		log_warn("%s: %s sent a record over %zu bytes: closing", c->srv->prog.name,
			 c->name, max);
		return -EMSGSIZE;
	}
	rc = reserve_record(c, job, flen, *last);
	if (rc)
		return rc;
	rc = read_full(c->fd, job->record + job->len, flen);
	if (rc)
		return rc;
	job->len += flen;
	return 0;
}

static void release_record(struct rpc_server *srv, struct rpc_job *job)
{
	if (job->pooled)
		bufpool_put(&srv->pool, job->record);
	else
		free(job->record);
	job->record = NULL;
	job->pooled = 0;
	job->len = 0;
}

/* Reads one record (all its fragments) into the job. */
static int read_record(struct rpc_conn *c, struct rpc_job *job)
{
	int last = 0, rc = 0;

	for (int frags = 0; !last && !rc; frags++) {
		if (frags == MAX_FRAGMENTS) {
			log_warn("%s: %s sent over %d fragments: closing", c->srv->prog.name,
				 c->name, MAX_FRAGMENTS);
			rc = -EPROTO;
			break;
		}
		rc = read_fragment(c, job, &last);
	}
	if (rc)
		release_record(c->srv, job);
	return rc;
}

static void queue_job(struct rpc_server *srv, struct rpc_job *job)
{
	pthread_mutex_lock(&srv->lock);
	if (srv->tail)
		srv->tail->next = job;
	else
		srv->head = job;
	srv->tail = job;
	pthread_cond_signal(&srv->work);
	pthread_mutex_unlock(&srv->lock);
}

/* Waits until the connection has room for one more request in flight. */
static void conn_admit(struct rpc_conn *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->inflight >= c->srv->cfg.max_inflight)
		pthread_cond_wait(&c->drained, &c->lock);
	c->inflight++;
	c->refs++;
	pthread_mutex_unlock(&c->lock);
}

static void *reader_main(void *arg)
{
	struct rpc_conn *c = arg;

	for (;;) {
		struct rpc_job *job = calloc(1, sizeof(*job));
		int rc;

		if (!job)
			break;
		rc = read_record(c, job);
		if (rc) {
			free(job);
			/* A broken stream is dropped at once, replies in flight
			 * included; a peer that simply closed still gets them. */
			if (rc != -ECONNRESET)
				shutdown(c->fd, SHUT_RDWR);
			break;
		}
		conn_admit(c);
		job->conn = c;
		queue_job(c->srv, job);
	}
	conn_put(c);
	return NULL;
}

static int send_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		iov_advance(&iov, &n, (size_t)w);
	}
	return 0;
}

static void send_reply(struct rpc_conn *c, const uint8_t *hdr, size_t hdr_len,
		       const struct rpc_reply *reply, int with_results)
{
	static const uint8_t zeros[4];
	uint8_t mark[4];
	size_t body = hdr_len;
	size_t pad = 0;
	struct iovec iov[5];
	int n = 0;

	if (with_results) {
		pad = XDR_PAD(reply->payload_len) - reply->payload_len;
		body += reply->res.len + reply->payload_len + pad;
	}
	put_be32(mark, LAST_FRAGMENT | (uint32_t)body);
	iov[n++] = (struct iovec){ mark, 4 };
	iov[n++] = (struct iovec){ (void *)hdr, hdr_len };
	if (with_results) {
		iov[n++] = (struct iovec){ reply->res.buf, reply->res.len };
		if (reply->payload_len)
			iov[n++] = (struct iovec){ reply->payload, reply->payload_len };
		if (pad)
			iov[n++] = (struct iovec){ (void *)zeros, pad };
	}
	pthread_mutex_lock(&c->send_lock);
	if (send_all(c->fd, iov, n))
		log_debug("%s: reply to %s not sent: %s", c->srv->prog.name, c->name,
			  strerror(errno));
	pthread_mutex_unlock(&c->send_lock);
}

void *rpc_reply_alloc_payload(struct rpc_reply *reply, size_t len)
{
	if (reply->pool && len > SMALL_BUF && len <= reply->pool->size) {
		reply->payload = bufpool_get(reply->pool);
		reply->payload_pooled = reply->payload != NULL;
	} else {
		reply->payload = malloc(len ? len : 1);
		reply->payload_free = free;
	}
	return reply->payload;
}

static void release_payload(struct rpc_reply *reply)
{
	if (reply->payload_pooled)
		bufpool_put(reply->pool, reply->payload);
	else if (reply->payload && reply->payload_free)
		reply->payload_free(reply->payload);
}

static enum rpc_outcome dispatch_call(struct rpc_server *srv, const struct rpc_call *call,
				      struct rpc_reply *reply)
{
	if (call->prog != srv->prog.prog)
		return RPC_OUT_PROG_UNAVAIL;
	return srv->prog.dispatch(srv->prog.ctx, call, reply);
}

static void handle_job(struct rpc_server *srv, struct rpc_job *job)
{
	struct rpc_conn *c = job->conn;
	uint8_t hdr[RPC_REPLY_HEADER_MAX];
	uint8_t *res = malloc(RPC_REPLY_RES_CAP);
	struct rpc_reply reply = { 0 };
	struct rpc_call call = { 0 };
	enum rpc_outcome outcome = RPC_OUT_SYSTEM_ERR;
	size_t hdr_len;

	if (!res) {
		log_error("%s: out of memory for a reply", srv->prog.name);
		return;
	}
	xw_init(&reply.res, res, RPC_REPLY_RES_CAP);
	reply.pool = &srv->pool;
	call.peer = c->peer;
	switch (rpc_msg_decode_call(job->record, job->len, &call)) {
	case RPC_CALL_IGNORE:
		log_debug("%s: %s sent a non-call record: ignored", srv->prog.name, c->name);
		free(res);
		return;
	case RPC_CALL_RPC_MISMATCH:
		hdr_len = rpc_msg_encode_rpc_mismatch(hdr, call.xid);
		send_reply(c, hdr, hdr_len, &reply, 0);
		free(res);
		return;
	case RPC_CALL_BADCRED:
		outcome = RPC_OUT_AUTH_BADCRED;
		break;
	case RPC_CALL_OK:
		outcome = dispatch_call(srv, &call, &reply);
		break;
	}
	if (outcome == RPC_OUT_SUCCESS && xw_overflowed(&reply.res)) {
		log_error("%s: proc %u reply overflowed its buffer", srv->prog.name, call.proc);
		outcome = RPC_OUT_SYSTEM_ERR;
	}
	if (outcome != RPC_OUT_DROP) {
		hdr_len = rpc_msg_encode_reply_header(hdr, call.xid, outcome, &reply);
		send_reply(c, hdr, hdr_len, &reply, outcome == RPC_OUT_SUCCESS);
	}
	release_payload(&reply);
	free(res);
}

static void job_done(struct rpc_job *job)
{
	struct rpc_conn *c = job->conn;

	pthread_mutex_lock(&c->lock);
	c->inflight--;
	pthread_cond_signal(&c->drained);
	pthread_mutex_unlock(&c->lock);
	release_record(c->srv, job);
	free(job);
	conn_put(c);
}

static void *worker_main(void *arg)
{
	struct rpc_server *srv = arg;

	for (;;) {
		struct rpc_job *job;

		pthread_mutex_lock(&srv->lock);
		while (!srv->head && !srv->stopping)
			pthread_cond_wait(&srv->work, &srv->lock);
		job = srv->head;
		if (!job) {
			pthread_mutex_unlock(&srv->lock);
			return NULL;
		}
		srv->head = job->next;
		if (!srv->head)
			srv->tail = NULL;
		pthread_mutex_unlock(&srv->lock);
		handle_job(srv, job);
		job_done(job);
	}
}

static struct rpc_conn *conn_new(struct rpc_server *srv, int fd,
				 const struct sockaddr_storage *peer)
{
	struct rpc_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->srv = srv;
	c->fd = fd;
	c->peer = *peer;
	c->refs = 1;
	peer_name(peer, c->name, sizeof(c->name));
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->drained, NULL);
	return c;
}

/* Registers the connection and starts its reader; closes fd on failure. */
static void start_conn(struct rpc_server *srv, int fd, const struct sockaddr_storage *peer)
{
	struct rpc_conn *c;
	pthread_attr_t attr;
	pthread_t tid;
	int one = 1;
	struct timeval send_timeout = { .tv_sec = 60 };

	pthread_mutex_lock(&srv->lock);
	if (srv->nconns >= srv->cfg.max_conns) {
		pthread_mutex_unlock(&srv->lock);
		log_warn("%s: %u connections already: refusing one", srv->prog.name,
			 srv->cfg.max_conns);
		close(fd);
		return;
	}
	c = conn_new(srv, fd, peer);
	if (!c) {
		pthread_mutex_unlock(&srv->lock);
		close(fd);
		return;
	}
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->nconns++;
	pthread_mutex_unlock(&srv->lock);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* A peer that stops reading must not hold a worker forever. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
	log_debug("%s: connection from %s", srv->prog.name, c->name);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&tid, &attr, reader_main, c)) {
		log_error("%s: no thread for %s", srv->prog.name, c->name);
		conn_put(c);
	}
	pthread_attr_destroy(&attr);
}

static void *acceptor_main(void *arg)
{
	struct rpc_server *srv = arg;
	struct pollfd pfd[2] = { { srv->listen_fd, POLLIN, 0 }, { srv->wake_fd, POLLIN, 0 } };

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("%s: poll: %s", srv->prog.name, strerror(errno));
			return NULL;
		}
		if (pfd[1].revents)
			return NULL;
		fd = accept4(srv->listen_fd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				log_warn("%s: accept: %s", srv->prog.name, strerror(errno));
			if (errno == EMFILE || errno == ENFILE)
				usleep(100000);
			continue;
		}
		start_conn(srv, fd, &peer);
	}
}

static void server_free(struct rpc_server *srv)
{
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	if (srv->wake_fd >= 0)
		close(srv->wake_fd);
	pthread_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->work);
	pthread_cond_destroy(&srv->conns_gone);
	bufpool_destroy(&srv->pool);
	free(srv->workers);
	free(srv);
}

static int start_threads(struct rpc_server *srv)
{
	srv->workers = calloc(srv->cfg.threads, sizeof(pthread_t));
	if (!srv->workers)
		return -ENOMEM;
	for (unsigned i = 0; i < srv->cfg.threads; i++) {
		if (pthread_create(&srv->workers[i], NULL, worker_main, srv)) {
			pthread_mutex_lock(&srv->lock);
			srv->stopping = 1;
			pthread_cond_broadcast(&srv->work);
			pthread_mutex_unlock(&srv->lock);
			while (i--)
				pthread_join(srv->workers[i], NULL);
			return -EAGAIN;
		}
	}
	if (pthread_create(&srv->acceptor, NULL, acceptor_main, srv)) {
		pthread_mutex_lock(&srv->lock);
		srv->stopping = 1;
		pthread_cond_broadcast(&srv->work);
		pthread_mutex_unlock(&srv->lock);
		for (unsigned i = 0; i < srv->cfg.threads; i++)
			pthread_join(srv->workers[i], NULL);
		return -EAGAIN;
	}
	return 0;
}

int rpc_server_start(const struct rpc_server_config *cfg, const struct rpc_program *prog,
		     struct rpc_server **out, const char **why)
{
	struct rpc_server *srv = calloc(1, sizeof(*srv));
	int rc;

	if (!srv) {
		*why = "out of memory";
		return -ENOMEM;
	}
	srv->cfg = *cfg;
	srv->prog = *prog;
	srv->wake_fd = -1;
	if (!srv->cfg.threads)
		srv->cfg.threads = 1;
	if (!srv->cfg.max_inflight)
		srv->cfg.max_inflight = 16;
	if (!srv->cfg.max_conns)
		srv->cfg.max_conns = 256;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->work, NULL);
	pthread_cond_init(&srv->conns_gone, NULL);
	/* Enough for every worker's record and payload, plus a reader each
	 * for a few busy connections. */
	if (bufpool_init(&srv->pool, srv->cfg.max_record, 2 * srv->cfg.threads + 16)) {
		*why = "out of memory";
		srv->listen_fd = -1;
		server_free(srv);
		return -ENOMEM;
	}
	srv->listen_fd = open_listener(cfg->listen, &srv->port, why);
	if (srv->listen_fd < 0) {
		rc = srv->listen_fd;
		server_free(srv);
		return rc;
	}
	srv->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (srv->wake_fd < 0) {
		rc = -errno;
		*why = "eventfd";
		server_free(srv);
		return rc;
	}
	rc = start_threads(srv);
	if (rc) {
		*why = "cannot start threads";
		server_free(srv);
		return rc;
	}
	log_info("%s: listening on %s (port %u), %u workers", prog->name, cfg->listen,
		 srv->port, srv->cfg.threads);
	*out = srv;
	return 0;
}

uint16_t rpc_server_port(const struct rpc_server *srv)
{
	return srv->port;
}

void rpc_server_stop(struct rpc_server *srv)
{
	uint64_t one = 1;

	if (write(srv->wake_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("%s: cannot wake the acceptor", srv->prog.name);
	pthread_join(srv->acceptor, NULL);
	/* Stop reading new requests; readers exit and, once the requests they
	 * queued are answered, their connections close. */
	pthread_mutex_lock(&srv->lock);
	for (struct rpc_conn *c = srv->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RD);
	while (srv->nconns)
		pthread_cond_wait(&srv->conns_gone, &srv->lock);
	srv->stopping = 1;
	pthread_cond_broadcast(&srv->work);
	pthread_mutex_unlock(&srv->lock);
	for (unsigned i = 0; i < srv->cfg.threads; i++)
		pthread_join(srv->workers[i], NULL);
	log_info("%s: stopped", srv->prog.name);
	server_free(srv);
}
