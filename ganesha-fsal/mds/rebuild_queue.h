/* The rebuild service of one engine (rebuild_queue.c): jobs read from
 * etcd, tasks put there by the scans (rebuild_scan.c), claimed under this
 * manager's lease and run by its workers (rebuild.c). */
#ifndef PANDO_REBUILD_QUEUE_H
#define PANDO_REBUILD_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "progress_put.h"
#include "rebuild.h"

struct etcd_client;

#define REBUILD_MAX_JOBS 64
#define REBUILD_QUEUE 256

struct rebuild_job {
	uint64_t id;
	uint32_t osd;
	uint32_t target;
	bool scanned;
	bool seen;     /* still in etcd at the last read */
	uint64_t open; /* its tasks not finished here */
};

struct rebuild_item {
	struct pando_rebuild_task t;
	uint64_t bytes;
	char key[384]; /* the task key */
	int64_t rev;   /* its mod_revision when claimed */
};

/* An ino not to claim again before `until` (a retry later, a failure). */
struct rebuild_hold {
	uint64_t ino;
	time_t until;
};

struct pando_rebuild {
	struct pando_mds *mds;
	char *prefix;              /* Etcd_Prefix */
	char *name;                /* Mds_Name */
	struct etcd_client *etcd;  /* the dispatcher's */
	struct etcd_client *wetcd; /* the workers' (one call at a time) */
	int64_t lease;
	struct pando_rebuild_pace pace;
	uint32_t parallel;
	pthread_t dispatcher;
	pthread_t *workers;
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t cond;
	struct rebuild_job jobs[REBUILD_MAX_JOBS];
	size_t njobs;
	struct rebuild_item queue[REBUILD_QUEUE];
	size_t qhead, qlen;
	uint64_t busy[REBUILD_QUEUE]; /* inos claimed here: queued or running */
	size_t nbusy;
	struct rebuild_hold hold[REBUILD_QUEUE];
	size_t nhold;
	char state[16];
	uint64_t files_total, files_done, files_failed, bytes_total, bytes_base;
	double started;
	double rate_bps;
	uint64_t rate_bytes[8]; /* pace.bytes, one sample a second */
	size_t rate_n;
	struct pando_progress_key progress; /* the dispatcher's */
};

int pando_rebuild_put_task(struct pando_rebuild *rq, struct etcd_client *etcd,
			   const struct pando_rebuild_task *t, uint32_t healthy, uint64_t bytes);
int pando_rebuild_scan_job(struct pando_rebuild *rq, struct etcd_client *etcd,
			   const struct rebuild_job *job, uint64_t *files, uint64_t *bytes);
int pando_rebuild_scan_stale(struct pando_rebuild *rq, struct etcd_client *etcd, uint64_t *files);

/* Neither queued, running nor held back here: a scan may put its task. */
bool pando_rebuild_idle_for(struct pando_rebuild *rq, uint64_t ino);

/* Started with the engine when Etcd is set; NULL otherwise. */
int pando_rebuild_start(struct pando_mds *mds, struct pando_rebuild **out);
void pando_rebuild_stop(struct pando_rebuild *rq);
/* The progress JSON (mgr/README.md), malloc'd. */
char *pando_rebuild_progress(struct pando_rebuild *rq);

#endif
