/* A connection's replies on their way out, written without ever blocking
 * (knfsd's svc_xprt send path): a reply goes straight to the socket when
 * nothing is queued ahead of it and the socket takes it whole; what the
 * socket does not take waits in the queue, in order, for the connection's
 * own thread to write when the socket is writable.  So a reply is never
 * interleaved with another, a worker never waits on a peer, and a failed
 * write marks the queue broken: nothing more is sent on that stream. */
#ifndef PANDO_RPC_SENDQ_H
#define PANDO_RPC_SENDQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc_msg.h"

struct bufpool;

/* One reply: record mark and reply header (copied), the results and
 * payload (owned, released once written or dropped), the XDR padding. */
struct rpc_out {
	struct rpc_out *next;
	uint8_t head[4 + RPC_REPLY_HEADER_MAX];
	size_t head_len;
	uint8_t *res; /* malloc'd; freed */
	size_t res_len;
	void *payload;
	size_t payload_len;
	size_t pad;
	struct bufpool *pool; /* payload's pool when payload_pooled */
	bool payload_pooled;
	void (*payload_free)(void *);
	size_t sent; /* bytes of this reply written */
};

struct rpc_sendq {
	pthread_mutex_t lock; /* guards everything below and writes to fd */
	int fd;
	struct rpc_out *head, *tail;
	size_t bytes;         /* queued bytes not written yet */
	bool broken;          /* a write failed or the queue was dropped */
	uint64_t progress_ms; /* last write, or when the queue filled */
};

/* Fills out's mark and header; results and payload are set by the caller. */
void rpc_out_init(struct rpc_out *out, const uint8_t *hdr, size_t hdr_len);
/* The whole reply's size on the wire. */
size_t rpc_out_size(const struct rpc_out *out);
void rpc_out_release(struct rpc_out *out);

void rpc_sendq_init(struct rpc_sendq *q, int fd);
void rpc_sendq_destroy(struct rpc_sendq *q);
/* Sends or queues `out` (taking what it owns; out itself may be on the
 * stack).  1: queued, the connection's thread must be woken to write it;
 * 0: written whole, or dropped because the queue is broken; -errno: the
 * write failed now (the queue is broken from here on). */
int rpc_sendq_send(struct rpc_sendq *q, struct rpc_out *out, uint64_t now_ms);
/* Writes what the socket takes.  0 (more may remain), or -errno: broken. */
int rpc_sendq_flush(struct rpc_sendq *q, uint64_t now_ms);
/* Queued bytes, and when the queue last moved (0 bytes: nothing waits). */
size_t rpc_sendq_pending(struct rpc_sendq *q, uint64_t *progress_ms);
/* Releases everything queued and refuses all further replies. */
void rpc_sendq_drop(struct rpc_sendq *q);

#endif
