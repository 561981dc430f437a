/* libfsalpando.so: the Pando metadata manager as an FSAL for the stock
 * NFS-Ganesha 4.3.  The glue between Ganesha's FSAL API and the
 * Ganesha-free parts below it: the namespace store (../ns), the OSD connections
 * and gateway I/O (../osdio), the layout grant state machine (../grants),
 * the layout library (../../layout).
 *
 * One concern per file; README.md lists them all.  The main ones:
 * main.c (module, registration), export.c (export config and ops),
 * handle.c (handles, attributes, errors), dir.c (namespace ops), file.c
 * (open state, shares, locks), io.c (read, write, commit: inline data
 * and gateway I/O), objects.c (storage maps, moving files to objects,
 * truncating them), write_hole.c (the RS write hole), mds.c and layouts.c
 * (pNFS; layouts.c is Ganesha's side of ../grants), rebuild*.c,
 * scrub.c, transcode*.c (background work), reaper.c (background object
 * removal), dbus*.c (org.ganesha.nfsd.pando). */
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

#include "cluster_desc.h"
#include "ns_store.h"
#include "opstats.h"
#include "osd_conns.h"
#include "pando/storage_map.h"

#define PANDO_FSAL_NAME "PANDO"

/* The file handle on the wire (the opaque part Ganesha wraps with its own
 * header and the export id): big-endian, documented in ../README.md. */
#define PANDO_FH_VERSION 1
#define PANDO_FH_LEN 24

#define PANDO_SUPPORTED_ATTRS (ATTRS_POSIX | ATTR_CREATION | ATTR_GENERATION)

struct pando_fsal_module {
	struct fsal_module fsal;
	struct fsal_obj_ops handle_ops;
	/* The ops opstats_ops.c times, as the files below set them. */
	struct fsal_obj_ops untimed_ops;
};

extern struct pando_fsal_module PandoFSAL;

/* Per-export configuration (the EXPORT { FSAL { ... } } block). */
struct pando_export_config {
	char *db_path;
	char *cluster_path;
	uint32_t inline_max;
	uint32_t mirrors;
	uint32_t stripe_unit;
	uint32_t osd_timeout_ms;
	uint32_t stripe_width;          /* data columns of a new file's map */
	uint32_t recall_timeout_s;      /* then a holder is fenced */
	uint32_t capability_lifetime_s; /* a layout's handles work that long */
	char *striped_clients;          /* addresses given striped layouts ("*": all) */
	uint32_t object_pool;           /* maps made ahead for empty files (0: none) */
	bool pnfs;                      /* false: no layouts, every byte through the gateway */
	uint32_t db_reserve_mb;         /* free space kept on Db_Path's disk */
	char *etcd;                     /* endpoints of the cluster map ("": cluster.conf only) */
	char *etcd_ca;                  /* CA of etcd's certificates ("": the system's) */
	char *etcd_user;                /* etcd user ("": no authentication) */
	char *etcd_password_file;       /* its password, one line, mode 0600 or stricter */
	char *etcd_prefix;              /* of every key, default "/pando/" */
	char *mds_name;                 /* presence key mds/<name> ("": the host name) */
	uint32_t rebuild_parallel;      /* files rebuilt at once */
	uint32_t rebuild_bandwidth_mb;  /* MiB/s the rebuild copies (0: unlimited) */
	uint32_t scrub_interval_h;      /* hours between scrub passes (0: when asked) */
	uint32_t scrub_bandwidth_mb;    /* MiB/s a scrub reads (0: unlimited) */
	uint32_t transcode_interval_s;  /* seconds between transcoder passes (0: none) */
};

struct pando_reaper;
struct pando_placement_view;
struct pando_layouts_watcher;
struct pando_grants;
struct pando_view;
struct pando_mapwatch;
struct pando_presence;
struct pando_rebuild;
struct pando_scrub;
struct pando_transcode;

#define PANDO_MAX_INFLIGHT 256

struct pando_export {
	struct fsal_export export;
	struct pando_export_config cfg;
	struct ns_store *ns;
	uint8_t uuid[16];
	struct cluster_desc cluster;
	pthread_mutex_t key_lock; /* cluster.key, which reload_key replaces (key.c) */
	struct osd_conns *conns;
	struct pando_reaper *reaper;
	/* The layouts' state machine (../grants), with Ganesha's ops
	 * (layouts.c): every grant, recall and freeze goes through it. */
	struct pando_grants *grants;
	struct pando_layouts_watcher *layout_watcher; /* ticks grants, probes OSDs */
	struct pando_object_pool *object_pool;
	/* Bumped when an OSD restarts under unstable writes, so clients
	 * resend what they have not committed. */
	atomic_uint_fast64_t verf_epoch;
	/* The files written UNSTABLE since their last COMMIT, with the
	 * verf_epoch of their first such write (../osdio/unstable.h). */
	struct unstable_files *unstable;
	/* The start-time parity recompute (write_hole.c) is done: until then an RS
	 * row may decode wrong, so RS rebuilds wait for it. */
	atomic_bool rows_resynced;
	/* Bytes the manager itself moved for clients (gateway I/O, inline
	 * data): with pNFS these stay near zero. */
	atomic_uint_fast64_t mds_read_bytes;
	atomic_uint_fast64_t mds_write_bytes;
	uint64_t boot_ns;
	/* The cluster now (view.h): published views, applied one at a time. */
	_Atomic(struct pando_view *) view;
	pthread_mutex_t view_lock;
	struct pando_mapwatch *mapwatch; /* NULL without Etcd */
	struct pando_presence *presence; /* NULL without Etcd */
	struct pando_rebuild *rebuild;   /* NULL without Etcd */
	struct pando_scrub *scrub;
	struct pando_transcode *transcode; /* NULL with Transcode_Interval 0 */
	struct pando_opstats *opstats;
	/* statfs from the OSDs, cached a few seconds (export.c). */
	pthread_mutex_t space_lock;
	time_t space_at;
	uint64_t space_total;
	uint64_t space_avail;
	/* Files moving to objects right now (objects.c). */
	pthread_mutex_t inflight_lock;
	pthread_cond_t inflight_cond;
	int ninflight;
	struct pando_move {
		uint64_t ino;
		uint64_t intent; /* 0 until the move's intent exists */
	} inflight[PANDO_MAX_INFLIGHT];
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

/* dir.c */
void pando_dir_ops_init(struct fsal_obj_ops *ops);

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

/* objects.c */
int pando_map_load(struct pando_export *exp, uint64_t ino, struct pando_storage_map **out);
/* A new map placed for seed (new object ids), and its encoded form. */
int pando_map_new_placed(struct pando_export *exp, uint64_t seed, struct pando_storage_map **out);
/* A map for file ino as req asks (raid, copies, data, parity, stripe unit,
 * groups), placed as pando_map_new_placed does; seed and ids filled in. */
struct pando_layout_request;
int pando_map_place(struct pando_export *exp, uint64_t ino, struct pando_layout_request *req,
		    struct pando_storage_map **out);
/* The policy file ino was made with; false for none (or unusable). */
struct pando_policy;
bool pando_file_policy(struct pando_export *exp, uint64_t ino, struct pando_policy *p);
int pando_map_blob(const struct pando_storage_map *map, uint8_t **blob, size_t *len);
/* Moves an inline file to new objects (the ns_map_set dance). */
int pando_move_to_objects(struct pando_handle *h);
struct objio;
/* Gateway I/O on file ino: records failing components, skips stale ones. */
int pando_objio_init(struct pando_export *exp, uint64_t ino, struct objio *io);
/* pando_objio_init and the file's map (free it with pando_map_free). */
int pando_objects_open(struct pando_export *exp, uint64_t ino, struct objio *io,
		       struct pando_storage_map **map);
/* The OSDs holding stale components of file ino (at most 16). */
int pando_stale_osds(struct pando_export *exp, uint64_t ino, uint32_t *ids, size_t *n);
/* Size change of an object-backed file: objects first, then the store. */
int pando_truncate_objects(struct pando_handle *h, uint64_t size);
int pando_objects_flush(struct pando_export *exp, uint64_t ino);
/* How far every current mirror of the file's objects reaches (bytes). */
int pando_objects_reach(struct pando_export *exp, uint64_t ino, uint64_t *len);
void pando_note_verf_change(struct pando_export *exp);

/* fence.c: capability versions of a file's objects.  The version on the
 * first component that answers. */
int pando_objects_cap_version(struct pando_export *exp, const struct pando_storage_map *map,
			      uint32_t *ver);
/* Moves every component of file ino past the highest version any of
 * them has (at least known + 1), so no handle handed out before works on
 * any: *next is the new version, *failed the components not reached.
 * Those are recorded stale, durably, when the file can be read without
 * them (a fence that did not reach a component is no fence of it); when
 * it cannot, nothing is recorded and the answer is -EHOSTUNREACH: the
 * fence is still to be made.  0, or -errno (a record not written). */
int pando_objects_fence(struct pando_export *exp, uint64_t ino, const struct pando_storage_map *map,
			uint32_t known, uint32_t *next, uint32_t *failed);
/* Moves every component of file ino past known and past any version one
 * has, for write handles only (read handles handed out stay good): *next
 * is the new version.  Components not reached are recorded stale as a
 * fence records them; -EHOSTUNREACH when the file cannot lose them. */
int pando_objects_revoke_writers(struct pando_export *exp, uint64_t ino,
				 const struct pando_storage_map *map, uint32_t known,
				 uint32_t *next);

/* settle.c: the size of a pNFS-written file from its objects.  Grows the
 * size to what every current mirror holds unless the file changed
 * meanwhile (*grew, and the attributes before, in *before); 0 when the
 * size is right, the file is gone or inline. */
int pando_settle_size(struct pando_export *exp, uint64_t ino, const char *why, bool *grew,
		      struct ns_attr *before);
/* The same off the caller's thread (a write layout ended without
 * LAYOUTCOMMIT); tells pando_grants_settled when done. */
void pando_settle_size_async(struct pando_export *exp, uint64_t ino);

/* write_hole.c: the RS write hole closed (the file says how).  begin/end
 * around a row update, under rows_lock held for writing. */
int pando_write_hole_begin(struct pando_handle *h, bool stable);
void pando_write_hole_end(struct pando_handle *h, int rc);
/* After a COMMIT made a file's unstable row updates durable. */
void pando_write_hole_committed(struct pando_handle *h);
/* An OSD restarted under unstable row updates, so a data unit may have
 * gone back while its parity did not: parity from the data, now. */
void pando_write_hole_resync_now(struct pando_handle *h);
/* At start: the parity of every RS file a stopped manager was updating. */
void pando_restart_resync(struct pando_export *exp);

/* restart.c: the files that had write layouts out when the manager
 * stopped (crash or not): fenced and settled before clients are served. */
void pando_restart_settle(struct pando_export *exp);
/* Inodes listed into a growing array (an ns_ino_fn); free ino after. */
struct pando_inos {
	uint64_t *ino;
	size_t n, cap;
};
int pando_inos_collect(void *arg, uint64_t ino);
bool pando_intent_orphaned(struct pando_export *exp, uint64_t ino, uint64_t id);
/* objects.c: a file making new objects under an intent (a move to
 * objects, a rebuild): the reaper leaves them alone until _del. */
void pando_inflight_add(struct pando_export *exp, uint64_t ino);
void pando_inflight_intent(struct pando_export *exp, uint64_t ino, uint64_t intent);
void pando_inflight_del(struct pando_export *exp, uint64_t ino);

/* layouterror.c: NFSv4.2 LAYOUTERROR, counted like LAYOUTRETURN's error body */
fsal_status_t pando_layouterror(struct fsal_obj_handle *o, layouttype4 type,
				const struct fsal_layouterror_arg *arg);

/* object_pool.c: objects made ahead for empty files moving to objects */
struct pando_object_pool;
int pando_object_pool_start(struct pando_export *exp, uint32_t size,
			    struct pando_object_pool **out);
void pando_object_pool_stop(struct pando_object_pool *p);
bool pando_object_pool_take(struct pando_object_pool *p, const uint8_t **blob, size_t *len,
			    uint64_t *intent);
void pando_object_pool_done(struct pando_object_pool *p, uint64_t intent, uint64_t ino,
			    bool claimed);
bool pando_object_pool_owns(struct pando_object_pool *p, uint64_t id);

/* reaper.c */
int pando_reaper_start(struct pando_export *exp, struct pando_reaper **out);
void pando_reaper_kick(struct pando_reaper *r);
void pando_reaper_stop(struct pando_reaper *r);
void pando_reaper_stats(struct pando_reaper *r, uint64_t *removed, uint64_t *failed);

/* export.c */
fsal_status_t pando_create_export(struct fsal_module *fsal_hdl, void *parse_node,
				  struct config_error_type *err_type,
				  const struct fsal_up_vector *up_ops);

/* key.c: the cluster key the manager mints capabilities and signs
 * control calls with.  A reload reads the key file again, so a rotation
 * (osd-target/README.md, "Cluster key file") needs no restart; a file
 * that cannot be read, or that gives the key in use another secret,
 * changes nothing.  0 or -errno, with what happened in msg. */
void pando_key_get(struct pando_export *exp, struct cluster_key *out);
int pando_key_reload(struct pando_export *exp, char *msg, size_t cap);

/* mds.c */
void pando_mds_export_ops_init(struct export_ops *ops);
void pando_mds_module_ops_init(struct fsal_ops *ops);
void pando_mds_ops_init(struct fsal_obj_ops *ops);

/* dbus.c */
void pando_dbus_start(void);

/* mapwatch.c: the cluster map in etcd (Etcd set): the copy kept beside
 * the store, then etcd, read at start; then every 500 ms. */
int pando_mapwatch_start(struct pando_export *exp, struct pando_mapwatch **out);
/* Starts the polling thread (after the export's layouts exist). */
int pando_mapwatch_run(struct pando_mapwatch *w);
void pando_mapwatch_stop(struct pando_mapwatch *w);
/* The map's JSON as applied last ("" before any); malloc'd. */
char *pando_mapwatch_json(struct pando_mapwatch *w);

/* etcd_config.c: the options of every etcd client of the export, from
 * its Etcd* items (timeout_ms 0: the client's default); why a client for
 * what could not be made of them, logged naming the item at fault; a
 * client made with them, its failure logged so. */
struct etcd_options;
struct etcd_client;
void pando_etcd_options(const struct pando_export *exp, int timeout_ms, struct etcd_options *o);
void pando_etcd_new_failed(const struct pando_export *exp, const char *what, int rc);
int pando_etcd_client_new(const struct pando_export *exp, int timeout_ms, const char *what,
			  struct etcd_client **out);

/* presence.c: mds/<Mds_Name> in etcd with the manager's statistics. */
int pando_presence_start(struct pando_export *exp, struct pando_presence **out);
void pando_presence_stop(struct pando_presence *p);
void pando_presence_kick(struct pando_presence *p);
/* The name it registers under (Mds_Name, or the host name). */
const char *pando_presence_name(const struct pando_presence *p);

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
