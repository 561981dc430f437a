/* The NFSv3 program: credential check and procedure dispatch.  Procedures
 * a data server has no use for answer NFS3ERR_NOTSUPP with their own
 * failure arm, so a client decodes the reply as it expects to. */
#include "log.h"
#include "nfs3.h"

#define AUTH_SYS_MAX_MACHINE 255
#define AUTH_SYS_MAX_GIDS 16

struct nfs3_proc_desc {
	const char *name;
	nfs3_proc_fn fn;       /* NULL: answered NFS3ERR_NOTSUPP */
	unsigned absent_attrs; /* words of the failure arm, all "no attributes" */
};

/* The failure arms of the unsupported procedures are post_op_attr
 * (one word) and wcc_data (two words: pre_op_attr, post_op_attr). */
static const struct nfs3_proc_desc nfs3_procs[NFSPROC3_COUNT] = {
	[NFSPROC3_NULL] = { "NULL", nfs3_proc_null, 0 },
	[NFSPROC3_GETATTR] = { "GETATTR", nfs3_proc_getattr, 0 },
	[NFSPROC3_SETATTR] = { "SETATTR", NULL, 2 },
	[NFSPROC3_LOOKUP] = { "LOOKUP", NULL, 1 },
	[NFSPROC3_ACCESS] = { "ACCESS", nfs3_proc_access, 0 },
	[NFSPROC3_READLINK] = { "READLINK", NULL, 1 },
	[NFSPROC3_READ] = { "READ", nfs3_proc_read, 0 },
	[NFSPROC3_WRITE] = { "WRITE", nfs3_proc_write, 0 },
	[NFSPROC3_CREATE] = { "CREATE", NULL, 2 },
	[NFSPROC3_MKDIR] = { "MKDIR", NULL, 2 },
	[NFSPROC3_SYMLINK] = { "SYMLINK", NULL, 2 },
	[NFSPROC3_MKNOD] = { "MKNOD", NULL, 2 },
	[NFSPROC3_REMOVE] = { "REMOVE", NULL, 2 },
	[NFSPROC3_RMDIR] = { "RMDIR", NULL, 2 },
	[NFSPROC3_RENAME] = { "RENAME", NULL, 4 }, /* fromdir_wcc, todir_wcc */
	[NFSPROC3_LINK] = { "LINK", NULL, 3 },     /* file_attributes, linkdir_wcc */
	[NFSPROC3_READDIR] = { "READDIR", NULL, 1 },
	[NFSPROC3_READDIRPLUS] = { "READDIRPLUS", NULL, 1 },
	[NFSPROC3_FSSTAT] = { "FSSTAT", nfs3_proc_fsstat, 0 },
	[NFSPROC3_FSINFO] = { "FSINFO", nfs3_proc_fsinfo, 0 },
	[NFSPROC3_PATHCONF] = { "PATHCONF", nfs3_proc_pathconf, 0 },
	[NFSPROC3_COMMIT] = { "COMMIT", nfs3_proc_commit, 0 },
};

/* authsys_parms (RFC 5531, appendix A), which must fill the body exactly.
 * The handle carries the authority: the uid matters only to a handle bound
 * to a holder (nfs3_fh.c); otherwise the ids only go to the debug log. */
static bool auth_sys_parse(const uint8_t *body, uint32_t len, uint32_t *uid, uint32_t *gid)
{
	struct xdr_r in;
	uint32_t name_len, ngids;

	xr_init(&in, body, len);
	xr_u32(&in); /* stamp */
	xr_opaque_ref(&in, AUTH_SYS_MAX_MACHINE, &name_len);
	*uid = xr_u32(&in);
	*gid = xr_u32(&in);
	ngids = xr_u32(&in);
	if (ngids > AUTH_SYS_MAX_GIDS)
		return false;
	xr_take(&in, (size_t)ngids * 4);
	return !in.err && xr_left(&in) == 0;
}

/* The handle carries the authority, so the credential only has to be
 * well formed (a handle bound to a holder then wants its uid); the
 * verifier of both flavors is an empty AUTH_NONE. */
static enum rpc_outcome check_auth(const struct rpc_call *call)
{
	uint32_t uid, gid;

	switch (call->cred.flavor) {
	case RPC_AUTH_NONE:
		if (call->cred.len != 0)
			return RPC_OUT_AUTH_BADCRED;
		break;
	case RPC_AUTH_SYS:
		if (!auth_sys_parse(call->cred.body, call->cred.len, &uid, &gid))
			return RPC_OUT_AUTH_BADCRED;
		break;
	default:
		return RPC_OUT_AUTH_TOOWEAK;
	}
	if (call->verf.flavor != RPC_AUTH_NONE || call->verf.len != 0)
		return RPC_OUT_AUTH_BADVERF;
	return RPC_OUT_SUCCESS;
}

static enum rpc_outcome reply_notsupp(const struct nfs3_proc_desc *p, struct rpc_reply *reply)
{
	unsigned i;

	xw_u32(&reply->res, NFS3ERR_NOTSUPP);
	for (i = 0; i < p->absent_attrs; i++)
		xw_bool(&reply->res, false);
	return RPC_OUT_SUCCESS;
}

/* Every NFSv3 result but NULL's starts with its nfsstat3 (read from what
 * was stored: an overflowed reply counts more than its buffer holds). */
static uint32_t reply_status(const struct rpc_reply *reply)
{
	struct xdr_r in;

	xr_init(&in, reply->res.buf, reply->res.cap - xw_room(&reply->res));
	return xr_u32(&in);
}

/* Failures counted by who is to blame: the handle (it does not grant the
 * call: forged, for another target, expired, bound to another holder,
 * fenced, read-only, or its object is gone), the target (it could not do what was asked), or the
 * request (out of bounds or not supported). */
static enum osd_stat error_class(uint32_t status)
{
	switch (status) {
	case NFS3ERR_BADHANDLE:
	case NFS3ERR_STALE:
	case NFS3ERR_ACCES:
		return OSD_STAT_NFS_ERR_REJECTED;
	case NFS3ERR_IO:
	case NFS3ERR_NOSPC:
	case NFS3ERR_SERVERFAULT:
		return OSD_STAT_NFS_ERR_IO;
	default:
		return OSD_STAT_NFS_ERR_OTHER;
	}
}

/* Who the client says it is (pNFS clients send the ids of the layout's
 * data-server entry).  The credential was checked at admission. */
static struct nfs3_caller caller_of(const struct rpc_call *call)
{
	struct nfs3_caller who = { false, 0, 0 };

	who.auth_sys = call->cred.flavor == RPC_AUTH_SYS &&
		       auth_sys_parse(call->cred.body, call->cred.len, &who.uid, &who.gid);
	return who;
}

/* One debug line per call: what, its status, and who the client says it is. */
static void log_call(const struct nfs3_proc_desc *p, const struct rpc_call *call,
		     const struct nfs3_caller *who, uint32_t status)
{
	if (who->auth_sys)
		log_debug("nfs3 %s xid %#x: status %u, auth sys %u:%u", p->name, call->xid, status,
			  who->uid, who->gid);
	else
		log_debug("nfs3 %s xid %#x: status %u, auth none", p->name, call->xid, status);
}

static enum rpc_outcome run_proc(const struct osd_ctx *ctx, const struct rpc_call *call,
				 struct rpc_reply *reply)
{
	const struct nfs3_proc_desc *p = &nfs3_procs[call->proc];
	const struct nfs3_caller who = caller_of(call);
	enum rpc_outcome out;
	struct xdr_r args;
	uint32_t status;

	xr_init(&args, call->args, call->args_len);
	out = p->fn ? p->fn(ctx, &who, &args, reply) : reply_notsupp(p, reply);
	if (out != RPC_OUT_SUCCESS) {
		log_debug("nfs3 %s xid %#x: rpc outcome %d", p->name, call->xid, (int)out);
		return out;
	}
	if (call->proc == NFSPROC3_NULL)
		return out;
	status = reply_status(reply);
	if (status != NFS3_OK)
		osd_stats_add(ctx->stats, error_class(status), 1);
	if (log_enabled(LOG_DEBUG))
		log_call(p, call, &who, status);
	return out;
}

/* What a call's arguments may weigh, from their first bytes: a WRITE
 * its handle, offset, count, stable and data of `count` bytes (at least
 * OSD_NFS_SMALL_ARGS, so a count that lies about a short payload still
 * gets its NFS3ERR_INVAL); any other procedure OSD_NFS_SMALL_ARGS. */
static size_t args_bound(const struct rpc_call *call)
{
	struct xdr_r in;
	struct nfs3_fh fh;
	size_t count, fixed;

	if (call->proc != NFSPROC3_WRITE)
		return OSD_NFS_SMALL_ARGS;
	xr_init(&in, call->args, call->args_len);
	if (nfs3_decode_fh_args(&in, &fh))
		return OSD_NFS_SMALL_ARGS;
	xr_u64(&in);
	count = xr_u32(&in);
	if (in.err)
		return OSD_NFS_SMALL_ARGS;
	fixed = (size_t)(in.p - call->args) + 8; /* stable, data length */
	if (count < OSD_NFS_SMALL_ARGS)
		count = OSD_NFS_SMALL_ARGS;
	if (count > OSD_MAX_RECORD)
		count = OSD_MAX_RECORD;
	return fixed + XDR_PAD(count);
}

/* The header's checks, in the order dispatch makes them. */
static enum rpc_outcome check_header(const struct rpc_call *call, struct rpc_reply *reply)
{
	enum rpc_outcome out = check_auth(call);

	if (out != RPC_OUT_SUCCESS) {
		log_debug("nfs3 xid %#x: credential flavor %u refused", call->xid,
			  call->cred.flavor);
		return out;
	}
	if (call->prog != NFS3_PROGRAM)
		return RPC_OUT_PROG_UNAVAIL;
	if (call->vers != NFS3_VERSION) {
		reply->mismatch_low = NFS3_VERSION;
		reply->mismatch_high = NFS3_VERSION;
		return RPC_OUT_PROG_MISMATCH;
	}
	if (call->proc >= NFSPROC3_COUNT)
		return RPC_OUT_PROC_UNAVAIL;
	return RPC_OUT_SUCCESS;
}

/* The handle in the arguments carries the authority, checked by each
 * procedure; before the arguments are read, the header is checked and
 * the procedure bounds what the record may hold. */
enum rpc_outcome nfs3_admit(void *opaque, const struct rpc_call *call, struct rpc_reply *reply,
			    size_t *max_args)
{
	enum rpc_outcome out = check_header(call, reply);

	if (out == RPC_OUT_SUCCESS)
		*max_args = args_bound(call);
	return out;
}

enum rpc_outcome nfs3_dispatch(void *opaque, const struct rpc_call *call, struct rpc_reply *reply)
{
	enum rpc_outcome out = call->admitted ? RPC_OUT_SUCCESS : check_header(call, reply);

	if (out != RPC_OUT_SUCCESS)
		return out;
	return run_proc(opaque, call, reply);
}
