#include "rpc_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hostport.h"
#include "rpc_internal.h"

/* Lines a peer can cause: at most this many per interval. */
#define PEER_LOG_INTERVAL_MS 5000
#define PEER_LOG_BURST 10

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

void rpc_conn_put(struct rpc_conn *c)
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
	rpc_sendq_destroy(&c->sendq);
	close(c->fd);
	close(c->wake_fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void rpc_server_queue_job(struct rpc_server *srv, struct rpc_job *job)
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

static void job_done(struct rpc_server *srv, struct rpc_job *job)
{
	struct rpc_conn *c = job->conn;
	bool wake;

	pthread_mutex_lock(&c->lock);
	c->inflight--;
	c->done_ms = rpc_now_ms();
	wake = c->waiting;
	c->waiting = false;
	pthread_mutex_unlock(&c->lock);
	if (wake)
		rpc_conn_wake(c);
	rpc_buf_release(&srv->pool, &job->record);
	free(job);
	rpc_conn_put(c);
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
		rpc_conn_run_job(srv, job);
		job_done(srv, job);
	}
}

/* The address a peer connects from, IPv4-mapped IPv6 as IPv4. */
static void source_of(const struct sockaddr_storage *ss, uint8_t addr[16])
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		memcpy(addr, &in6->sin6_addr, 16);
		return;
	}
	addr[10] = addr[11] = 0xff;
	if (ss->ss_family == AF_INET6)
		memcpy(addr + 12, in6->sin6_addr.s6_addr + 12, 4);
	else
		memcpy(addr + 12, &in->sin_addr, 4);
}

/* Called with srv->lock held: why a new connection from peer is refused,
 * or NULL. */
static const char *refusal(struct rpc_server *srv, const struct sockaddr_storage *peer)
{
	uint8_t src[16], other[16];
	unsigned same = 0;

	if (srv->nconns >= srv->cfg.max_conns)
		return "max_conns";
	source_of(peer, src);
	for (struct rpc_conn *c = srv->conns; c; c = c->next) {
		source_of(&c->peer, other);
		same += !memcmp(src, other, sizeof(src));
	}
	return same >= srv->cfg.max_conns_per_source ? "max_conns_per_source" : NULL;
}

static struct rpc_conn *conn_new(struct rpc_server *srv, int fd,
				 const struct sockaddr_storage *peer)
{
	struct rpc_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		free(c);
		return NULL;
	}
	c->srv = srv;
	c->fd = fd;
	c->peer = *peer;
	c->refs = 1;
	peer_name(peer, c->name, sizeof(c->name));
	rpc_sendq_init(&c->sendq, fd);
	rpc_record_init(&c->rec, &srv->pool, srv->cfg.max_record);
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

/* Called with srv->lock held: a connection for fd on the list, or NULL
 * (refused or out of memory; fd is the caller's to close). */
static struct rpc_conn *conn_register(struct rpc_server *srv, int fd,
				      const struct sockaddr_storage *peer)
{
	const char *why = refusal(srv, peer);
	char name[64];
	struct rpc_conn *c;

	if (why) {
		peer_name(peer, name, sizeof(name));
		log_limited(&srv->peer_log, LOG_WARN,
			    "%s: refusing a connection from %s: %s "
			    "reached",
			    srv->prog.name, name, why);
		return NULL;
	}
	c = conn_new(srv, fd, peer);
	if (!c)
		return NULL;
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->nconns++;
	return c;
}

/* Registers the connection and starts its thread; closes fd on failure. */
static void start_conn(struct rpc_server *srv, int fd, const struct sockaddr_storage *peer)
{
	struct rpc_conn *c;
	pthread_attr_t attr;
	pthread_t tid;
	int one = 1;

	pthread_mutex_lock(&srv->lock);
	c = conn_register(srv, fd, peer);
	pthread_mutex_unlock(&srv->lock);
	if (!c) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	log_debug("%s: connection from %s", srv->prog.name, c->name);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&tid, &attr, rpc_conn_main, c)) {
		log_error("%s: no thread for %s", srv->prog.name, c->name);
		rpc_conn_put(c);
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
	ratelimit_destroy(&srv->peer_log);
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
	if (!srv->cfg.max_conns_per_source)
		srv->cfg.max_conns_per_source = srv->cfg.max_conns;
	if (!srv->cfg.reply_budget)
		srv->cfg.reply_budget = RPC_REPLY_BUDGET_DEFAULT;
	ratelimit_init(&srv->peer_log, PEER_LOG_INTERVAL_MS, PEER_LOG_BURST);
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
	log_info("%s: listening on %s (port %u), %u workers", prog->name, cfg->listen, srv->port,
		 srv->cfg.threads);
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
	/* Stop reading new requests; once the requests they queued are
	 * answered, connections close. */
	atomic_store(&srv->draining, true);
	pthread_mutex_lock(&srv->lock);
	for (struct rpc_conn *c = srv->conns; c; c = c->next) {
		shutdown(c->fd, SHUT_RD);
		rpc_conn_wake(c);
	}
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
