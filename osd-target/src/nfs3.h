/* The NFSv3 data server (RFC 1813 subset): constants, argument decoders,
 * the file-handle check and the attribute encoders shared by the
 * procedures, one procedure per nfs3_proc_*.c file. */
#ifndef PANDO_NFS3_H
#define PANDO_NFS3_H

#include <stdbool.h>
#include <stdint.h>

#include "objstore.h"
#include "osd.h"
#include "pando/capability.h"
#include "rpc_server.h"
#include "xdr.h"

#define NFS3_FHSIZE 64
#define NFS3_WRITEVERFSIZE 8

enum nfs3_proc {
	NFSPROC3_NULL = 0,
	NFSPROC3_GETATTR = 1,
	NFSPROC3_SETATTR = 2,
	NFSPROC3_LOOKUP = 3,
	NFSPROC3_ACCESS = 4,
	NFSPROC3_READLINK = 5,
	NFSPROC3_READ = 6,
	NFSPROC3_WRITE = 7,
	NFSPROC3_CREATE = 8,
	NFSPROC3_MKDIR = 9,
	NFSPROC3_SYMLINK = 10,
	NFSPROC3_MKNOD = 11,
	NFSPROC3_REMOVE = 12,
	NFSPROC3_RMDIR = 13,
	NFSPROC3_RENAME = 14,
	NFSPROC3_LINK = 15,
	NFSPROC3_READDIR = 16,
	NFSPROC3_READDIRPLUS = 17,
	NFSPROC3_FSSTAT = 18,
	NFSPROC3_FSINFO = 19,
	NFSPROC3_PATHCONF = 20,
	NFSPROC3_COMMIT = 21,
	NFSPROC3_COUNT
};

enum nfsstat3 {
	NFS3_OK = 0,
	NFS3ERR_PERM = 1,
	NFS3ERR_NOENT = 2,
	NFS3ERR_IO = 5,
	NFS3ERR_NXIO = 6,
	NFS3ERR_ACCES = 13,
	NFS3ERR_EXIST = 17,
	NFS3ERR_XDEV = 18,
	NFS3ERR_NODEV = 19,
	NFS3ERR_NOTDIR = 20,
	NFS3ERR_ISDIR = 21,
	NFS3ERR_INVAL = 22,
	NFS3ERR_FBIG = 27,
	NFS3ERR_NOSPC = 28,
	NFS3ERR_ROFS = 30,
	NFS3ERR_MLINK = 31,
	NFS3ERR_NAMETOOLONG = 63,
	NFS3ERR_NOTEMPTY = 66,
	NFS3ERR_DQUOT = 69,
	NFS3ERR_STALE = 70,
	NFS3ERR_REMOTE = 71,
	NFS3ERR_BADHANDLE = 10001,
	NFS3ERR_NOT_SYNC = 10002,
	NFS3ERR_BAD_COOKIE = 10003,
	NFS3ERR_NOTSUPP = 10004,
	NFS3ERR_TOOSMALL = 10005,
	NFS3ERR_SERVERFAULT = 10006,
	NFS3ERR_BADTYPE = 10007,
	NFS3ERR_JUKEBOX = 10008,
};

enum nfs3_stable_how {
	NFS3_UNSTABLE = 0,
	NFS3_DATA_SYNC = 1,
	NFS3_FILE_SYNC = 2,
};

enum nfs3_ftype {
	NF3REG = 1,
	NF3DIR = 2,
	NF3BLK = 3,
	NF3CHR = 4,
	NF3LNK = 5,
	NF3SOCK = 6,
	NF3FIFO = 7,
};

#define ACCESS3_READ 0x0001u
#define ACCESS3_LOOKUP 0x0002u
#define ACCESS3_MODIFY 0x0004u
#define ACCESS3_EXTEND 0x0008u
#define ACCESS3_DELETE 0x0010u
#define ACCESS3_EXECUTE 0x0020u

#define FSF3_LINK 0x0001u
#define FSF3_SYMLINK 0x0002u
#define FSF3_HOMOGENEOUS 0x0008u
#define FSF3_CANSETTIME 0x0010u

/* nfs_fh3 as it arrives: points into the record. */
struct nfs3_fh {
	const uint8_t *data;
	uint32_t len;
};

struct nfs3_read_args {
	struct nfs3_fh fh;
	uint64_t offset;
	uint32_t count;
};

struct nfs3_write_args {
	struct nfs3_fh fh;
	uint64_t offset;
	uint32_t count;
	uint32_t stable;     /* enum nfs3_stable_how, checked */
	const uint8_t *data; /* points into the record */
	uint32_t data_len;
};

struct nfs3_commit_args {
	struct nfs3_fh fh;
	uint64_t offset;
	uint32_t count;
};

struct nfs3_access_args {
	struct nfs3_fh fh;
	uint32_t access;
};

/* Argument decoders: 0, or -EINVAL when the bytes do not decode (the
 * caller answers GARBAGE_ARGS).  Trailing bytes are ignored. */
int nfs3_decode_fh_args(struct xdr_r *in, struct nfs3_fh *fh);
int nfs3_decode_read_args(struct xdr_r *in, struct nfs3_read_args *a);
int nfs3_decode_write_args(struct xdr_r *in, struct nfs3_write_args *a);
int nfs3_decode_commit_args(struct xdr_r *in, struct nfs3_commit_args *a);
int nfs3_decode_access_args(struct xdr_r *in, struct nfs3_access_args *a);

/* Who a call says it is: its AUTH_SYS ids, when it sent AUTH_SYS (a
 * handle bound to a holder takes only calls with the holder's uid). */
struct nfs3_caller {
	bool auth_sys;
	uint32_t uid;
	uint32_t gid;
};

/* An object opened through a verified handle. */
struct nfs3_obj {
	struct capability cap;
	struct obj_ref *ref;
};

enum nfs3_need {
	NFS3_NEED_READ,
	NFS3_NEED_WRITE,
};

/* Runs the README's handle checks in order; on NFS3_OK *obj holds a
 * reference that nfs3_obj_close() gives back. */
enum nfsstat3 nfs3_obj_open(const struct osd_ctx *ctx, const struct nfs3_caller *who,
			    const struct nfs3_fh *fh, enum nfs3_need need, struct nfs3_obj *obj);
void nfs3_obj_close(const struct osd_ctx *ctx, struct nfs3_obj *obj);
/* Maps an objstore -errno from `op` on obj to the status a data-server
 * client can act on, logging the failures that are the target's own. */
enum nfsstat3 nfs3_stat_from_errno(const char *op, const struct nfs3_obj *obj, int err);

/* Result encoders.  obj may be NULL (no attributes to report). */
uint64_t nfs3_fileid(uint64_t partition, uint64_t object);
void nfs3_encode_fattr(struct xdr_w *out, const struct osd_ctx *ctx, const struct nfs3_obj *obj,
		       const struct obj_info *info);
void nfs3_encode_post_op_attr(struct xdr_w *out, const struct osd_ctx *ctx,
			      const struct nfs3_obj *obj);
/* wcc_data without pre-operation attributes (RFC 1813 allows it). */
void nfs3_encode_wcc_data(struct xdr_w *out, const struct osd_ctx *ctx, const struct nfs3_obj *obj);

/* One function per procedure.  Each decodes its arguments and fills
 * reply->res with the status and the matching result arm. */
typedef enum rpc_outcome (*nfs3_proc_fn)(const struct osd_ctx *ctx, const struct nfs3_caller *who,
					 struct xdr_r *args, struct rpc_reply *reply);

/* The shape FSINFO and PATHCONF share: a handle in; status, post_op_attr
 * and, on success, fixed results out (written by encode_ok). */
enum rpc_outcome nfs3_reply_static_info(const struct osd_ctx *ctx, const struct nfs3_caller *who,
					struct xdr_r *args, struct rpc_reply *reply,
					void (*encode_ok)(struct xdr_w *out));

enum rpc_outcome nfs3_proc_null(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_getattr(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				   struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_access(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_read(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_write(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				 struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_commit(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_fsstat(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_fsinfo(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply);
enum rpc_outcome nfs3_proc_pathconf(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				    struct xdr_r *args, struct rpc_reply *reply);

#endif
