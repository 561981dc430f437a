/* The back channel (RFC 8881 section 20): CB_COMPOUND with CB_SEQUENCE and
 * CB_LAYOUTRECALL, served on the fore connection's receiver thread.  A
 * recall that matches the layout the workload holds marks it recalled
 * and wakes the client's renewer thread, which returns it (the receiver
 * must not wait for MDS replies itself). */
#include <string.h>

#include "pnfsload.h"

#define CB_PROGRAM 0x40000000u
#define CB_NULL 0u
#define CB_COMPOUND 1u
#define OP_CB_LAYOUTRECALL 5u
#define OP_CB_SEQUENCE 11u
#define LAYOUTRECALL4_FILE 1u
#define LAYOUTRECALL4_FSID 2u
#define LAYOUTRECALL4_ALL 3u
#define NFS4ERR_BADSESSION 10052u
#define NFS4ERR_NOMATCHING_LAYOUT 10060u
#define NFS4ERR_BADXDR 10036u
#define PROC_UNAVAIL 3u
#define GARBAGE_ARGS 4u

static void skip(struct xdr_r *r, size_t n)
{
	if (r->err || (size_t)(r->end - r->p) < n)
		r->err = true;
	else
		r->p += n;
}

static uint32_t cb_sequence(struct client *cl, struct xdr_r *r, struct xdr_w *w)
{
	uint8_t sid[NFS4_SESSIONID_SIZE];
	uint32_t seq, slot, lists;

	xr_fixed(r, sid, sizeof(sid));
	seq = xr_u32(r);
	slot = xr_u32(r);
	skip(r, 8); /* highest slot, cachethis */
	lists = xr_count(r, NFS4_SESSIONID_SIZE + 4);
	for (uint32_t i = 0; i < lists && !r->err; i++) {
		skip(r, NFS4_SESSIONID_SIZE);
		skip(r, (size_t)xr_count(r, 8) * 8);
	}
	if (r->err)
		return NFS4ERR_BADXDR;
	if (memcmp(sid, cl->sessionid, sizeof(sid)))
		return NFS4ERR_BADSESSION;
	xw_u32(w, NFS4_OK);
	xw_fixed(w, sid, sizeof(sid));
	xw_u32(w, seq);
	xw_u32(w, slot);
	xw_u32(w, 0);
	xw_u32(w, 0);
	return NFS4_OK;
}

static uint32_t cb_layoutrecall(struct client *cl, struct xdr_r *r)
{
	struct nfs4_fh fh;
	struct pando_stateid sid;
	uint32_t type;
	bool matched = false;

	skip(r, 12); /* layout type, iomode, changed */
	type = xr_u32(r);
	if (type == LAYOUTRECALL4_FILE) {
		fh.len = xr_opaque(r, fh.data, sizeof(fh.data));
		skip(r, 16); /* offset, length: we hold whole-range layouts */
		sid.seqid = xr_u32(r);
		xr_fixed(r, sid.other, sizeof(sid.other));
	} else if (type == LAYOUTRECALL4_FSID) {
		skip(r, 16);
	} else if (type != LAYOUTRECALL4_ALL) {
		r->err = true;
	}
	if (r->err)
		return NFS4ERR_BADXDR;
	pthread_mutex_lock(&cl->renew_lock);
	if (cl->hook) {
		matched = type == LAYOUTRECALL4_FILE ? cl->hook->matches(cl->hook->arg, &fh, &sid)
						     : cl->hook->matches(cl->hook->arg, NULL, NULL);
		cl->recall_pending |= matched;
		pthread_cond_broadcast(&cl->renew_cond);
	}
	pthread_mutex_unlock(&cl->renew_lock);
	return matched ? NFS4_OK : NFS4ERR_NOMATCHING_LAYOUT;
}

/* One operation's result into w; its status. */
static uint32_t cb_op(struct client *cl, uint32_t opnum, struct xdr_r *r, struct xdr_w *w)
{
	uint32_t status;

	xw_u32(w, opnum);
	if (opnum == OP_CB_SEQUENCE) {
		size_t at = w->len;

		status = cb_sequence(cl, r, w);
		if (status != NFS4_OK) {
			w->len = at;
			xw_u32(w, status);
		}
		return status;
	}
	status = opnum == OP_CB_LAYOUTRECALL ? cb_layoutrecall(cl, r) : NFS4ERR_NOTSUPP;
	xw_u32(w, status);
	return status;
}

static uint32_t cb_compound(struct client *cl, struct xdr_r *r, struct xdr_w *w)
{
	uint32_t nops, status = NFS4_OK, done = 0;
	size_t status_at = w->len, count_at;

	skip(r, XDR_PAD(xr_u32(r))); /* tag */
	skip(r, 8);                  /* minor version, callback ident */
	nops = xr_u32(r);
	if (r->err)
		return GARBAGE_ARGS;
	xw_u32(w, 0);
	xw_u32(w, 0); /* empty tag */
	count_at = w->len;
	xw_u32(w, 0);
	while (done < nops && status == NFS4_OK) {
		status = cb_op(cl, xr_u32(r), r, w);
		done++;
	}
	if (w->len > w->cap)
		return GARBAGE_ARGS;
	uint8_t *p = w->buf;

	for (int i = 0; i < 4; i++) {
		p[status_at + i] = (uint8_t)(status >> (24 - 8 * i));
		p[count_at + i] = (uint8_t)(done >> (24 - 8 * i));
	}
	return 0;
}

uint32_t cb_handler(void *arg, uint32_t prog, uint32_t proc, const uint8_t *args, size_t len,
		    struct xdr_w *res)
{
	struct xdr_r r = { args, args + len, false, false };

	if (prog != CB_PROGRAM || proc > CB_COMPOUND)
		return PROC_UNAVAIL;
	if (proc == CB_NULL)
		return 0;
	return cb_compound(arg, &r, res);
}
