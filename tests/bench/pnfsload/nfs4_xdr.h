/* NFSv4.1 COMPOUND (RFC 8881 section 18) encoders and result decoders for
 * the operations a pNFS client needs.  Encoders append one operation to a
 * compound begun with c4_begin(); decoders read one operation's result
 * and return 0 or -EBADMSG (truncated or malformed), never past the
 * reply. */
#ifndef PNFSLOAD_NFS4_XDR_H
#define PNFSLOAD_NFS4_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xdr.h"
#include "pando/ff_xdr.h"

#define NFS4_PROGRAM 100003u
#define NFS4_VERSION 4u
#define NFSPROC4_COMPOUND 1u
#define NFS4_SESSIONID_SIZE 16
#define NFS4_VERIFIER_SIZE 8

enum nfs4_op {
	OP_CLOSE = 4,
	OP_COMMIT = 5,
	OP_CREATE = 6,
	OP_GETATTR = 9,
	OP_GETFH = 10,
	OP_LOOKUP = 15,
	OP_OPEN = 18,
	OP_PUTFH = 22,
	OP_PUTROOTFH = 24,
	OP_READ = 25,
	OP_READDIR = 26,
	OP_REMOVE = 28,
	OP_WRITE = 38,
	OP_EXCHANGE_ID = 42,
	OP_CREATE_SESSION = 43,
	OP_DESTROY_SESSION = 44,
	OP_GETDEVICEINFO = 47,
	OP_LAYOUTCOMMIT = 49,
	OP_LAYOUTGET = 50,
	OP_LAYOUTRETURN = 51,
	OP_SEQUENCE = 53,
	OP_DESTROY_CLIENTID = 57,
	OP_RECLAIM_COMPLETE = 58,
};

enum {
	NFS4_OK = 0,
	NFS4ERR_NOENT = 2,
	NFS4ERR_EXIST = 17,
	NFS4ERR_DELAY = 10008,
	NFS4ERR_GRACE = 10013,
	NFS4ERR_BADLAYOUT = 10050,
	NFS4ERR_LAYOUTTRYLATER = 10058,
	NFS4ERR_LAYOUTUNAVAILABLE = 10059,
	NFS4ERR_UNKNOWN_LAYOUTTYPE = 10062,
	NFS4ERR_NOTSUPP = 10004,
	NFS4ERR_STALE_CLIENTID = 10022,
	NFS4ERR_OLD_STATEID = 10024,
	NFS4ERR_BADSESSION = 10052,
	NFS4ERR_DEADSESSION = 10078,
	NFS4ERR_BAD_STATEID = 10025,
	NFS4ERR_BADIOMODE = 10049,
	NFS4ERR_DELEG_REVOKED = 10087,
};

#define LAYOUT4_FLEX_FILES 4u
#define LAYOUTIOMODE4_READ 1u
#define LAYOUTIOMODE4_RW 2u
#define LAYOUTIOMODE4_ANY 3u
#define NFS4_UINT64_MAX UINT64_MAX
#define EXCHGID4_FLAG_USE_PNFS_MDS 0x00020000u
#define OPEN4_SHARE_ACCESS_READ 1u
#define OPEN4_SHARE_ACCESS_WRITE 2u
#define OPEN4_SHARE_ACCESS_BOTH 3u
#define UNSTABLE4 0u
#define FILE_SYNC4 2u

struct nfs4_fh {
	uint32_t len;
	uint8_t data[PANDO_FF_FH_MAX];
};

struct nfs4_channel {
	uint32_t maxrequestsize;
	uint32_t maxresponsesize;
	uint32_t maxrequests;
};

/* What the decoders hand back that the client keeps. */
struct nfs4_exchange_res {
	uint64_t clientid;
	uint32_t sequenceid;
	uint32_t flags;
};

#define CREATE_SESSION4_FLAG_CONN_BACK_CHAN 0x2u

struct nfs4_session_res {
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t flags;
	struct nfs4_channel fore;
};

struct nfs4_layout_res {
	struct pando_stateid stateid;
	uint64_t offset;
	uint64_t length;
	uint32_t iomode;
	const uint8_t *body; /* ff_layout4, inside the reply */
	uint32_t body_len;
};

/* One READDIR entry, as d4_readdir hands it over: its name (not
 * NUL-terminated, inside the reply), type, size and file handle. */
struct nfs4_dirent {
	const char *name;
	uint32_t name_len;
	uint32_t type; /* NF4REG, NF4DIR, ... */
	uint64_t size;
	struct nfs4_fh fh;
};

/* What a READDIR reply says besides its entries. */
struct nfs4_readdir_res {
	uint8_t verifier[NFS4_VERIFIER_SIZE];
	uint64_t cookie; /* the last entry's, to go on from */
	uint32_t entries;
	bool eof;
};

struct nfs4_attrs {
	uint32_t type;
	uint64_t change;
	uint64_t size;
};

/* FATTR4_MDSTHRESHOLD's flexfiles item (RFC 8881 5.12.6): files smaller
 * than these sizes are read or written through the MDS; 0: no hint. */
struct nfs4_mdsthreshold {
	uint64_t read_size;
	uint64_t write_size;
};

/* ---- encoders ---- */
void c4_begin(struct xdr_w *w, uint32_t nops);
void c4_sequence(struct xdr_w *w, const uint8_t *sessionid, uint32_t seqid, uint32_t slot,
		 uint32_t highest);
void c4_exchange_id(struct xdr_w *w, const uint8_t *verifier, const char *owner, uint32_t flags);
void c4_create_session(struct xdr_w *w, uint64_t clientid, uint32_t seq, uint32_t flags,
		       const struct nfs4_channel *fore);
void c4_destroy_session(struct xdr_w *w, const uint8_t *sessionid);
void c4_destroy_clientid(struct xdr_w *w, uint64_t clientid);
void c4_reclaim_complete(struct xdr_w *w);
void c4_putrootfh(struct xdr_w *w);
void c4_putfh(struct xdr_w *w, const struct nfs4_fh *fh);
void c4_lookup(struct xdr_w *w, const char *name);
void c4_getfh(struct xdr_w *w);
void c4_getattr(struct xdr_w *w);
void c4_getattr_mdsthreshold(struct xdr_w *w);
void c4_mkdir(struct xdr_w *w, const char *name, uint32_t mode);
void c4_remove(struct xdr_w *w, const char *name);
/* READDIR from cookie (0 and a zero verifier: the start) for entries'
 * type, size and file handle, in replies of at most maxcount bytes. */
void c4_readdir(struct xdr_w *w, uint64_t cookie, const uint8_t *verifier, uint32_t maxcount);
/* OPEN by name in the current directory; create: UNCHECKED4 with mode. */
void c4_open(struct xdr_w *w, uint64_t clientid, const char *owner, const char *name, bool create,
	     uint32_t access, uint32_t mode);
void c4_close(struct xdr_w *w, const struct pando_stateid *sid);
/* WRITE up to its data length: the caller sends count data bytes and
 * XDR_PAD(count) - count zeros after this. */
void c4_write_head(struct xdr_w *w, const struct pando_stateid *sid, uint64_t offset,
		   uint32_t stable, uint32_t count);
void c4_read(struct xdr_w *w, const struct pando_stateid *sid, uint64_t offset, uint32_t count);
void c4_commit(struct xdr_w *w, uint64_t offset, uint32_t count);
void c4_layoutget(struct xdr_w *w, uint32_t iomode, uint64_t offset, uint64_t length,
		  uint64_t minlength, const struct pando_stateid *sid, uint32_t maxcount);
void c4_getdeviceinfo(struct xdr_w *w, const uint8_t *deviceid, uint32_t maxcount);
void c4_layoutcommit(struct xdr_w *w, uint64_t offset, uint64_t length,
		     const struct pando_stateid *sid, uint64_t last_write);
/* LAYOUTRETURN4_FILE with an ff_layoutreturn4 body (body_len 0: empty). */
void c4_layoutreturn(struct xdr_w *w, uint32_t iomode, uint64_t offset, uint64_t length,
		     const struct pando_stateid *sid, const uint8_t *body, uint32_t body_len);

/* ---- decoders ---- */
/* COMPOUND4res up to its results: status, tag, result count. */
int d4_compound(struct xdr_r *r, uint32_t *status, uint32_t *nres);
/* One result's opnum (must be op) and status. */
int d4_op(struct xdr_r *r, uint32_t op, uint32_t *status);
int d4_sequence(struct xdr_r *r, const uint8_t *sessionid);
int d4_exchange_id(struct xdr_r *r, struct nfs4_exchange_res *res);
int d4_create_session(struct xdr_r *r, struct nfs4_session_res *res);
int d4_getfh(struct xdr_r *r, struct nfs4_fh *fh);
int d4_getattr(struct xdr_r *r, struct nfs4_attrs *attrs);
int d4_mdsthreshold(struct xdr_r *r, struct nfs4_mdsthreshold *t);
int d4_change_info(struct xdr_r *r); /* REMOVE */
int d4_create(struct xdr_r *r);
int d4_open(struct xdr_r *r, struct pando_stateid *sid);
int d4_stateid(struct xdr_r *r, struct pando_stateid *sid); /* CLOSE */
int d4_write(struct xdr_r *r, uint32_t *count, uint32_t *committed);
/* READ: *data points into the reply. */
int d4_read(struct xdr_r *r, bool *eof, const uint8_t **data, uint32_t *len);
int d4_commit(struct xdr_r *r);
/* LAYOUTGET: the first flexfiles segment. */
int d4_layoutget(struct xdr_r *r, struct nfs4_layout_res *res);
int d4_getdeviceinfo(struct xdr_r *r, const uint8_t **body, uint32_t *body_len);
int d4_layoutcommit(struct xdr_r *r);
int d4_layoutreturn(struct xdr_r *r);
/* READDIR4resok: each entry to fn (which may not keep e->name), then
 * res.  -EBADMSG for a reply that does not parse, an entry without the
 * attributes asked for, a name over 255 bytes or a handle too long. */
int d4_readdir(struct xdr_r *r, void (*fn)(void *arg, const struct nfs4_dirent *e), void *arg,
	       struct nfs4_readdir_res *res);

const char *nfs4_status_name(uint32_t status);
const char *nfs4_op_name(uint32_t op);

#endif
