/* The OSD control program: version and authentication checks, argument
 * decoding, and the table of procedures (one handler per ctl_proc_*.c). */
#include "ctl_server.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_auth.h"
#include "log.h"

_Static_assert(AUTH_PANDO == CTL_AUTH_FLAVOR, "osd_ctl.x and ctl_auth.h disagree on AUTH_PANDO");

union ctl_args {
	osd_format_args format;
	osd_partition_args partition;
	osd_create_args create;
	osd_remove_args remove;
	osd_read_args read;
	osd_write_args write;
	osd_getattr_args getattr;
	osd_setattr_args setattr;
	osd_list_args list;
	osd_flush_args flush;
	osd_setcap_args setcap;
	osd_checksums_args checksums;
};

struct ctl_proc {
	const char *name;
	xdrproc_t xdr_args;
	ctl_handler_fn handler;
};

static enum rpc_outcome ctl_proc_null(struct osd_ctx *ctx, void *args, struct rpc_reply *reply)
{
	return RPC_OUT_SUCCESS;
}

static const struct ctl_proc ctl_procs[] = {
	[OSDCTL_NULL] = { "NULL", CTL_XDRPROC(xdr_void), ctl_proc_null },
	[OSDCTL_FORMAT] = { "FORMAT", CTL_XDRPROC(xdr_osd_format_args), ctl_proc_format },
	[OSDCTL_STATFS] = { "STATFS", CTL_XDRPROC(xdr_void), ctl_proc_statfs },
	[OSDCTL_CREATE_PARTITION] = { "CREATE_PARTITION", CTL_XDRPROC(xdr_osd_partition_args),
				      ctl_proc_create_partition },
	[OSDCTL_REMOVE_PARTITION] = { "REMOVE_PARTITION", CTL_XDRPROC(xdr_osd_partition_args),
				      ctl_proc_remove_partition },
	[OSDCTL_CREATE_OBJECTS] = { "CREATE_OBJECTS", CTL_XDRPROC(xdr_osd_create_args),
				    ctl_proc_create },
	[OSDCTL_REMOVE_OBJECTS] = { "REMOVE_OBJECTS", CTL_XDRPROC(xdr_osd_remove_args),
				    ctl_proc_remove },
	[OSDCTL_READ] = { "READ", CTL_XDRPROC(xdr_osd_read_args), ctl_proc_read },
	[OSDCTL_WRITE] = { "WRITE", CTL_XDRPROC(ctl_xdr_write_args_inplace), ctl_proc_write },
	[OSDCTL_GETATTR] = { "GETATTR", CTL_XDRPROC(xdr_osd_getattr_args), ctl_proc_getattr },
	[OSDCTL_SETATTR] = { "SETATTR", CTL_XDRPROC(xdr_osd_setattr_args), ctl_proc_setattr },
	[OSDCTL_LIST] = { "LIST", CTL_XDRPROC(xdr_osd_list_args), ctl_proc_list },
	[OSDCTL_FLUSH] = { "FLUSH", CTL_XDRPROC(xdr_osd_flush_args), ctl_proc_flush },
	[OSDCTL_SET_CAP_VERSION] = { "SET_CAP_VERSION", CTL_XDRPROC(xdr_osd_setcap_args),
				     ctl_proc_setcap },
	[OSDCTL_STATS] = { "STATS", CTL_XDRPROC(xdr_void), ctl_proc_stats },
	[OSDCTL_CHECKSUMS] = { "CHECKSUMS", CTL_XDRPROC(xdr_osd_checksums_args),
			       ctl_proc_checksums },
};

osd_status ctl_status(int err)
{
	switch (err) {
	case 0:
		return OSD_OK;
	case -ENOENT:
		return OSD_ERR_NOENT;
	case -EIO:
		return OSD_ERR_IO;
	case -EACCES:
		return OSD_ERR_ACCES;
	case -EEXIST:
		return OSD_ERR_EXIST;
	case -EINVAL:
		return OSD_ERR_INVAL;
	case -EFBIG:
		return OSD_ERR_FBIG;
	case -ENOSPC:
		return OSD_ERR_NOSPC;
	case -ENOTEMPTY:
		return OSD_ERR_NOTEMPTY;
	default:
		log_error("ctl: unexpected object store error %d (%s)", err, strerror(-err));
		return OSD_ERR_SERVERFAULT;
	}
}

static bool xdr_encode_into(void *buf, size_t cap, xdrproc_t proc, void *res, size_t *len)
{
	XDR xdrs;
	bool ok;

	xdrmem_ncreate(&xdrs, buf, (u_int)cap, XDR_ENCODE);
	ok = proc(&xdrs, res);
	*len = xdr_getpos(&xdrs);
	XDR_DESTROY(&xdrs);
	return ok;
}

enum rpc_outcome ctl_reply_encode(struct rpc_reply *reply, xdrproc_t proc, void *res,
				  size_t max_len)
{
	size_t room = xw_room(&reply->res);
	size_t len;
	void *buf;

	if (max_len <= room) {
		if (!xdr_encode_into(reply->res.buf + reply->res.len, room, proc, res, &len))
			return RPC_OUT_SYSTEM_ERR;
		xw_reserve(&reply->res, len);
		return RPC_OUT_SUCCESS;
	}
	/* Too big for the preallocated buffer (long id lists, many
	 * attributes): the whole result travels as the payload. */
	buf = rpc_reply_alloc_payload(reply, max_len);
	if (!buf || !xdr_encode_into(buf, max_len, proc, res, &len))
		return RPC_OUT_SYSTEM_ERR;
	reply->payload_len = len;
	return RPC_OUT_SUCCESS;
}

enum rpc_outcome ctl_reply_status(struct rpc_reply *reply, osd_status status)
{
	xw_u32(&reply->res, (uint32_t)status);
	return RPC_OUT_SUCCESS;
}

static const char *peer_name(const struct rpc_call *call, char *buf, size_t cap)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (getnameinfo((const struct sockaddr *)&call->peer, sizeof(call->peer), host,
			sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV))
		return "?";
	snprintf(buf, cap, "%s:%s", host, port);
	return buf;
}

static enum rpc_outcome auth_denial(enum ctl_auth_verdict verdict)
{
	switch (verdict) {
	case CTL_AUTH_REJECTED:
		return RPC_OUT_AUTH_REJECTEDCRED;
	case CTL_AUTH_BADVERF:
		return RPC_OUT_AUTH_BADVERF;
	default:
		return RPC_OUT_AUTH_BADCRED;
	}
}

static const char *verdict_name(enum ctl_auth_verdict verdict)
{
	switch (verdict) {
	case CTL_AUTH_OK:
		return "ok";
	case CTL_AUTH_BADCRED:
		return "bad credential or unknown key id";
	case CTL_AUTH_REJECTED:
		return "clock skew";
	case CTL_AUTH_BADVERF:
		return "wrong MAC (another cluster key?)";
	}
	return "?";
}

/* Denials are logged, but a stranger must not flood the log with them. */
static struct log_ratelimit denial_log = LOG_RATELIMIT_INIT(5000, 10);

/* Checks the AUTH_PANDO credential; on success the reply carries the
 * verifier that proves to the caller that we hold the key too. */
static enum rpc_outcome authenticate(const struct osd_ctx *ctx, const struct rpc_call *call,
				     struct rpc_reply *reply)
{
	struct ctl_auth_cred cred;
	enum ctl_auth_verdict verdict;
	char peer[NI_MAXHOST + NI_MAXSERV + 2];

	if (call->cred.flavor != CTL_AUTH_FLAVOR) {
		log_limited(&denial_log, LOG_INFO, "ctl: %s called proc %u with auth flavor %u: "
			    "too weak", peer_name(call, peer, sizeof(peer)), call->proc,
			    call->cred.flavor);
		return RPC_OUT_AUTH_TOOWEAK;
	}
	verdict = ctl_auth_check(ctx->key, call->xid, call->prog, call->vers, call->proc,
				 call->cred.flavor, call->cred.body, call->cred.len,
				 call->verf.flavor, call->verf.body, call->verf.len,
				 (uint64_t)time(NULL), &cred);
	if (verdict != CTL_AUTH_OK) {
		log_limited(&denial_log, LOG_INFO, "ctl: %s denied: %s",
			    peer_name(call, peer, sizeof(peer)), verdict_name(verdict));
		return auth_denial(verdict);
	}
	reply->verf_flavor = CTL_AUTH_FLAVOR;
	reply->verf_len = CTL_AUTH_REPLY_VERF_LEN;
	ctl_auth_reply_verf(ctx->key, call->xid, cred.nonce, reply->verf);
	return RPC_OUT_SUCCESS;
}

/* Arguments must decode exactly: trailing bytes are as wrong as missing ones. */
static bool decode_args(const struct rpc_call *call, xdrproc_t proc, void *args)
{
	XDR xdrs;
	bool ok;

	xdrmem_ncreate(&xdrs, (char *)call->args, (u_int)call->args_len, XDR_DECODE);
	ok = proc(&xdrs, args) && xdr_getpos(&xdrs) == call->args_len;
	XDR_DESTROY(&xdrs);
	return ok;
}

static const struct ctl_proc *proc_lookup(uint32_t proc)
{
	if (proc >= sizeof(ctl_procs) / sizeof(ctl_procs[0]))
		return NULL;
	return &ctl_procs[proc];
}

/* The version, then the credential: all a call's header can tell. */
static enum rpc_outcome check_header(const struct osd_ctx *ctx, const struct rpc_call *call,
				     struct rpc_reply *reply)
{
	if (call->vers != PANDO_OSD_CTL_V1) {
		reply->mismatch_low = PANDO_OSD_CTL_V1;
		reply->mismatch_high = PANDO_OSD_CTL_V1;
		return RPC_OUT_PROG_MISMATCH;
	}
	/* NULL is the ping that needs no key; an AUTH_PANDO NULL is checked
	 * like any call, which makes it a test of the key as well. */
	if (call->proc != OSDCTL_NULL || call->cred.flavor == CTL_AUTH_FLAVOR)
		return authenticate(ctx, call, reply);
	return RPC_OUT_SUCCESS;
}

/* Before the arguments are read: a call that is not authenticated (the
 * MAC covers the header and credential, all there is at this point) has
 * them dropped unread, so a stranger's record costs RPC_RECORD_PREAUTH
 * bytes at most.  An unauthenticated NULL has no arguments. */
enum rpc_outcome ctl_admit(void *opaque, const struct rpc_call *call, struct rpc_reply *reply,
			   size_t *max_args)
{
	enum rpc_outcome out = check_header(opaque, call, reply);

	if (out == RPC_OUT_SUCCESS && call->cred.flavor != CTL_AUTH_FLAVOR)
		*max_args = 0;
	return out;
}

enum rpc_outcome ctl_dispatch(void *opaque, const struct rpc_call *call, struct rpc_reply *reply)
{
	struct osd_ctx *ctx = opaque;
	const struct ctl_proc *p;
	union ctl_args args;
	enum rpc_outcome out;

	/* Admitted: ctl_admit checked the header and set the verifier. */
	if (!call->admitted) {
		out = check_header(ctx, call, reply);
		if (out != RPC_OUT_SUCCESS)
			return out;
	}
	p = proc_lookup(call->proc);
	if (!p)
		return RPC_OUT_PROC_UNAVAIL;
	memset(&args, 0, sizeof(args));
	if (decode_args(call, p->xdr_args, &args)) {
		log_debug("ctl: %s", p->name);
		out = p->handler(ctx, &args, reply);
	} else {
		log_debug("ctl: %s: undecodable arguments (%zu bytes)", p->name, call->args_len);
		out = RPC_OUT_GARBAGE_ARGS;
	}
	/* Also after a failed decode: it may have allocated part of a list. */
	xdr_free(p->xdr_args, &args);
	return out;
}
