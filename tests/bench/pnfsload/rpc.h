/* ONC RPC (RFC 5531) over TCP with record marking, several calls in flight
 * on one connection.  Each caller owns a slot; the xid carries the slot in
 * its low bits, so a reply finds its caller without a search, and the
 * receiver thread reads the reply straight into the caller's buffer. */
#ifndef PNFSLOAD_RPC_H
#define PNFSLOAD_RPC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define RPC_SLOT_BITS 10u
#define RPC_MAX_SLOTS (1u << RPC_SLOT_BITS)
#define RPC_HDR_MAX 128u
#define RPC_MAX_RECORD (2u << 20) /* a 1 MiB READ reply and room to spare */

struct xdr_w;

/* Serves a call the server sends on this connection (the NFSv4.1 back
 * channel): writes the results to res and returns an accept_stat (0
 * SUCCESS, 3 PROC_UNAVAIL, 4 GARBAGE_ARGS).  Runs on the receiver thread,
 * so it must not wait for a reply on the same connection. */
typedef uint32_t (*rpc_call_handler)(void *arg, uint32_t prog, uint32_t proc, const uint8_t *args,
				     size_t len, struct xdr_w *res);

struct rpc_cred {
	uint32_t uid;
	uint32_t gid;
};

struct rpc_call {
	uint32_t xid;
	bool busy;
	bool done;
	int err;      /* -errno when the connection failed under the call */
	uint8_t *buf; /* the caller's reply buffer */
	size_t cap;
	size_t len;
	pthread_cond_t cond;
};

struct rpc_conn {
	int fd;
	char name[300]; /* for messages: "MDS 127.0.0.1:2049", "DS ..." */
	uint32_t prog;
	uint32_t vers;
	pthread_mutex_t lock; /* calls[], gen, dead */
	pthread_mutex_t send_lock;
	struct rpc_call *calls;
	unsigned ncalls;
	uint32_t gen;
	int dead; /* -errno once the connection is gone */
	pthread_t receiver;
	bool started;
	rpc_call_handler handler; /* NULL: calls from the server are dropped */
	void *handler_arg;
	uint8_t *call_buf;
};

/* Resolves HOST and PORT (numeric or a service name) to an address. */
int rpc_resolve(const char *host, const char *port, struct sockaddr_storage *out, socklen_t *len);
int rpc_connect(struct rpc_conn *c, const struct sockaddr *sa, socklen_t salen, uint32_t prog,
		uint32_t vers, unsigned nslots, const char *name);
/* Sends proc with args (iov, already XDR) on slot and waits for its reply.
 * On success *res points at the procedure's results inside buf (after
 * the accepted-reply header).  -ECONNRESET: the connection died;
 * -EBADMSG: a malformed reply; -EACCES: the call was denied (*why:
 * reject_stat); -EPROTO: not accepted (*why: accept_stat). */
int rpc_call(struct rpc_conn *c, unsigned slot, uint32_t proc, const struct rpc_cred *cred,
	     const struct iovec *args, int nargs, uint8_t *buf, size_t cap, const uint8_t **res,
	     size_t *res_len, uint32_t *why);
/* The two halves of rpc_call, for several calls in flight from one thread
 * (a write to every mirror at once). */
int rpc_start(struct rpc_conn *c, unsigned slot, uint32_t proc, const struct rpc_cred *cred,
	      const struct iovec *args, int nargs, uint8_t *buf, size_t cap);
int rpc_finish(struct rpc_conn *c, unsigned slot, const uint8_t **res, size_t *res_len,
	       uint32_t *why);
void rpc_close(struct rpc_conn *c);
/* From now on, calls from the server go to fn (set before the first call
 * that may trigger them). */
int rpc_serve_calls(struct rpc_conn *c, rpc_call_handler fn, void *arg);
/* The accepted-reply header of a reply record: where the results start. */
int rpc_reply_body(const uint8_t *rec, size_t len, size_t *off, uint32_t *why);

#endif
