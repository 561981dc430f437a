/* pando_mds: the metadata manager's engine, with no Ganesha types.  One
 * context (struct pando_mds) holds the namespace store, the OSD
 * connections, the grants, the cluster view, the configuration and the
 * services that run on them (README.md lists them); the FSAL (../fsal)
 * adapts Ganesha's API to it, and is its host: what only the NFS server
 * can do (struct pando_mds_host). */
#ifndef PANDO_MDS_H
#define PANDO_MDS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cluster_conf.h"
#include "mds_alloc.h"
#include "mds_log.h"
#include "ns_store.h"
#include "opstats.h"
#include "osd_conns.h"
#include "pando/storage_map.h"

/* The configuration (the export's FSAL block, ../fsal/export.c). */
struct pando_mds_config {
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
	char *mds_group;                /* the manager group it is in ("": none, no journal) */
	char *nsm_source;               /* sm-notify's -v for a group's active ("": Bind_Addr) */
	char *service_address_command;  /* moves the address clients mount (service_address.h) */
	uint32_t snapshot_interval_s;   /* a group's active: seconds between snapshots (0: asked) */
	uint32_t rebuild_parallel;      /* files rebuilt at once */
	uint32_t rebuild_bandwidth_mb;  /* MiB/s the rebuild copies (0: unlimited) */
	uint32_t scrub_interval_h;      /* hours between scrub passes (0: when asked) */
	uint32_t scrub_bandwidth_mb;    /* MiB/s a scrub reads (0: unlimited) */
	uint32_t transcode_interval_s;  /* seconds between transcoder passes (0: none) */
};

struct pando_recall;

/* What the engine asks of the NFS server that hosts it. */
struct pando_mds;
struct pando_mds_host {
	/* Sends the layout recall r (CB_LAYOUTRECALL) without waiting. */
	void (*recall)(struct pando_mds *mds, const struct pando_recall *r);
	/* Runs fn(job) on one of the server's worker threads; -errno when it
	 * cannot (the server is stopping), and fn is not called. */
	int (*submit)(struct pando_mds *mds, void (*fn)(void *job), void *job);
	/* File (ino, gen)'s attributes changed behind the server's cache. */
	void (*invalidate)(struct pando_mds *mds, uint64_t ino, uint32_t gen);
	/* Stops the server as SIGTERM does (it stops serving, then closes
	 * the engine), without waiting: a group's planned switchover. */
	void (*shutdown)(struct pando_mds *mds);
};

struct pando_osd_watcher;
struct pando_reaper;
struct pando_placement_view;
struct pando_grants;
struct pando_view;
struct pando_mapwatch;
struct pando_presence;
struct pando_rebuild;
struct pando_scrub;
struct pando_group;
struct pando_transcode;

#define PANDO_MAX_INFLIGHT 256

struct pando_mds {
	struct pando_mds_config cfg;
	const struct pando_mds_host *host;
	struct ns_store *ns;
	uint8_t uuid[16];
	struct cluster_conf conf; /* cluster.conf: the key and the map's seed */
	pthread_mutex_t key_lock; /* cluster.key, which reload_key replaces (key.c) */
	struct osd_conns *conns;
	struct pando_reaper *reaper;
	/* The layouts' state machine (../grants), with the ops of
	 * grants_ops.c: every grant, recall and freeze goes through it. */
	struct pando_grants *grants;
	struct pando_osd_watcher *osd_watcher; /* ticks grants, probes OSDs */
	struct pando_object_pool *object_pool;
	/* Bumped when an OSD restarts under unstable writes, so clients
	 * resend what they have not committed. */
	atomic_uint_fast64_t verf_epoch;
	/* The files written UNSTABLE since their last COMMIT, with the
	 * verf_epoch of their first such write (../osdio/unstable.h). */
	struct unstable_files *unstable;
	/* The start-time parity recompute (write_hole.c) is done: until then an RS
	 * row may decode wrong, so RS rebuilds wait for it. */
	atomic_bool parity_resynced;
	/* Bytes the manager itself moved for clients (gateway I/O, inline
	 * data): with pNFS these stay near zero. */
	atomic_uint_fast64_t mds_read_bytes;
	atomic_uint_fast64_t mds_write_bytes;
	uint64_t boot_ns;
	/* HOST:PORT clients mount, for presence ("" host: the name). */
	char nfs_host[48];
	uint16_t nfs_port;
	/* The cluster now (view.h): published views, applied one at a time. */
	_Atomic(struct pando_view *) view;
	pthread_mutex_t view_lock;
	struct pando_mapwatch *mapwatch; /* NULL without Etcd */
	struct pando_presence *presence; /* NULL without Etcd */
	struct pando_rebuild *rebuild;   /* NULL without Etcd */
	struct pando_group *group;       /* NULL without Mds_Group */
	struct pando_scrub *scrub;
	struct pando_transcode *transcode; /* NULL with Transcode_Interval 0 */
	struct pando_opstats *opstats;
	/* statfs from the OSDs, cached a few seconds (mds.c). */
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
};

/* mds.c: the engine's life.  Opens the store and the OSDs and starts
 * every service, in order; cfg is filled and host set, and they outlive
 * the engine.  0 or -errno, logged; pando_mds_close undoes what was done
 * either way. */
int pando_mds_open(struct pando_mds *mds, const struct pando_mds_host *host);
/* Opens the store at Db_Path with journal (NULL: none), formatting a new
 * one when Db_Path does not exist yet or is an empty directory.  A
 * standby's store is opened nosync: the journal holds what it applies,
 * and the standby syncs once per pass over it (group.c, follow_pass). */
int pando_store_open(struct pando_mds *mds, const struct ns_journal *journal, bool standby);
/* Before the first client is served: fences and settles the files a
 * stopped manager had write layouts out on, and recomputes the parity
 * of the RS files it was updating. */
void pando_mds_recover(struct pando_mds *mds);
void pando_mds_close(struct pando_mds *mds);
/* Bytes of the OSDs in the map, divided among the mirrors. */
void pando_mds_space(struct pando_mds *mds, uint64_t *total, uint64_t *avail);

/* grants_ops.c: the grants engine, its ops this engine's, for
 * mds->grants.  A write segment's file is recorded durably in the store
 * before its grant (ns_wlayout_add: a crash of the manager leaves its
 * size to be settled at the next start, restart.c); a write segment that
 * ends with no LAYOUTCOMMIT of its file since its grant has the file's
 * size checked against the objects (settle.c). */
int pando_mds_grants_new(struct pando_mds *mds, struct pando_grants **out);
/* The watcher: pando_grants_tick each second, and a probe of each OSD;
 * the layouts of files on one that stops answering are recalled. */
int pando_osd_watcher_start(struct pando_mds *mds, struct pando_osd_watcher **out);
void pando_osd_watcher_stop(struct pando_osd_watcher *w);

/* settle.c: the size of a pNFS-written file from its objects.  Grows the
 * size to what every current mirror holds unless the file changed
 * meanwhile (*grew, and the attributes before, in *before); 0 when the
 * size is right, the file is gone or inline. */
int pando_settle_size(struct pando_mds *mds, uint64_t ino, const char *why, bool *grew,
		      struct ns_attr *before);
/* The same on a host worker; tells pando_grants_settled when done. */
void pando_settle_size_async(struct pando_mds *mds, uint64_t ino);

/* quota.c: the end the file may grow to under the quotas (ns_quota_room:
 * the store's, its user's and its group's): its size and the least room
 * they leave; UINT64_MAX without a quota on bytes. */
int pando_quota_end(struct pando_mds *mds, const struct ns_attr *a, uint64_t *end);

/* objects.c */
/* Moves an inline file to new objects (the ns_map_set dance, or a
 * claim from the object pool for an empty file); one caller per file
 * at a time. */
int pando_objects_move(struct pando_mds *mds, uint64_t ino);
int pando_map_load(struct pando_mds *mds, uint64_t ino, struct pando_storage_map **out);
/* A new map placed for seed (new object ids), and its encoded form. */
int pando_map_new_placed(struct pando_mds *mds, uint64_t seed, struct pando_storage_map **out);
/* A map for file ino as req asks (raid, copies, data, parity, stripe unit,
 * groups), placed in pool ("": any OSD) as pando_map_new_placed does; seed
 * and ids filled in.  -ENOSPC when no OSD of the pool takes components. */
struct pando_layout_request;
int pando_map_place(struct pando_mds *mds, uint64_t ino, const char *pool,
		    struct pando_layout_request *req, struct pando_storage_map **out);
/* The policy file ino was made with; false for none (or unusable). */
struct pando_policy;
bool pando_file_policy(struct pando_mds *mds, uint64_t ino, struct pando_policy *p);
int pando_map_blob(const struct pando_storage_map *map, uint8_t **blob, size_t *len);
struct objio;
/* Gateway I/O on file ino: records failing components, skips stale ones. */
int pando_objio_init(struct pando_mds *mds, uint64_t ino, struct objio *io);
/* pando_objio_init and the file's map (free it with pando_map_free). */
int pando_objects_open(struct pando_mds *mds, uint64_t ino, struct objio *io,
		       struct pando_storage_map **map);
/* Whether a component of file ino is on OSD osd_id (false: no map). */
bool pando_map_uses_osd(struct pando_mds *mds, uint64_t ino, uint32_t osd_id);
/* The OSDs holding stale components of file ino (at most 16). */
int pando_stale_osds(struct pando_mds *mds, uint64_t ino, uint32_t *ids, size_t *n);
int pando_objects_flush(struct pando_mds *mds, uint64_t ino);
/* How far every current mirror of the file's objects reaches (bytes). */
int pando_objects_reach(struct pando_mds *mds, uint64_t ino, uint64_t *len);
void pando_note_verf_change(struct pando_mds *mds);

/* fence.c: capability versions of a file's objects.  The version on the
 * first component that answers. */
int pando_objects_cap_version(struct pando_mds *mds, const struct pando_storage_map *map,
			      uint32_t *ver);
/* Moves every component of file ino past the highest version any of
 * them has (at least known + 1), so no handle handed out before works on
 * any: *next is the new version, *failed the components not reached.
 * Those are recorded stale, durably, when the file can be read without
 * them (a fence that did not reach a component is no fence of it); when
 * it cannot, nothing is recorded and the answer is -EHOSTUNREACH: the
 * fence is still to be made.  0, or -errno (a record not written). */
int pando_objects_fence(struct pando_mds *mds, uint64_t ino, const struct pando_storage_map *map,
			uint32_t known, uint32_t *next, uint32_t *failed);
/* Moves every component of file ino past known and past any version one
 * has, for write handles only (read handles handed out stay good): *next
 * is the new version.  Components not reached are recorded stale as a
 * fence records them; -EHOSTUNREACH when the file cannot lose them. */
int pando_objects_revoke_writers(struct pando_mds *mds, uint64_t ino,
				 const struct pando_storage_map *map, uint32_t known,
				 uint32_t *next);

/* parity_resync.c: the RS write hole's repair.  A marked file's parity
 * from its data, and the mark gone; 0 or -errno (the mark stays). */
int pando_write_hole_resync(struct pando_mds *mds, uint64_t ino);
/* At start: the parity of every RS file a stopped manager was updating. */
void pando_restart_resync(struct pando_mds *mds);

/* restart.c: the files that had write layouts out when the manager
 * stopped (crash or not): fenced and settled before clients are served. */
void pando_restart_settle(struct pando_mds *mds);
/* Inodes listed into a growing array (an ns_ino_fn); free ino after. */
struct pando_inos {
	uint64_t *ino;
	size_t n, cap;
};
int pando_inos_collect(void *arg, uint64_t ino);
bool pando_intent_orphaned(struct pando_mds *mds, uint64_t ino, uint64_t id);
/* objects.c: a file making new objects under an intent (a move to
 * objects, a rebuild): the reaper leaves them alone until _del. */
void pando_inflight_add(struct pando_mds *mds, uint64_t ino);
void pando_inflight_intent(struct pando_mds *mds, uint64_t ino, uint64_t intent);
void pando_inflight_del(struct pando_mds *mds, uint64_t ino);

/* object_pool.c: objects made ahead for empty files moving to objects */
struct pando_object_pool;
int pando_object_pool_start(struct pando_mds *mds, uint32_t size, struct pando_object_pool **out);
void pando_object_pool_stop(struct pando_object_pool *p);
bool pando_object_pool_take(struct pando_object_pool *p, const uint8_t **blob, size_t *len,
			    uint64_t *intent);
void pando_object_pool_done(struct pando_object_pool *p, uint64_t intent, uint64_t ino,
			    bool claimed);
bool pando_object_pool_owns(struct pando_object_pool *p, uint64_t id);

/* reaper.c: removes the objects nothing names any more. */
int pando_reaper_start(struct pando_mds *mds, struct pando_reaper **out);
void pando_reaper_kick(struct pando_reaper *r);
void pando_reaper_stop(struct pando_reaper *r);
void pando_reaper_stats(struct pando_reaper *r, uint64_t *removed, uint64_t *failed);

/* key.c: the cluster key the manager mints capabilities and signs
 * control calls with.  A reload reads the key file again, so a rotation
 * (osd-target/README.md, "Cluster key file") needs no restart; a file
 * that cannot be read, or that gives the key in use another secret,
 * changes nothing.  0 or -errno, with what happened in msg. */
void pando_key_get(struct pando_mds *mds, struct cluster_key *out);
int pando_key_reload(struct pando_mds *mds, char *msg, size_t cap);

/* mapwatch.c: the cluster map in etcd (Etcd set): the copy kept beside
 * the store, then etcd, read at start; then every 500 ms. */
int pando_mapwatch_start(struct pando_mds *mds, struct pando_mapwatch **out);
/* Starts the polling thread (after the engine's grants exist). */
int pando_mapwatch_run(struct pando_mapwatch *w);
void pando_mapwatch_stop(struct pando_mapwatch *w);
/* The map's JSON as applied last ("" before any); malloc'd. */
char *pando_mapwatch_json(struct pando_mapwatch *w);

/* etcd_config.c: the options of every etcd client of the engine, from
 * its Etcd* items (timeout_ms 0: the client's default); why a client for
 * what could not be made of them, logged naming the item at fault; a
 * client made with them, its failure logged so. */
struct etcd_options;
struct etcd_client;
void pando_etcd_options(const struct pando_mds *mds, int timeout_ms, struct etcd_options *o);
void pando_etcd_new_failed(const struct pando_mds *mds, const char *what, int rc);
int pando_etcd_client_new(const struct pando_mds *mds, int timeout_ms, const char *what,
			  struct etcd_client **out);
/* The manager's name in etcd: Mds_Name, or the host name. */
void pando_mds_name(const struct pando_mds *mds, char *buf, size_t cap);

/* sync_dir.c: the folder path is in synced, so that a rename or create
 * of path is durable.  0 or -errno. */
int pando_sync_dir_of(const char *path);

/* group.c: a manager group (Mds_Group).  Join: opens the store (from
 * the group's snapshot when it has none, group_snapshot.h), then
 * campaigns, following the group's journal into the store as a standby
 * until this manager leads; then opens the journal in its term and the
 * store with it.  0 as the active; -EINTR when SIGTERM or SIGINT came
 * first; -errno, logged.  Free (after the store is closed): closes the
 * journal and resigns. */
int pando_group_join(struct pando_mds *mds);
/* Stops what the active does with the store and the OSDs for others
 * (snapshots for new standbys): first of all in a close. */
void pando_group_quiesce(struct pando_mds *mds);
void pando_group_free(struct pando_mds *mds);
/* ns_snapshot of the store into dir (a new standby's start), which the
 * journal is not trimmed past for an hour. */
int pando_group_snapshot(struct pando_mds *mds, const char *dir, uint64_t *seq);
/* The group's reclaim records (reclaim.h) of kind "clients" (NFSv4) or
 * "nsm" (NFSv3 hosts) in the active's term; -ENOENT when this manager is
 * not a group's active. */
struct pando_reclaim;
int pando_group_reclaim_open(struct pando_mds *mds, const char *kind, struct pando_reclaim **out);

/* presence.c: mds/<Mds_Name> in etcd with the manager's statistics. */
int pando_presence_start(struct pando_mds *mds, struct pando_presence **out);
void pando_presence_stop(struct pando_presence *p);
void pando_presence_kick(struct pando_presence *p);
/* The name it registers under (Mds_Name, or the host name). */
const char *pando_presence_name(const struct pando_presence *p);

#endif
