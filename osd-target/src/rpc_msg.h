/* RFC 5531 message headers: decoding a call, encoding a reply header. */
#ifndef PANDO_RPC_MSG_H
#define PANDO_RPC_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "rpc_server.h"

enum rpc_call_verdict {
	RPC_CALL_OK = 0,
	RPC_CALL_IGNORE,       /* not a call, or too short to carry an xid */
	RPC_CALL_RPC_MISMATCH, /* rpcvers != 2: deny with RPC_MISMATCH */
	RPC_CALL_BADCRED,      /* credential or verifier malformed */
};

/* Fills *call from a record; call->args points at the procedure arguments. */
enum rpc_call_verdict rpc_msg_decode_call(const uint8_t *rec, size_t len, struct rpc_call *call);

/* The accept_stat an accepted reply carries for `outcome` (SYSTEM_ERR for
 * the denials, which carry none). */
uint32_t rpc_msg_accept_stat(enum rpc_outcome outcome);

/* Largest reply header: xid, type, stat, verifier (400), accept stat and
 * a mismatch pair. */
#define RPC_REPLY_HEADER_MAX (4 * 8 + RPC_MAX_AUTH_BYTES)

/* Encodes the reply header for `outcome` (RPC_OUT_DROP excluded) into buf;
 * returns its length.  Results follow only for RPC_OUT_SUCCESS. */
size_t rpc_msg_encode_reply_header(uint8_t *buf, uint32_t xid, enum rpc_outcome outcome,
				   const struct rpc_reply *reply);
/* The denial for a call whose RPC version is not 2. */
size_t rpc_msg_encode_rpc_mismatch(uint8_t *buf, uint32_t xid);

#endif
