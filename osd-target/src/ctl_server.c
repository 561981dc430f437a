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
#include "rpc_msg.h"

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
	[OSDCTL_REVOKE_WRITERS] = { "REVOKE_WRITERS", CTL_XDRPROC(xdr_osd_setcap_args),
				    ctl_proc_revoke },
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

/* Why a call was refused, as the log says it. */
enum denial {
	DENIED_BADCRED,
	DENIED_SKEW,
	DENIED_BADVERF,
	DENIED_MAC_FAILED,
	DENIED_REPLAY,
	DENIED_STALE,
	DENIED_NOMEM,
};

static const char *const denial_names[] = {
	[DENIED_BADCRED] = "bad credential (version, unknown key id, or another target's)",
	[DENIED_SKEW] = "clock skew over 300 s",
	[DENIED_BADVERF] = "wrong MAC (another key, or the call changed on its way)",
	[DENIED_MAC_FAILED] = "its MAC could not be computed",
	[DENIED_REPLAY] = "replayed call (its credential was admitted before)",
	[DENIED_STALE] = "replayed or too old (older than the full replay cache holds)",
	[DENIED_NOMEM] = "no memory to remember its credential",
};

static const enum rpc_outcome denial_outcomes[] = {
	[DENIED_BADCRED] = RPC_OUT_AUTH_BADCRED,     [DENIED_SKEW] = RPC_OUT_AUTH_REJECTEDCRED,
	[DENIED_BADVERF] = RPC_OUT_AUTH_BADVERF,     [DENIED_MAC_FAILED] = RPC_OUT_SYSTEM_ERR,
	[DENIED_REPLAY] = RPC_OUT_AUTH_REJECTEDCRED, [DENIED_STALE] = RPC_OUT_AUTH_REJECTEDCRED,
	[DENIED_NOMEM] = RPC_OUT_SYSTEM_ERR,
};

static enum denial verdict_denial(enum ctl_auth_verdict verdict)
{
	switch (verdict) {
	case CTL_AUTH_REJECTED:
		return DENIED_SKEW;
	case CTL_AUTH_BADVERF:
		return DENIED_BADVERF;
	case CTL_AUTH_ERROR:
		return DENIED_MAC_FAILED;
	default:
		return DENIED_BADCRED;
	}
}

/* Denials are logged, but a stranger must not flood the log with them. */
static struct ratelimit denial_log = RATELIMIT_INIT(5000, 10);

static enum rpc_outcome deny(const struct osd_ctx *ctx, const struct rpc_call *call,
			     enum denial why)
{
	char peer[NI_MAXHOST + NI_MAXSERV + 2];

	osd_stats_add(ctx->stats, OSD_STAT_CTL_AUTH_DENIED, 1);
	if (why == DENIED_REPLAY || why == DENIED_STALE)
		osd_stats_add(ctx->stats, OSD_STAT_CTL_REPLAYS_REFUSED, 1);
	log_limited(&denial_log, why == DENIED_MAC_FAILED ? LOG_ERROR : LOG_INFO,
		    "ctl: %s denied: %s", peer_name(call, peer, sizeof(peer)), denial_names[why]);
	return denial_outcomes[why];
}

static struct ctl_auth_msg auth_msg(const struct rpc_call *call)
{
	return (struct ctl_auth_msg){
		.hdr = { call->xid, call->prog, call->vers, call->proc },
		.cred_flavor = call->cred.flavor,
		.cred = call->cred.body,
		.cred_len = call->cred.len,
		.verf_flavor = call->verf.flavor,
		.verf = call->verf.body,
		.verf_len = call->verf.len,
	};
}

static const enum denial replay_denials[] = {
	[CTL_REPLAY_SEEN] = DENIED_REPLAY,
	[CTL_REPLAY_STALE] = DENIED_STALE,
	[CTL_REPLAY_NOMEM] = DENIED_NOMEM,
};

/* Admission's half of AUTH_PANDO: the credential and the header's tag,
 * the time, and that the credential was never admitted before.  Replays
 * are refused here, before their arguments are read. */
static enum rpc_outcome authenticate(const struct osd_ctx *ctx, const struct rpc_call *call)
{
	struct ctl_auth_msg m = auth_msg(call);
	const struct ctl_auth_key *key;
	struct ctl_auth_cred cred;
	enum ctl_auth_verdict verdict;
	enum ctl_replay_verdict seen;
	uint64_t now = (uint64_t)time(NULL);
	char peer[NI_MAXHOST + NI_MAXSERV + 2];

	if (call->cred.flavor != CTL_AUTH_FLAVOR) {
		log_limited(&denial_log, LOG_INFO,
			    "ctl: %s called proc %u with auth flavor %u: "
			    "too weak",
			    peer_name(call, peer, sizeof(peer)), call->proc, call->cred.flavor);
		return RPC_OUT_AUTH_TOOWEAK;
	}
	osd_keys_read(ctx->keys);
	verdict = ctl_auth_admit(&ctx->keys->ctl, &m, now, &cred, &key);
	osd_keys_done(ctx->keys);
	if (verdict != CTL_AUTH_OK)
		return deny(ctx, call, verdict_denial(verdict));
	seen = ctl_replay_check(ctx->replay, cred.key_id, cred.time_s, cred.nonce, now);
	if (seen != CTL_REPLAY_FRESH)
		return deny(ctx, call, replay_denials[seen]);
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
		return authenticate(ctx, call);
	return RPC_OUT_SUCCESS;
}

/* Before the arguments are read: a call whose header is not authentic
 * (its tag covers the header and credential, all there is at this point),
 * out of time or seen before has them dropped unread, so a stranger's or
 * a replayer's record costs RPC_RECORD_PREAUTH bytes at most.  The MAC
 * over the arguments is checked once they are in (ctl_dispatch).  An
 * unauthenticated NULL has no arguments. */
enum rpc_outcome ctl_admit(void *opaque, const struct rpc_call *call, struct rpc_reply *reply,
			   size_t *max_args)
{
	enum rpc_outcome out = check_header(opaque, call, reply);

	if (out == RPC_OUT_SUCCESS && call->cred.flavor != CTL_AUTH_FLAVOR)
		*max_args = 0;
	return out;
}

/* Decodes the arguments and runs the procedure. */
static enum rpc_outcome run(struct osd_ctx *ctx, const struct rpc_call *call,
			    struct rpc_reply *reply)
{
	const struct ctl_proc *p = proc_lookup(call->proc);
	union ctl_args args;
	enum rpc_outcome out;

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
	/* Before the results are MAC'd: the transport would answer SYSTEM_ERR. */
	if (out == RPC_OUT_SUCCESS && xw_overflowed(&reply->res)) {
		log_error("ctl: %s reply overflowed its buffer", p->name);
		out = RPC_OUT_SYSTEM_ERR;
	}
	return out;
}

/* The reply verifier: a MAC over the xid, the call's nonce, the accept_stat
 * and the result bytes (res, the payload, its padding), so that the
 * caller believes no result changed on its way.  Without it the reply is a
 * SYSTEM_ERR the caller refuses, never one with a MAC of nothing. */
static enum rpc_outcome sign_reply(const struct ctl_auth_key *key, const struct rpc_call *call,
				   uint64_t nonce, enum rpc_outcome out, struct rpc_reply *reply)
{
	static const uint8_t zeros[4];
	struct hmac_piece res[3] = { { reply->res.buf, reply->res.len } };
	size_t nres = 1;

	if (out >= RPC_OUT_AUTH_BADCRED) /* a denial or no answer: no verifier */
		return out;
	if (reply->payload_len) {
		res[nres++] = (struct hmac_piece){ reply->payload, reply->payload_len };
		res[nres++] = (struct hmac_piece){ zeros, XDR_PAD(reply->payload_len) -
								  reply->payload_len };
	}
	if (out != RPC_OUT_SUCCESS)
		nres = 0;
	if (ctl_auth_reply_mac(key, call->xid, nonce, rpc_msg_accept_stat(out), res, nres,
			       reply->verf)) {
		log_error("ctl: proc %u: the reply's MAC could not be computed", call->proc);
		if (out == RPC_OUT_SYSTEM_ERR ||
		    ctl_auth_reply_mac(key, call->xid, nonce,
				       rpc_msg_accept_stat(RPC_OUT_SYSTEM_ERR), NULL, 0,
				       reply->verf))
			return RPC_OUT_SYSTEM_ERR;
		out = RPC_OUT_SYSTEM_ERR;
	}
	reply->verf_flavor = CTL_AUTH_FLAVOR;
	reply->verf_len = CTL_AUTH_REPLY_VERF_LEN;
	return out;
}

enum rpc_outcome ctl_dispatch(void *opaque, const struct rpc_call *call, struct rpc_reply *reply)
{
	struct osd_ctx *ctx = opaque;
	struct ctl_auth_msg m = auth_msg(call);
	const struct ctl_auth_key *key;
	struct ctl_auth_key reply_key;
	struct ctl_auth_cred cred;
	enum ctl_auth_verdict verdict;
	enum rpc_outcome out;

	/* Admitted: ctl_admit checked the header, its time and the replay cache. */
	if (!call->admitted) {
		out = check_header(ctx, call, reply);
		if (out != RPC_OUT_SUCCESS)
			return out;
	}
	if (call->cred.flavor != CTL_AUTH_FLAVOR)
		return run(ctx, call, reply); /* the unauthenticated NULL */
	/* The reply is signed with the key that admitted the call, even if a
	 * SIGHUP replaces the keys while it runs. */
	osd_keys_read(ctx->keys);
	verdict = ctl_auth_check_args(&ctx->keys->ctl, &m, call->args, call->args_len, &cred, &key);
	if (verdict == CTL_AUTH_OK)
		reply_key = *key;
	osd_keys_done(ctx->keys);
	if (verdict != CTL_AUTH_OK)
		return deny(ctx, call, verdict_denial(verdict));
	out = sign_reply(&reply_key, call, cred.nonce, run(ctx, call, reply), reply);
	explicit_bzero(&reply_key, sizeof(reply_key));
	return out;
}
