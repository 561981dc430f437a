/* libfsalpando.so: the Pando metadata manager as an FSAL for the stock
 * NFS-Ganesha 4.3.  Ganesha's FSAL API adapted to the engine (../mds,
 * struct pando_mds: every service of the manager, no Ganesha types), and
 * the engine's host (host.c).
 *
 * One concern per file; ../README.md lists them all.  The main ones:
 * main.c (module, registration), export.c (export config and ops),
 * handle.c (handles, attributes, errors), dir.c (namespace ops), file.c
 * (open state, shares, locks), io.c (read, write, commit: inline data
 * and gateway I/O), move.c and write_hole.c (a handle's move to objects,
 * its RS row updates), mds.c (pNFS), layouts.c (errors clients report),
 * dbus*.c (org.ganesha.nfsd.pando). */
#ifndef PANDO_FSAL_H
#define PANDO_FSAL_H

#include "config.h"
/* Ganesha's generated config.h carries Debian's build options, and they
 * set enum values and struct layouts the FSAL shares with ganesha.nfsd
 * (STATE_OPEN_OWNER_NFSV4 is 3 with them and 1 without, nfs_client_id_t
 * grows by 32 bytes).  Any other config.h found first on the include path
 * drops them silently; only Ganesha's defines NFS_GANESHA. */
#ifndef NFS_GANESHA
#error "config.h is not NFS-Ganesha's generated one: a private header leaked onto the FSAL's include path"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fsal.h"
#include "fsal_api.h"
#include "fsal_types.h"
#include "FSAL/fsal_commonlib.h"

#include "mds.h"

#define PANDO_FSAL_NAME "PANDO"

/* The file handle on the wire (the opaque part Ganesha wraps with its own
 * header and the export id): big-endian, documented in ../README.md. */
#define PANDO_FH_VERSION 1
#define PANDO_FH_LEN 24

#define PANDO_SUPPORTED_ATTRS (ATTRS_POSIX | ATTR_CREATION | ATTR_GENERATION | ATTR4_FS_LOCATIONS)

struct pando_fsal_module {
	struct fsal_module fsal;
	struct fsal_obj_ops handle_ops;
	/* The ops opstats_ops.c times, as the files below set them. */
	struct fsal_obj_ops untimed_ops;
};

extern struct pando_fsal_module PandoFSAL;

/* An export: Ganesha's, and the engine it serves. */
struct pando_export {
	struct fsal_export export;
	struct pando_mds mds;
	struct glist_head node; /* in pando_exports */
};

struct pando_handle {
	struct fsal_obj_handle obj;
	struct pando_export *exp;
	uint64_t ino;
	uint32_t gen;
	uint8_t key[PANDO_FH_LEN];
	/* Regular files: Ganesha's share counters and the "global fd" used
	 * by I/O without an open state (NFSv3); no OS descriptor behind it. */
	struct fsal_share share;
	struct fsal_fd fd;
	/* One move to objects at a time per file in this process. */
	pthread_mutex_t move_lock;
	/* RS files: a row update reads, encodes and writes, so writes go one
	 * at a time, and reads (which may decode) not during one. */
	pthread_rwlock_t rows_lock;
	/* A junction (referral.c): one from its making to its removal. */
	bool junction;
	bool rows_marked;   /* the store marks the file (write_hole.c) */
	bool rows_unstable; /* an UNSTABLE row update since the last COMMIT */
};

/* Every export of this module, for dbus. */
extern struct glist_head pando_exports;
extern pthread_mutex_t pando_exports_lock;

/* handle.c */
fsal_status_t pando_status(int neg_errno);
struct pando_handle *pando_handle_new(struct pando_export *exp, const struct ns_attr *a);
void pando_attr_to_fsal(const struct pando_export *exp, const struct ns_attr *a,
			struct fsal_attrlist *out);
fsal_status_t pando_fill_attrs(struct pando_handle *h, const struct ns_attr *a,
			       struct fsal_attrlist *out);
void pando_fh_encode(const struct pando_export *exp, uint64_t ino, uint32_t gen, enum ns_type type,
		     uint8_t out[PANDO_FH_LEN]);
int pando_fh_decode(const struct pando_export *exp, const void *buf, size_t len, uint64_t *ino,
		    uint32_t *gen);
fsal_status_t pando_handle_from_ino(struct pando_export *exp, uint64_t ino, uint32_t gen,
				    struct fsal_obj_handle **out, struct fsal_attrlist *attrs);
void pando_new_from_attrs(const struct pando_handle *dir, const struct fsal_attrlist *in,
			  uint32_t default_mode, bool is_dir, struct ns_new *out);
fsal_status_t pando_apply_rest(struct pando_handle *h, struct fsal_attrlist *in, attrmask_t done,
			       struct fsal_attrlist *out);
fsal_status_t pando_setattr(struct pando_handle *h, struct fsal_attrlist *in, struct ns_attr *out);
void pando_handle_ops_init(struct fsal_obj_ops *ops);

/* access.c: permission on namespace changes (0, -EACCES, -EPERM, ...) */
void pando_caller_cred(struct ns_cred *c); /* op_ctx's, for the store */
int pando_may_change_dir(struct pando_handle *dir, struct ns_attr *out);
int pando_may_remove(struct pando_handle *dir, const char *name);
int pando_may_rename(struct pando_handle *from, const char *old_name, struct pando_handle *to,
		     const char *new_name);

/* layouts.c: whether a log line a client caused (an error it reported,
 * a malformed record, a refused request) may go out: at most 10 per 5 s
 * for all clients together. */
bool pando_client_may_log(void);

/* dir.c */
void pando_dir_ops_init(struct fsal_obj_ops *ops);

/* referral.c: a junction's fs_locations into out (0 or -errno) */
int pando_referral_attrs(struct pando_handle *h, struct fsal_attrlist *out);
void pando_referral_ops_init(struct fsal_obj_ops *ops);

/* setid.c: set-id bits and the writes the manager does not see */
nfsstat4 pando_setid_layoutget(struct pando_handle *h);
int pando_setid_mode_change(struct pando_handle *h, const struct ns_setattr *sa);

/* file.c */
void pando_file_ops_init(struct fsal_obj_ops *ops);

/* io.c */
void pando_io_ops_init(struct fsal_obj_ops *ops);
/* sparse.c: NFSv4.2 SEEK, ALLOCATE (NOTSUPP), DEALLOCATE */
void pando_sparse_ops_init(struct fsal_obj_ops *ops);
int pando_data_read(struct pando_handle *h, uint64_t off, struct iovec *iov, int iovcnt, size_t *n,
		    bool *eof);
int pando_data_write(struct pando_handle *h, uint64_t off, const struct iovec *iov, int iovcnt,
		     bool stable, size_t *n);

/* move.c: a file to objects, and a size change of an object-backed file
 * (objects first, then the store). */
int pando_move_to_objects(struct pando_handle *h);
int pando_truncate_objects(struct pando_handle *h, uint64_t size);

/* host.c: what the engine asks of Ganesha (struct pando_mds_host). */
extern const struct pando_mds_host pando_host;

/* write_hole.c: the RS write hole closed (the file says how).  begin/end
 * around a row update, under rows_lock held for writing. */
int pando_write_hole_begin(struct pando_handle *h, bool stable);
void pando_write_hole_end(struct pando_handle *h, int rc);
/* After a COMMIT made a file's unstable row updates durable. */
void pando_write_hole_committed(struct pando_handle *h);
/* An OSD restarted under unstable row updates, so a data unit may have
 * gone back while its parity did not: parity from the data, now. */
void pando_write_hole_resync_now(struct pando_handle *h);

/* layouterror.c: NFSv4.2 LAYOUTERROR, counted like LAYOUTRETURN's error body */
fsal_status_t pando_layouterror(struct fsal_obj_handle *o, layouttype4 type,
				const struct fsal_layouterror_arg *arg);

/* export.c */
fsal_status_t pando_create_export(struct fsal_module *fsal_hdl, void *parse_node,
				  struct config_error_type *err_type,
				  const struct fsal_up_vector *up_ops);

/* mds.c */
void pando_mds_export_ops_init(struct export_ops *ops);
void pando_mds_module_ops_init(struct fsal_ops *ops);
void pando_mds_ops_init(struct fsal_obj_ops *ops);

/* rquota_ops.c: get_quota and set_quota, for Ganesha's RQUOTA service */
void pando_rquota_ops_init(struct export_ops *ops);

/* dbus.c */
void pando_dbus_start(void);

/* reclaim.c: RecoveryBackend = fsal, the records of the group's NFSv4
 * clients in etcd; given once the manager is its group's active. */
int pando_reclaim_give(struct pando_mds *mds);

/* nsm_hosts.c: the group's NFSv3 hosts in etcd, given to the new
 * active's notify list and told by sm-notify; the recovery backend's
 * NSM hooks (patches/0146). */
int pando_nsm_hosts_open(struct pando_mds *mds);
bool pando_nsm_monitor(const char *mon_name);
void pando_nsm_unmonitor(const char *mon_name);
void pando_nsm_hosts_list(void);
void pando_nsm_notify(void);
void pando_nsm_hosts_end_grace(void);
void pando_nsm_hosts_close(void);

/* opstats_ops.c: every timed op of the fixed set (opstats.h) */
void pando_opstats_ops_init(struct fsal_obj_ops *ops, struct fsal_obj_ops *untimed);

static inline struct pando_handle *to_handle(struct fsal_obj_handle *o)
{
	return container_of(o, struct pando_handle, obj);
}

static inline struct pando_export *to_export(struct fsal_export *e)
{
	return container_of(e, struct pando_export, export);
}

/* The current request's export: Ganesha sets op_ctx for every call. */
static inline struct pando_export *cur_export(void)
{
	return to_export(op_ctx->fsal_export);
}

#endif
