/* A connection's thread and a job's reply: records are read without ever
 * blocking the thread on one socket operation, each call is admitted from
 * its header before the rest is buffered, admitted calls go to the
 * workers, and the thread writes the replies the socket did not take at
 * once.  The connection closes on a protocol error, on a deadline (idle,
 * unfinished record, replies not read), or once the peer has closed and
 * every call it sent is answered. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rpc_internal.h"

#define SCRATCH_LEN (16u << 10) /* a denied record's bytes land here */
#define CONN_DONE 1             /* a turn's "closed cleanly" */

uint64_t rpc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void rpc_conn_wake(struct rpc_conn *c)
{
	uint64_t one = 1;

	if (write(c->wake_fd, &one, sizeof(one)) != sizeof(one))
		log_debug("%s: cannot wake %s: %s", c->srv->prog.name, c->name, strerror(errno));
}

/* Sends (or queues) a reply; the thread is woken when it has to write. */
static int conn_send(struct rpc_conn *c, struct rpc_out *out)
{
	int rc = rpc_sendq_send(&c->sendq, out, rpc_now_ms());

	if (rc > 0)
		rpc_conn_wake(c);
	return rc < 0 ? rc : 0;
}

/* ---- the worker's side ---- */

void *rpc_reply_alloc_payload(struct rpc_reply *reply, size_t len)
{
	if (reply->pool && len > RPC_RECORD_SMALL && len <= reply->pool->size) {
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
	struct rpc_out out = { .payload = reply->payload,
			       .pool = reply->pool,
			       .payload_pooled = reply->payload_pooled,
			       .payload_free = reply->payload_free };

	rpc_out_release(&out);
}

/* Answers a call a worker ran; res and the payload are handed over. */
static void send_result(struct rpc_conn *c, uint32_t xid, enum rpc_outcome outcome,
			struct rpc_reply *reply, uint8_t *res)
{
	uint8_t hdr[RPC_REPLY_HEADER_MAX];
	size_t hdr_len = rpc_msg_encode_reply_header(hdr, xid, outcome, reply);
	struct rpc_out out;

	rpc_out_init(&out, hdr, hdr_len);
	if (outcome == RPC_OUT_SUCCESS) {
		out.res = res;
		out.res_len = reply->res.len;
		out.payload = reply->payload;
		out.payload_len = reply->payload_len;
		out.pad = XDR_PAD(reply->payload_len) - reply->payload_len;
		out.pool = reply->pool;
		out.payload_pooled = reply->payload_pooled;
		out.payload_free = reply->payload_free;
	} else {
		free(res);
		release_payload(reply);
	}
	if (conn_send(c, &out)) {
		/* The stream is broken: the thread sees it and closes. */
		log_debug("%s: reply to %s not sent", c->srv->prog.name, c->name);
		shutdown(c->fd, SHUT_RDWR);
	}
}

void rpc_conn_run_job(struct rpc_server *srv, struct rpc_job *job)
{
	struct rpc_conn *c = job->conn;
	struct rpc_reply *reply = &job->head;
	uint8_t *res = malloc(RPC_REPLY_RES_CAP);
	struct rpc_call call = { 0 };
	enum rpc_outcome outcome = RPC_OUT_SYSTEM_ERR;

	if (!res) {
		log_error("%s: out of memory for a reply", srv->prog.name);
		return;
	}
	xw_init(&reply->res, res, RPC_REPLY_RES_CAP);
	reply->pool = &srv->pool;
	call.peer = c->peer;
	/* Admitted, so its header decodes. */
	if (rpc_msg_decode_call(job->record.data, job->record.len, &call) == RPC_CALL_OK) {
		call.admitted = true;
		outcome = srv->prog.dispatch(srv->prog.ctx, &call, reply);
	}
	if (outcome == RPC_OUT_SUCCESS && xw_overflowed(&reply->res)) {
		log_error("%s: proc %u reply overflowed its buffer", srv->prog.name, call.proc);
		outcome = RPC_OUT_SYSTEM_ERR;
	}
	if (outcome == RPC_OUT_DROP) {
		free(res);
		release_payload(reply);
		return;
	}
	send_result(c, call.xid, outcome, reply, res);
}

/* ---- the connection thread's side: admission ---- */

static enum rpc_outcome admit_call(struct rpc_server *srv, const struct rpc_call *call,
				   struct rpc_reply *head, size_t *max_args)
{
	if (call->prog != srv->prog.prog)
		return RPC_OUT_PROG_UNAVAIL;
	if (!srv->prog.admit)
		return RPC_OUT_SUCCESS;
	return srv->prog.admit(srv->prog.ctx, call, head, max_args);
}

/* The record's header is in: read the rest (up to what the program
 * allows), or drop it and answer at its end. */
static int conn_admit(struct rpc_conn *c)
{
	struct rpc_server *srv = c->srv;
	struct rpc_admission *a = &c->adm;
	struct rpc_call call = { 0 };
	size_t max_args = srv->cfg.max_record;

	memset(a, 0, sizeof(*a));
	call.peer = c->peer;
	a->verdict = rpc_msg_decode_call(c->rec.buf.data, c->rec.buf.len, &call);
	a->xid = call.xid;
	if (a->verdict == RPC_CALL_OK)
		a->outcome = admit_call(srv, &call, &a->head, &max_args);
	if (a->verdict != RPC_CALL_OK || a->outcome != RPC_OUT_SUCCESS)
		return rpc_record_deny(&c->rec);
	if (max_args > srv->cfg.max_record)
		max_args = srv->cfg.max_record;
	return rpc_record_admit(&c->rec, call.header_len + max_args);
}

/* The answer to a call that was not admitted (none to a non-call). */
static int answer_denied(struct rpc_conn *c)
{
	struct rpc_admission *a = &c->adm;
	uint8_t hdr[RPC_REPLY_HEADER_MAX];
	enum rpc_outcome outcome = a->outcome;
	struct rpc_out out;
	size_t len;

	switch (a->verdict) {
	case RPC_CALL_IGNORE:
		log_debug("%s: %s sent a non-call record: ignored", c->srv->prog.name, c->name);
		return 0;
	case RPC_CALL_RPC_MISMATCH:
		len = rpc_msg_encode_rpc_mismatch(hdr, a->xid);
		break;
	case RPC_CALL_BADCRED:
		outcome = RPC_OUT_AUTH_BADCRED;
		/* fall through */
	case RPC_CALL_OK:
		if (outcome == RPC_OUT_DROP)
			return 0;
		len = rpc_msg_encode_reply_header(hdr, a->xid, outcome, &a->head);
		break;
	default:
		return 0;
	}
	rpc_out_init(&out, hdr, len);
	return conn_send(c, &out);
}

/* A whole record: an admitted call goes to the workers. */
static int conn_record_done(struct rpc_conn *c)
{
	struct rpc_server *srv = c->srv;
	struct rpc_job *job;
	struct rpc_buf buf;

	rpc_record_take(&c->rec, &buf);
	if (c->adm.verdict != RPC_CALL_OK || c->adm.outcome != RPC_OUT_SUCCESS) {
		rpc_buf_release(&srv->pool, &buf);
		return answer_denied(c);
	}
	job = malloc(sizeof(*job));
	if (!job) {
		rpc_buf_release(&srv->pool, &buf);
		return -ENOMEM;
	}
	job->conn = c;
	job->record = buf;
	job->head = c->adm.head;
	job->next = NULL;
	pthread_mutex_lock(&c->lock);
	c->inflight++;
	c->refs++;
	pthread_mutex_unlock(&c->lock);
	rpc_server_queue_job(srv, job);
	return 0;
}

/* ---- reading ---- */

static void log_bad_record(struct rpc_conn *c, int rc)
{
	struct rpc_server *srv = c->srv;

	if (rc == -EMSGSIZE)
		log_limited(&srv->peer_log, LOG_WARN,
			    "%s: %s sent a record over its limit (%zu bytes at most): closing",
			    srv->prog.name, c->name, srv->cfg.max_record);
	else if (rc == -EPROTO)
		log_limited(&srv->peer_log, LOG_WARN, "%s: %s sent over %u fragments: closing",
			    srv->prog.name, c->name, RPC_RECORD_MAX_FRAGMENTS);
}

/* Feeds n bytes just read to the record; 0, or -errno to close. */
static int conn_got(struct rpc_conn *c, size_t n, uint64_t now)
{
	int step;

	if (!rpc_record_started(&c->rec))
		c->record_ms = now;
	c->active_ms = now;
	step = rpc_record_got(&c->rec, n);
	if (step == RPC_REC_ADMIT)
		step = conn_admit(c);
	if (step == RPC_REC_DONE)
		step = conn_record_done(c);
	if (step < 0)
		log_bad_record(c, step);
	return step < 0 ? step : 0;
}

/* Whether another request may be read: no while the replies queued are
 * over the budget or the connection has max_inflight calls in its
 * workers (backpressure), checked between records only. */
static bool conn_may_read(struct rpc_conn *c)
{
	uint64_t progress;
	bool room;

	if (c->eof)
		return false;
	if (atomic_load(&c->srv->draining)) {
		c->eof = true;
		return false;
	}
	if (rpc_record_started(&c->rec))
		return true;
	if (rpc_sendq_pending(&c->sendq, &progress) >= c->srv->cfg.reply_budget)
		return false;
	pthread_mutex_lock(&c->lock);
	room = c->inflight < c->srv->cfg.max_inflight;
	c->waiting = !room;
	pthread_mutex_unlock(&c->lock);
	return room;
}

/* Reads what the socket has, record by record, while reading is allowed.
 * 0, or -errno to close. */
static int conn_read(struct rpc_conn *c)
{
	uint8_t scratch[SCRATCH_LEN];

	while (conn_may_read(c)) {
		uint8_t *dst;
		size_t len;
		ssize_t n;
		int rc = rpc_record_space(&c->rec, scratch, sizeof(scratch), &dst, &len);

		if (rc)
			return rc;
		n = recv(c->fd, dst, len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		if (n == 0) {
			/* The peer closed: the calls it sent are still answered;
			 * a record it left unfinished is dropped. */
			c->eof = true;
			rpc_record_reset(&c->rec);
			return 0;
		}
		rc = conn_got(c, (size_t)n, rpc_now_ms());
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- deadlines and the thread's loop ---- */

/* What the thread waits for, from one look at the connection. */
struct conn_view {
	bool reading;         /* may read a request */
	size_t queued;        /* reply bytes waiting for the socket */
	uint64_t progress_ms; /* when they last moved */
	unsigned inflight;
	uint64_t done_ms; /* when the last job ended */
};

static void conn_look(struct rpc_conn *c, struct conn_view *v)
{
	v->reading = conn_may_read(c);
	v->queued = rpc_sendq_pending(&c->sendq, &v->progress_ms);
	pthread_mutex_lock(&c->lock);
	v->inflight = c->inflight;
	v->done_ms = c->done_ms;
	/* A drain waits for the last job to wake it. */
	if (v->inflight && c->eof)
		c->waiting = true;
	pthread_mutex_unlock(&c->lock);
}

static uint64_t later(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The deadline in force (0: none) and what it stands for; *what NULL:
 * only a time to look again (calls in flight are not idleness, and their
 * end wakes nobody, so the idle deadline is recomputed from it then). */
static uint64_t conn_deadline(const struct rpc_conn *c, const struct conn_view *v, uint64_t now,
			      const char **what)
{
	const struct rpc_server_config *cfg = &c->srv->cfg;

	if (v->queued && cfg->send_timeout_s) {
		*what = "its replies were not read";
		return v->progress_ms + cfg->send_timeout_s * 1000ull;
	}
	if (rpc_record_started(&c->rec) && cfg->record_timeout_s) {
		*what = "a record it began did not end";
		return c->record_ms + cfg->record_timeout_s * 1000ull;
	}
	if (v->queued || c->eof || !cfg->idle_timeout_s)
		return 0;
	if (v->inflight) {
		*what = NULL;
		return now + cfg->idle_timeout_s * 1000ull;
	}
	*what = "it was idle";
	return later(c->active_ms, v->done_ms) + cfg->idle_timeout_s * 1000ull;
}

/* Sleeps until the socket, a worker or the deadline has news.
 * 0, or -ETIMEDOUT when the deadline passed. */
static int conn_wait(struct rpc_conn *c, const struct conn_view *v, short *revents)
{
	struct pollfd pfd[2] = { { c->fd, 0, 0 }, { c->wake_fd, POLLIN, 0 } };
	const char *what = "";
	uint64_t now = rpc_now_ms(), deadline = conn_deadline(c, v, now, &what), drained;
	int timeout = -1;

	if (deadline && deadline <= now && what) {
		log_limited(&c->srv->peer_log, LOG_INFO, "%s: closing %s: %s", c->srv->prog.name,
			    c->name, what);
		return -ETIMEDOUT;
	}
	if (deadline)
		timeout = deadline <= now          ? 0
			  : deadline - now > 60000 ? 60000
						   : (int)(deadline - now);
	pfd[0].events = (short)((v->reading ? POLLIN : 0) | (v->queued ? POLLOUT : 0));
	*revents = 0;
	if (poll(pfd, 2, timeout) < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[1].revents && read(c->wake_fd, &drained, sizeof(drained)) < 0)
		return -errno;
	*revents = pfd[0].revents;
	return 0;
}

/* One turn: write what is queued, read what came.  0 to go on,
 * CONN_DONE when the peer has closed and everything is answered,
 * -errno to drop the connection. */
static int conn_turn(struct rpc_conn *c, short revents)
{
	struct conn_view v;
	int rc;

	if (revents & (POLLERR | POLLHUP))
		return -ECONNRESET;
	rc = rpc_sendq_flush(&c->sendq, rpc_now_ms());
	if (!rc && (revents & POLLIN))
		rc = conn_read(c);
	if (rc)
		return rc;
	conn_look(c, &v);
	return c->eof && !v.queued && !v.inflight ? CONN_DONE : 0;
}

static void conn_finish(struct rpc_conn *c, int rc)
{
	if (rc != CONN_DONE) {
		/* Nothing more goes out: no reply is left half-sent with
		 * another after it, and queued ones are dropped. */
		shutdown(c->fd, SHUT_RDWR);
		rpc_sendq_drop(&c->sendq);
	}
	rpc_record_reset(&c->rec);
	if (rc != CONN_DONE && rc != -ETIMEDOUT && rc != -ECONNRESET)
		log_debug("%s: dropping %s: %s", c->srv->prog.name, c->name, strerror(-rc));
}

void *rpc_conn_main(void *arg)
{
	struct rpc_conn *c = arg;
	int rc = 0;

	c->active_ms = rpc_now_ms();
	while (!rc) {
		struct conn_view v;
		short revents;

		conn_look(c, &v);
		rc = conn_wait(c, &v, &revents);
		if (!rc)
			rc = conn_turn(c, revents);
	}
	conn_finish(c, rc);
	rpc_conn_put(c);
	return NULL;
}
