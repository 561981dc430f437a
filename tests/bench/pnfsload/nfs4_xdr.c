#include "nfs4_xdr.h"

#include <errno.h>
#include <string.h>

#define NF4DIR 2u
#define DIRENT_NAME_MAX 255u
/* READDIR asks for type (1), size (4) and filehandle (19): word 0. */
#define DIRENT_ATTRS ((1u << 1) | (1u << 4) | (1u << 19))
#define OPEN4_CREATE 1u
#define UNCHECKED4 0u
#define CLAIM_NULL 0u
#define LAYOUTRETURN4_FILE 1u
#define FATTR4_MODE_WORD1 (1u << (33 - 32))
#define OP_ILLEGAL 10044u
#define BITMAP_MAX 8u
#define OWNER_MAX 1024u

static int verdict(const struct xdr_r *r)
{
	return r->err ? -EBADMSG : 0;
}

static void skip(struct xdr_r *r, size_t n)
{
	if (r->err || (size_t)(r->end - r->p) < n) {
		r->err = true;
		return;
	}
	r->p += n;
}

static void skip_opaque(struct xdr_r *r, uint32_t max)
{
	uint32_t n = xr_u32(r);

	if (n > max)
		r->err = true;
	skip(r, XDR_PAD(n));
}

static void skip_bitmap(struct xdr_r *r)
{
	uint32_t n = xr_u32(r);

	if (n > BITMAP_MAX)
		r->err = true;
	skip(r, (size_t)n * 4);
}

static void op(struct xdr_w *w, uint32_t opnum)
{
	xw_u32(w, opnum);
}

static void stateid(struct xdr_w *w, const struct pando_stateid *s)
{
	xw_u32(w, s->seqid);
	xw_fixed(w, s->other, sizeof(s->other));
}

static void read_stateid(struct xdr_r *r, struct pando_stateid *s)
{
	s->seqid = xr_u32(r);
	xr_fixed(r, s->other, sizeof(s->other));
}

/* fattr4 holding only mode. */
static void mode_attr(struct xdr_w *w, uint32_t mode)
{
	xw_u32(w, 2);
	xw_u32(w, 0);
	xw_u32(w, FATTR4_MODE_WORD1);
	xw_u32(w, 4);
	xw_u32(w, mode);
}

void c4_begin(struct xdr_w *w, uint32_t nops)
{
	xw_u32(w, 0); /* empty tag */
	xw_u32(w, 1); /* minor version */
	xw_u32(w, nops);
}

void c4_sequence(struct xdr_w *w, const uint8_t *sessionid, uint32_t seqid, uint32_t slot,
		 uint32_t highest)
{
	op(w, OP_SEQUENCE);
	xw_fixed(w, sessionid, NFS4_SESSIONID_SIZE);
	xw_u32(w, seqid);
	xw_u32(w, slot);
	xw_u32(w, highest);
	xw_bool(w, false);
}

void c4_exchange_id(struct xdr_w *w, const uint8_t *verifier, const char *owner, uint32_t flags)
{
	op(w, OP_EXCHANGE_ID);
	xw_fixed(w, verifier, NFS4_VERIFIER_SIZE);
	xw_string(w, owner);
	xw_u32(w, flags);
	xw_u32(w, 0); /* SP4_NONE */
	xw_u32(w, 0); /* no implementation id */
}

static void channel(struct xdr_w *w, const struct nfs4_channel *c)
{
	xw_u32(w, 0); /* header pad */
	xw_u32(w, c->maxrequestsize);
	xw_u32(w, c->maxresponsesize);
	xw_u32(w, 0);  /* nothing cached: we never set cachethis */
	xw_u32(w, 16); /* operations per compound */
	xw_u32(w, c->maxrequests);
	xw_u32(w, 0); /* no RDMA */
}

void c4_create_session(struct xdr_w *w, uint64_t clientid, uint32_t seq, uint32_t flags,
		       const struct nfs4_channel *fore)
{
	static const struct nfs4_channel back = { 4096, 4096, 1 };

	op(w, OP_CREATE_SESSION);
	xw_u64(w, clientid);
	xw_u32(w, seq);
	xw_u32(w, flags);
	channel(w, fore);
	channel(w, &back);
	xw_u32(w, 0x40000000u); /* callback program */
	xw_u32(w, 1);
	xw_u32(w, 0); /* AUTH_NONE */
}

void c4_destroy_session(struct xdr_w *w, const uint8_t *sessionid)
{
	op(w, OP_DESTROY_SESSION);
	xw_fixed(w, sessionid, NFS4_SESSIONID_SIZE);
}

void c4_destroy_clientid(struct xdr_w *w, uint64_t clientid)
{
	op(w, OP_DESTROY_CLIENTID);
	xw_u64(w, clientid);
}

void c4_reclaim_complete(struct xdr_w *w)
{
	op(w, OP_RECLAIM_COMPLETE);
	xw_bool(w, false);
}

void c4_putrootfh(struct xdr_w *w)
{
	op(w, OP_PUTROOTFH);
}

void c4_putfh(struct xdr_w *w, const struct nfs4_fh *fh)
{
	op(w, OP_PUTFH);
	xw_opaque(w, fh->data, fh->len);
}

void c4_lookup(struct xdr_w *w, const char *name)
{
	op(w, OP_LOOKUP);
	xw_string(w, name);
}

void c4_getfh(struct xdr_w *w)
{
	op(w, OP_GETFH);
}

/* type, change, size first (the decoder reads those), then what stat(2)
 * wants: fileid, mode, numlinks, owner, owner_group, time_modify. */
void c4_getattr(struct xdr_w *w)
{
	op(w, OP_GETATTR);
	xw_u32(w, 2);
	xw_u32(w, (1u << 1) | (1u << 3) | (1u << 4) | (1u << 20));
	xw_u32(w, (1u << (33 - 32)) | (1u << (35 - 32)) | (1u << (36 - 32)) | (1u << (37 - 32)) |
			  (1u << (53 - 32)));
}

#define FATTR4_MDSTHRESHOLD 68u

void c4_getattr_mdsthreshold(struct xdr_w *w)
{
	op(w, OP_GETATTR);
	xw_u32(w, 3);
	xw_u32(w, 0);
	xw_u32(w, 0);
	xw_u32(w, 1u << (FATTR4_MDSTHRESHOLD - 64));
}

void c4_mkdir(struct xdr_w *w, const char *name, uint32_t mode)
{
	op(w, OP_CREATE);
	xw_u32(w, NF4DIR);
	xw_string(w, name);
	mode_attr(w, mode);
}

void c4_readdir(struct xdr_w *w, uint64_t cookie, const uint8_t *verifier, uint32_t maxcount)
{
	op(w, OP_READDIR);
	xw_u64(w, cookie);
	xw_fixed(w, verifier, NFS4_VERIFIER_SIZE);
	xw_u32(w, maxcount); /* dircount */
	xw_u32(w, maxcount);
	xw_u32(w, 1);
	xw_u32(w, DIRENT_ATTRS);
}

void c4_remove(struct xdr_w *w, const char *name)
{
	op(w, OP_REMOVE);
	xw_string(w, name);
}

void c4_open(struct xdr_w *w, uint64_t clientid, const char *owner, const char *name, bool create,
	     uint32_t access, uint32_t mode)
{
	op(w, OP_OPEN);
	xw_u32(w, 0); /* seqid: unused with sessions */
	xw_u32(w, access);
	xw_u32(w, 0); /* deny none */
	xw_u64(w, clientid);
	xw_string(w, owner);
	xw_u32(w, create ? OPEN4_CREATE : 0);
	if (create) {
		xw_u32(w, UNCHECKED4);
		mode_attr(w, mode);
	}
	xw_u32(w, CLAIM_NULL);
	xw_string(w, name);
}

void c4_close(struct xdr_w *w, const struct pando_stateid *sid)
{
	op(w, OP_CLOSE);
	xw_u32(w, 0);
	stateid(w, sid);
}

void c4_write_head(struct xdr_w *w, const struct pando_stateid *sid, uint64_t offset,
		   uint32_t stable, uint32_t count)
{
	op(w, OP_WRITE);
	stateid(w, sid);
	xw_u64(w, offset);
	xw_u32(w, stable);
	xw_u32(w, count);
}

void c4_read(struct xdr_w *w, const struct pando_stateid *sid, uint64_t offset, uint32_t count)
{
	op(w, OP_READ);
	stateid(w, sid);
	xw_u64(w, offset);
	xw_u32(w, count);
}

void c4_commit(struct xdr_w *w, uint64_t offset, uint32_t count)
{
	op(w, OP_COMMIT);
	xw_u64(w, offset);
	xw_u32(w, count);
}

void c4_layoutget(struct xdr_w *w, uint32_t iomode, uint64_t offset, uint64_t length,
		  uint64_t minlength, const struct pando_stateid *sid, uint32_t maxcount)
{
	op(w, OP_LAYOUTGET);
	xw_bool(w, false);
	xw_u32(w, LAYOUT4_FLEX_FILES);
	xw_u32(w, iomode);
	xw_u64(w, offset);
	xw_u64(w, length);
	xw_u64(w, minlength);
	stateid(w, sid);
	xw_u32(w, maxcount);
}

void c4_getdeviceinfo(struct xdr_w *w, const uint8_t *deviceid, uint32_t maxcount)
{
	op(w, OP_GETDEVICEINFO);
	xw_fixed(w, deviceid, PANDO_FF_DEVICEID_SIZE);
	xw_u32(w, LAYOUT4_FLEX_FILES);
	xw_u32(w, maxcount);
	xw_u32(w, 0); /* no notifications */
}

void c4_layoutcommit(struct xdr_w *w, uint64_t offset, uint64_t length,
		     const struct pando_stateid *sid, uint64_t last_write)
{
	op(w, OP_LAYOUTCOMMIT);
	xw_u64(w, offset);
	xw_u64(w, length);
	xw_bool(w, false);
	stateid(w, sid);
	xw_bool(w, true);
	xw_u64(w, last_write);
	xw_bool(w, false); /* the server's clock sets mtime */
	xw_u32(w, LAYOUT4_FLEX_FILES);
	xw_u32(w, 0); /* flexfiles: empty layoutupdate body */
}

void c4_layoutreturn(struct xdr_w *w, uint32_t iomode, uint64_t offset, uint64_t length,
		     const struct pando_stateid *sid, const uint8_t *body, uint32_t body_len)
{
	op(w, OP_LAYOUTRETURN);
	xw_bool(w, false);
	xw_u32(w, LAYOUT4_FLEX_FILES);
	xw_u32(w, iomode);
	xw_u32(w, LAYOUTRETURN4_FILE);
	xw_u64(w, offset);
	xw_u64(w, length);
	stateid(w, sid);
	xw_opaque(w, body, body_len);
}

/* ---- decoders ---- */

int d4_compound(struct xdr_r *r, uint32_t *status, uint32_t *nres)
{
	*status = xr_u32(r);
	skip_opaque(r, OWNER_MAX);
	*nres = xr_u32(r);
	return verdict(r);
}

int d4_op(struct xdr_r *r, uint32_t opnum, uint32_t *status)
{
	uint32_t got = xr_u32(r);

	*status = xr_u32(r);
	if (r->err || (got != opnum && got != OP_ILLEGAL))
		return -EBADMSG;
	if (got == OP_ILLEGAL && *status == NFS4_OK)
		return -EBADMSG;
	return 0;
}

int d4_sequence(struct xdr_r *r, const uint8_t *sessionid)
{
	uint8_t sid[NFS4_SESSIONID_SIZE];

	xr_fixed(r, sid, sizeof(sid));
	skip(r, 5 * 4);
	if (!r->err && memcmp(sid, sessionid, sizeof(sid)))
		r->err = true;
	return verdict(r);
}

static void skip_state_protect(struct xdr_r *r)
{
	uint32_t how = xr_u32(r);

	if (how == 1) { /* SP4_MACH_CRED: enforce and allow bitmaps */
		skip_bitmap(r);
		skip_bitmap(r);
	} else if (how != 0) { /* SP4_SSV: never asked for */
		r->err = true;
	}
}

int d4_exchange_id(struct xdr_r *r, struct nfs4_exchange_res *res)
{
	uint32_t nimpl;

	res->clientid = xr_u64(r);
	res->sequenceid = xr_u32(r);
	res->flags = xr_u32(r);
	skip_state_protect(r);
	xr_u64(r); /* server owner minor id */
	skip_opaque(r, OWNER_MAX);
	skip_opaque(r, OWNER_MAX); /* server scope */
	nimpl = xr_u32(r);
	if (nimpl > 1)
		r->err = true;
	if (nimpl == 1 && !r->err) {
		skip_opaque(r, OWNER_MAX);
		skip_opaque(r, OWNER_MAX);
		skip(r, 12);
	}
	return verdict(r);
}

static void read_channel(struct xdr_r *r, struct nfs4_channel *c)
{
	uint32_t rdma;

	xr_u32(r);
	c->maxrequestsize = xr_u32(r);
	c->maxresponsesize = xr_u32(r);
	xr_u32(r);
	xr_u32(r);
	c->maxrequests = xr_u32(r);
	rdma = xr_u32(r);
	if (rdma > 1)
		r->err = true;
	skip(r, (size_t)rdma * 4);
}

int d4_create_session(struct xdr_r *r, struct nfs4_session_res *res)
{
	struct nfs4_channel back;

	xr_fixed(r, res->sessionid, NFS4_SESSIONID_SIZE);
	xr_u32(r); /* sequence */
	res->flags = xr_u32(r);
	read_channel(r, &res->fore);
	read_channel(r, &back);
	return verdict(r);
}

int d4_getfh(struct xdr_r *r, struct nfs4_fh *fh)
{
	fh->len = xr_opaque(r, fh->data, PANDO_FF_FH_MAX);
	if (!r->err && fh->len == 0)
		r->err = true;
	return verdict(r);
}

/* A fattr4: its bitmap into words, a reader over its attribute values in
 * *vals; r moves past the whole of it.  -EBADMSG when it does not fit. */
static int fattr4_open(struct xdr_r *r, uint32_t words[BITMAP_MAX], struct xdr_r *vals)
{
	uint32_t n = xr_u32(r), len;

	memset(words, 0, BITMAP_MAX * sizeof(*words));
	if (n > BITMAP_MAX)
		r->err = true;
	for (uint32_t i = 0; i < n && !r->err; i++)
		words[i] = xr_u32(r);
	len = xr_u32(r);
	if (r->err || (size_t)(r->end - r->p) < XDR_PAD(len))
		return -EBADMSG;
	*vals = (struct xdr_r){ r->p, r->p + len, false, false };
	r->p += XDR_PAD(len);
	return 0;
}

int d4_getattr(struct xdr_r *r, struct nfs4_attrs *a)
{
	uint32_t words[BITMAP_MAX];
	struct xdr_r in;

	memset(a, 0, sizeof(*a));
	if (fattr4_open(r, words, &in))
		return -EBADMSG;
	if (words[0] & (1u << 1))
		a->type = xr_u32(&in);
	if (words[0] & (1u << 3))
		a->change = xr_u64(&in);
	if (words[0] & (1u << 4))
		a->size = xr_u64(&in);
	return in.err ? -EBADMSG : 0;
}

/* One threshold_item4: the flexfiles item's read and write sizes (hint
 * bits 0 and 1; the values follow in bit order, length4 each). */
static void threshold_item(struct xdr_r *r, struct nfs4_mdsthreshold *t)
{
	uint32_t type = xr_u32(r), n = xr_u32(r), hints = n ? xr_u32(r) : 0, len;
	uint64_t v[4] = { 0 };
	struct xdr_r list;

	if (n > BITMAP_MAX)
		r->err = true;
	skip(r, n > 1 ? ((size_t)n - 1) * 4 : 0);
	len = xr_u32(r);
	if (r->err || (size_t)(r->end - r->p) < XDR_PAD(len))
		r->err = true;
	if (r->err)
		return;
	list = (struct xdr_r){ r->p, r->p + len, false, false };
	for (unsigned bit = 0; bit < 4; bit++)
		if (hints & (1u << bit))
			v[bit] = xr_u64(&list);
	r->p += XDR_PAD(len);
	if (list.err)
		r->err = true;
	else if (type == LAYOUT4_FLEX_FILES)
		*t = (struct nfs4_mdsthreshold){ v[0], v[1] };
}

int d4_mdsthreshold(struct xdr_r *r, struct nfs4_mdsthreshold *t)
{
	uint32_t words[BITMAP_MAX], items;
	struct xdr_r in;

	memset(t, 0, sizeof(*t));
	if (fattr4_open(r, words, &in))
		return -EBADMSG;
	if (words[2] & (1u << (FATTR4_MDSTHRESHOLD - 64))) {
		items = xr_u32(&in);
		for (uint32_t i = 0; i < items && !in.err; i++)
			threshold_item(&in, t);
	}
	return in.err ? -EBADMSG : 0;
}

int d4_change_info(struct xdr_r *r)
{
	xr_bool(r);
	skip(r, 16);
	return verdict(r);
}

int d4_create(struct xdr_r *r)
{
	d4_change_info(r);
	skip_bitmap(r);
	return verdict(r);
}

static void skip_ace(struct xdr_r *r)
{
	skip(r, 12);
	skip_opaque(r, OWNER_MAX);
}

static void skip_delegation(struct xdr_r *r)
{
	struct pando_stateid ignored;
	uint32_t type = xr_u32(r), why, limit;

	if (type == 1 || type == 2) {
		read_stateid(r, &ignored);
		xr_bool(r);
		if (type == 2) {
			limit = xr_u32(r);
			skip(r, limit == 1 || limit == 2 ? 8 : 0);
			if (limit != 1 && limit != 2)
				r->err = true;
		}
		skip_ace(r);
	} else if (type == 3) {
		why = xr_u32(r);
		if (why == 6 || why == 7) /* WND4_CONTENTION, WND4_RESOURCE */
			xr_bool(r);
	} else if (type != 0) {
		r->err = true;
	}
}

int d4_open(struct xdr_r *r, struct pando_stateid *sid)
{
	read_stateid(r, sid);
	d4_change_info(r);
	xr_u32(r); /* rflags */
	skip_bitmap(r);
	skip_delegation(r);
	return verdict(r);
}

int d4_stateid(struct xdr_r *r, struct pando_stateid *sid)
{
	read_stateid(r, sid);
	return verdict(r);
}

int d4_write(struct xdr_r *r, uint32_t *count, uint32_t *committed)
{
	*count = xr_u32(r);
	*committed = xr_u32(r);
	skip(r, NFS4_VERIFIER_SIZE);
	return verdict(r);
}

int d4_read(struct xdr_r *r, bool *eof, const uint8_t **data, uint32_t *len)
{
	*eof = xr_bool(r);
	*len = xr_u32(r);
	*data = r->p;
	skip(r, XDR_PAD(*len));
	return verdict(r);
}

int d4_commit(struct xdr_r *r)
{
	skip(r, NFS4_VERIFIER_SIZE);
	return verdict(r);
}

int d4_layoutget(struct xdr_r *r, struct nfs4_layout_res *res)
{
	uint32_t n;

	xr_bool(r); /* return on close */
	read_stateid(r, &res->stateid);
	n = xr_count(r, 24);
	if (n == 0)
		r->err = true;
	for (uint32_t i = 0; i < n && !r->err; i++) {
		uint64_t off = xr_u64(r), len = xr_u64(r);
		uint32_t iomode = xr_u32(r), type = xr_u32(r), blen = xr_u32(r);
		const uint8_t *body = r->p;

		skip(r, XDR_PAD(blen));
		if (i > 0 || r->err)
			continue;
		if (type != LAYOUT4_FLEX_FILES)
			r->err = true;
		res->offset = off;
		res->length = len;
		res->iomode = iomode;
		res->body = body;
		res->body_len = blen;
	}
	return verdict(r);
}

int d4_getdeviceinfo(struct xdr_r *r, const uint8_t **body, uint32_t *body_len)
{
	if (xr_u32(r) != LAYOUT4_FLEX_FILES)
		r->err = true;
	*body_len = xr_u32(r);
	*body = r->p;
	skip(r, XDR_PAD(*body_len));
	skip_bitmap(r);
	return verdict(r);
}

int d4_layoutcommit(struct xdr_r *r)
{
	if (xr_bool(r))
		xr_u64(r);
	return verdict(r);
}

int d4_layoutreturn(struct xdr_r *r)
{
	struct pando_stateid ignored;

	if (xr_bool(r))
		read_stateid(r, &ignored);
	return verdict(r);
}

/* One entry4 after its cookie: name, then the attributes c4_readdir
 * asked for, every one of them there. */
static int dirent(struct xdr_r *r, struct nfs4_dirent *e)
{
	uint32_t words[BITMAP_MAX];
	struct xdr_r in;

	e->name_len = xr_u32(r);
	if (r->err || e->name_len > DIRENT_NAME_MAX ||
	    (size_t)(r->end - r->p) < XDR_PAD(e->name_len))
		return -EBADMSG;
	e->name = (const char *)r->p;
	r->p += XDR_PAD(e->name_len);
	if (fattr4_open(r, words, &in) || (words[0] & DIRENT_ATTRS) != DIRENT_ATTRS ||
	    (words[0] & ~DIRENT_ATTRS & ((1u << 19) - 1)) != 0)
		return -EBADMSG;
	e->type = xr_u32(&in);
	e->size = xr_u64(&in);
	e->fh.len = xr_opaque(&in, e->fh.data, PANDO_FF_FH_MAX);
	return in.err || e->fh.len == 0 ? -EBADMSG : 0;
}

int d4_readdir(struct xdr_r *r, void (*fn)(void *arg, const struct nfs4_dirent *e), void *arg,
	       struct nfs4_readdir_res *res)
{
	memset(res, 0, sizeof(*res));
	xr_fixed(r, res->verifier, NFS4_VERIFIER_SIZE);
	while (!r->err && xr_u32(r)) {
		struct nfs4_dirent e;

		res->cookie = xr_u64(r);
		if (r->err || dirent(r, &e))
			return -EBADMSG;
		res->entries++;
		fn(arg, &e);
	}
	res->eof = xr_u32(r) != 0;
	return verdict(r);
}
