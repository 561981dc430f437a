/* Rebuild: components of files put back to full redundancy (README
 * "Rebuild").  rebuild.c moves one file's components; rebuild_queue.c
 * finds the files (jobs from the mgr, stale records), keeps the tasks and
 * their claims in etcd, runs the workers and reports progress. */
#ifndef PANDO_REBUILD_H
#define PANDO_REBUILD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct pando_mds;

struct pando_rebuild_task {
	uint64_t ino;
	uint32_t osd;    /* whose components are rebuilt */
	uint64_t job;    /* 0: a stale component found here, no job */
	uint32_t target; /* 0: declustered placement; else onto this OSD */
};

#define REBUILD_LOAD_SLOTS 256

/* Shared by a manager's workers: the copy bandwidth (a virtual clock: each
 * copy reserves its bytes' time slot), the bytes each OSD was given to
 * write in this rebuild (targets are balanced on it), and the stop flag. */
struct pando_rebuild_pace {
	pthread_mutex_t lock;
	uint64_t bytes_per_s;  /* 0: unlimited */
	uint64_t next_free_ns; /* CLOCK_MONOTONIC */
	struct {
		uint32_t osd;
		uint64_t bytes;
	} load[REBUILD_LOAD_SLOTS];
	atomic_bool stop;
	atomic_uint_fast64_t bytes; /* copied (rebuild's copies only), for progress */
};

/* Waits until n more bytes fit the bandwidth. */
void pando_rebuild_pace(struct pando_rebuild_pace *p, uint64_t n);
/* The bytes given to osd so far; with add, gives it add more. */
uint64_t pando_rebuild_load(struct pando_rebuild_pace *p, uint32_t osd, uint64_t add);
/* Forgets the loads (a rebuild ended). */
void pando_rebuild_load_reset(struct pando_rebuild_pace *p);

/* Rebuilds the components task names, with buf (cap bytes) for the copy.
 *  0         done (also when nothing was left to do: the file is gone,
 *            inline, or no longer uses the OSD);
 *  -EAGAIN   not now (the file changed under the copy, its writers did
 *            not let go, its OSD is down but in): try again later;
 *  other     failed (no healthy copy, or an RS group with more than m
 *            lost: -EIO). */
int pando_rebuild_file(struct pando_mds *mds, const struct pando_rebuild_task *t,
		       struct pando_rebuild_pace *pace, void *buf, size_t cap);

#endif
