/* One ONC RPC record (RFC 5531 section 11, record marking) assembled from
 * a byte stream, under a memory policy an unauthenticated peer cannot
 * inflate:
 *
 *  - until the program has admitted the call from its header, a record
 *    holds at most RPC_RECORD_PREAUTH bytes, allocated as they arrive
 *    (never what a fragment mark merely declares);
 *  - once admitted, it may grow to the limit the admission gave (a record
 *    over it closes the connection); large ones move into a pool buffer;
 *  - a denied call's remaining bytes are read into a scratch buffer and
 *    dropped, so the stream stays in step and the denial can be answered.
 *
 * No sockets here: the caller reads into what rpc_record_space() names and
 * reports the count to rpc_record_got(), which says what comes next. */
#ifndef PANDO_RPC_RECORD_H
#define PANDO_RPC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bufpool;

/* Bytes a record may hold before its call is admitted: the largest call
 * header (24 bytes, two opaque_auth of 400) and the start of the
 * arguments, which is where the NFSv3 WRITE count is; 8 KiB so that a
 * whole 4 KiB WRITE (the common small one) arrives in one read. */
#define RPC_RECORD_PREAUTH 8192u
/* Records above this, once admitted, live in a pool buffer. */
#define RPC_RECORD_SMALL (64u << 10)
#define RPC_RECORD_MAX_FRAGMENTS 1024u

enum rpc_record_step {
	RPC_REC_MORE = 0, /* read more, where rpc_record_space() says */
	RPC_REC_ADMIT,    /* the header is in: rpc_record_admit() or _deny() */
	RPC_REC_DONE,     /* the whole record: rpc_record_take() */
};

enum rpc_record_admission { RPC_REC_PENDING = 0, RPC_REC_ADMITTED, RPC_REC_DENIED };

/* A record buffer handed from the reader to a worker. */
struct rpc_buf {
	uint8_t *data;
	size_t len;
	bool pooled; /* from the pool (else malloc) */
};

struct rpc_record {
	struct bufpool *pool; /* buffers of max_record bytes */
	size_t max_record;    /* no record is ever longer */
	struct rpc_buf buf;   /* what has arrived of the record */
	size_t cap;           /* bytes allocated at buf.data */
	size_t limit;         /* the admission's limit (ADMITTED only) */
	size_t dropped;       /* bytes of a denied record dropped */
	enum rpc_record_admission admission;
	uint8_t mark[4];
	unsigned mark_len; /* bytes of the current mark read */
	size_t frag_left;  /* body bytes of this fragment still to come */
	bool last;         /* this fragment ends the record */
	unsigned frags;
};

void rpc_record_init(struct rpc_record *r, struct bufpool *pool, size_t max_record);
/* Where the next bytes go: up to *len at *dst, which is `scratch` when they
 * are dropped.  0, or -ENOMEM. */
int rpc_record_space(struct rpc_record *r, uint8_t *scratch, size_t scratch_len, uint8_t **dst,
		     size_t *len);
/* n (> 0) bytes arrived where rpc_record_space() said: the next step, or
 * -EMSGSIZE (over a limit) or -EPROTO (too many fragments). */
int rpc_record_got(struct rpc_record *r, size_t n);
/* After RPC_REC_ADMIT: the whole record may be up to limit bytes (capped
 * at max_record).  The next step, or -EMSGSIZE if it is already over. */
int rpc_record_admit(struct rpc_record *r, size_t limit);
/* After RPC_REC_ADMIT: the rest of the record is dropped.  The next step. */
int rpc_record_deny(struct rpc_record *r);
/* Any byte of a record read (a mark included). */
bool rpc_record_started(const struct rpc_record *r);
/* Bytes held for a record not admitted yet (the pre-authentication cost). */
size_t rpc_record_preauth_bytes(const struct rpc_record *r);
/* After RPC_REC_DONE: the record's buffer is the caller's (a denied
 * record's holds only what arrived before the denial); r starts afresh. */
void rpc_record_take(struct rpc_record *r, struct rpc_buf *out);
/* Frees what r holds and starts afresh. */
void rpc_record_reset(struct rpc_record *r);
/* Frees a taken buffer. */
void rpc_buf_release(struct bufpool *pool, struct rpc_buf *b);

#endif
