/* Private to rpc_server.c (listener, accept, workers) and rpc_conn.c (a
 * connection's thread: records in, admission, deadlines, replies out). */
#ifndef PANDO_RPC_INTERNAL_H
#define PANDO_RPC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bufpool.h"
#include "log.h"
#include "rpc_msg.h"
#include "rpc_record.h"
#include "rpc_sendq.h"
#include "rpc_server.h"

/* What admission decided for the record being read. */
struct rpc_admission {
	enum rpc_call_verdict verdict; /* of the header's decoding */
	enum rpc_outcome outcome;      /* RPC_OUT_SUCCESS: admitted */
	uint32_t xid;
	struct rpc_reply head; /* verifier, mismatch pair */
};

struct rpc_conn {
	struct rpc_server *srv;
	int fd;
	int wake_fd; /* eventfd: a worker has news for the thread */
	struct sockaddr_storage peer;
	char name[64];
	struct rpc_sendq sendq;
	/* The connection's thread alone: */
	struct rpc_record rec;
	struct rpc_admission adm;
	uint64_t record_ms; /* when the record being read began */
	uint64_t active_ms; /* last byte read */
	bool eof;           /* nothing more is read */
	/* Guarded by lock: */
	pthread_mutex_t lock;
	unsigned refs;                /* the thread, plus one per job */
	unsigned inflight;            /* jobs queued or running */
	bool waiting;                 /* the thread wants a wake when a job ends */
	uint64_t done_ms;             /* when the last job ended */
	struct rpc_conn *next, *prev; /* server's list (srv->lock) */
};

struct rpc_job {
	struct rpc_conn *conn;
	struct rpc_buf record;
	struct rpc_reply head; /* admission's verifier */
	struct rpc_job *next;
};

struct rpc_server {
	struct rpc_server_config cfg;
	struct rpc_program prog;
	int listen_fd;
	int wake_fd; /* eventfd: tells the acceptor to stop */
	uint16_t port;
	pthread_t acceptor;
	pthread_t *workers;
	struct bufpool pool;       /* max_record-sized buffers */
	struct ratelimit peer_log; /* lines a peer can cause */
	atomic_bool draining;      /* stopping: read nothing more */

	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t work;
	pthread_cond_t conns_gone;
	struct rpc_job *head, *tail;
	struct rpc_conn *conns;
	unsigned nconns;
	int stopping;
};

uint64_t rpc_now_ms(void);
/* The connection's thread (rpc_conn.c); takes over c's reference. */
void *rpc_conn_main(void *arg);
/* A worker's end of a job: runs the call and answers it (rpc_conn.c). */
void rpc_conn_run_job(struct rpc_server *srv, struct rpc_job *job);
/* Hands a job to the workers (rpc_server.c). */
void rpc_server_queue_job(struct rpc_server *srv, struct rpc_job *job);
/* Drops a reference; the last one unlists and frees the connection. */
void rpc_conn_put(struct rpc_conn *c);
/* Wakes the connection's thread. */
void rpc_conn_wake(struct rpc_conn *c);

#endif
