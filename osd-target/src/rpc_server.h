/* ONC RPC (RFC 5531) server over TCP, built so that one peer cannot stall
 * or exhaust it: one thread per connection reads records and writes the
 * replies the socket would not take at once, a shared worker pool runs the
 * calls and never waits on a peer (rpc_sendq.h); a record is held in a
 * small buffer until its call is admitted from its header (rpc_record.h);
 * idle, unfinished-record and unread-reply deadlines close connections;
 * connections are limited per source address.  A program plugs in a
 * dispatch function and, optionally, an admission function. */
#ifndef PANDO_RPC_SERVER_H
#define PANDO_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "xdr.h"

#define RPC_AUTH_NONE 0
#define RPC_AUTH_SYS 1
#define RPC_MAX_AUTH_BYTES 400

/* How a dispatch function tells the transport what to answer. */
enum rpc_outcome {
	RPC_OUT_SUCCESS = 0, /* accepted, SUCCESS, results in reply->res */
	RPC_OUT_PROG_UNAVAIL,
	RPC_OUT_PROG_MISMATCH,
	RPC_OUT_PROC_UNAVAIL,
	RPC_OUT_GARBAGE_ARGS,
	RPC_OUT_SYSTEM_ERR,
	RPC_OUT_AUTH_BADCRED, /* denied, AUTH_ERROR with this auth_stat */
	RPC_OUT_AUTH_REJECTEDCRED,
	RPC_OUT_AUTH_BADVERF,
	RPC_OUT_AUTH_REJECTEDVERF,
	RPC_OUT_AUTH_TOOWEAK,
	RPC_OUT_DROP, /* send nothing */
};

struct rpc_opaque_auth {
	uint32_t flavor;
	uint32_t len;
	const uint8_t *body; /* points into the record */
};

/* A decoded call.  Everything points into the record buffer, which lives
 * until the dispatch function returns. */
struct rpc_call {
	uint32_t xid;
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
	struct rpc_opaque_auth cred;
	struct rpc_opaque_auth verf;
	const uint8_t *header; /* start of the call message */
	size_t header_len;     /* bytes up to the end of the verifier */
	const uint8_t *args;
	size_t args_len;
	struct sockaddr_storage peer;
	/* The program's admission function accepted this call's header (for
	 * the control program: its credential is authenticated, and the reply
	 * verifier is already in the reply). */
	bool admitted;
};

/* The reply a dispatch function builds.  `res` holds the encoded results
 * (its buffer is preallocated by the transport, RPC_REPLY_RES_CAP bytes).
 * A large opaque that ends the results (READ data) goes in `payload`
 * instead of being copied into res: the transport sends res, then
 * payload_len bytes of payload, then the XDR padding.  The payload is
 * released after sending: with payload_free if set, or back to the
 * transport's pool if it came from rpc_reply_alloc_payload. */
#define RPC_REPLY_RES_CAP 8192
struct bufpool;
struct rpc_reply {
	struct bufpool *pool; /* the transport's, for rpc_reply_alloc_payload */
	int payload_pooled;
	struct xdr_w res;
	void *payload;
	size_t payload_len;
	void (*payload_free)(void *);
	uint32_t verf_flavor; /* reply verifier, AUTH_NONE by default */
	uint8_t verf[RPC_MAX_AUTH_BYTES];
	uint32_t verf_len;
	uint32_t mismatch_low; /* for RPC_OUT_PROG_MISMATCH */
	uint32_t mismatch_high;
};

/* A payload buffer of at least len bytes (len at most the server's
 * max_record), attached to the reply and released by the transport after
 * sending, whatever the outcome.  NULL when memory is short. */
void *rpc_reply_alloc_payload(struct rpc_reply *reply, size_t len);

typedef enum rpc_outcome (*rpc_dispatch_fn)(void *ctx, const struct rpc_call *call,
					    struct rpc_reply *reply);

/* Decides from a call's header, before the rest of its record is read,
 * whether to read it and how many argument bytes it may have.  call->args
 * holds the arguments' first bytes only (args_len of them, at least
 * RPC_RECORD_PREAUTH minus the header, or all of them when shorter).
 * RPC_OUT_SUCCESS with *max_args set (preset to the server's max_record):
 * the call is read and dispatched with call->admitted; any other outcome is
 * answered at once and the arguments are dropped unread.  It may fill the
 * reply's verifier and mismatch fields (reply->res has no room): the
 * answer, or the dispatch, gets them. */
typedef enum rpc_outcome (*rpc_admit_fn)(void *ctx, const struct rpc_call *call,
					 struct rpc_reply *reply, size_t *max_args);

struct rpc_program {
	const char *name; /* for logs */
	uint32_t prog;
	uint32_t vers;
	rpc_dispatch_fn dispatch;
	void *ctx;
	rpc_admit_fn admit; /* NULL: every call of `prog` may be max_record */
};

struct rpc_server_config {
	const char *listen; /* "HOST:PORT"; PORT 0 picks a free one */
	unsigned threads;   /* worker pool size */
	unsigned max_conns;
	size_t max_record;             /* larger records close the connection */
	unsigned max_inflight;         /* per connection, before the reader waits */
	unsigned max_conns_per_source; /* from one address; 0: max_conns */
	unsigned idle_timeout_s;       /* nothing read, nothing to do: close; 0: never */
	unsigned record_timeout_s;     /* a record begun must end in this; 0: never */
	unsigned send_timeout_s;       /* queued replies that do not move: close; 0: never */
	size_t reply_budget;           /* queued reply bytes past which no request is
				   * read (0: RPC_REPLY_BUDGET_DEFAULT) */
};

#define RPC_REPLY_BUDGET_DEFAULT (4u << 20)

struct rpc_server;

/* Binds, listens and starts the accept, reader and worker threads.
 * 0 or -errno; *why points at a static description on failure. */
int rpc_server_start(const struct rpc_server_config *cfg, const struct rpc_program *prog,
		     struct rpc_server **out, const char **why);
/* The bound port (useful with PORT 0). */
uint16_t rpc_server_port(const struct rpc_server *srv);
/* Stops accepting, shuts connections, waits for requests in flight, frees. */
void rpc_server_stop(struct rpc_server *srv);

#endif
