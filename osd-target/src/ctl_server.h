/* The OSD control program (proto/osd_ctl.x): what ctl_server.c and the
 * per-procedure files ctl_proc_*.c share.
 *
 * ctl_dispatch() checks the version and the AUTH_PANDO credential, decodes
 * the arguments with the rpcgen filters and calls the procedure's handler,
 * which runs the operation on the object store and encodes its results
 * with ctl_reply_encode().  Handlers never see malformed arguments. */
#ifndef PANDO_CTL_SERVER_H
#define PANDO_CTL_SERVER_H

#include <stddef.h>

#include "osd.h"
#include "osd_ctl.h"

/* rpcgen filters return bool_t, xdrproc_t wants bool: the same 0/1 either
 * way; the detour through void (*)(void) says the cast is meant. */
#define CTL_XDRPROC(fn) ((xdrproc_t)(void (*)(void))(fn))

/* Bound on the encoded size of every fixed-size result (STATS, the
 * largest, is 132). */
#define CTL_SMALL_RES 256

typedef enum rpc_outcome (*ctl_handler_fn)(struct osd_ctx *ctx, void *args,
					   struct rpc_reply *reply);

/* Maps an object-store result (0 or -errno) to the protocol's status. */
osd_status ctl_status(int err);

/* Encodes results into reply->res; results that may outgrow it (up to
 * max_len bytes) go into a heap buffer sent as the reply's payload.
 * RPC_OUT_SUCCESS, or RPC_OUT_SYSTEM_ERR when they cannot be encoded. */
enum rpc_outcome ctl_reply_encode(struct rpc_reply *reply, xdrproc_t proc, void *res,
				  size_t max_len);
/* The common case: a bare osd_status as the whole result. */
enum rpc_outcome ctl_reply_status(struct rpc_reply *reply, osd_status status);

/* WRITE arguments decoded in place: data.data_val points into the record
 * (which outlives the handler), so the payload reaches pwrite() uncopied. */
bool_t ctl_xdr_write_args_inplace(XDR *xdrs, osd_write_args *args);

enum rpc_outcome ctl_proc_format(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_statfs(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_create_partition(struct osd_ctx *ctx, void *args,
					   struct rpc_reply *reply);
enum rpc_outcome ctl_proc_remove_partition(struct osd_ctx *ctx, void *args,
					   struct rpc_reply *reply);
enum rpc_outcome ctl_proc_create(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_remove(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_read(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_write(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_getattr(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_setattr(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_list(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_flush(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_setcap(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_revoke(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_stats(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);
enum rpc_outcome ctl_proc_checksums(struct osd_ctx *ctx, void *args, struct rpc_reply *reply);

#endif
