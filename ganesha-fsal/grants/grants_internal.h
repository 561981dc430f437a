/* What the files of pando_grants share: the per-file records and the
 * table they live in.  Everything here is under g->lock. */
#ifndef PANDO_GRANTS_INTERNAL_H
#define PANDO_GRANTS_INTERNAL_H

#include <inttypes.h>
#include <pthread.h>

#include "grants.h"

#define GRANTS_BUCKETS 1024

struct gfile {
	uint64_t ino;
	uint32_t gen;
	uint32_t cap_version; /* 0: not read from the OSDs yet */
	uint64_t recalls;     /* moves on every recall */
	bool recalling;       /* a recall runs until deadline */
	uint32_t fence_due;   /* write segments revoked, not fenced yet */
	uint32_t revoking;    /* write-handle revocations running */
	uint64_t deadline;
	uint64_t commits;   /* LAYOUTCOMMITs while it had layouts */
	bool wrecorded;     /* its write-layout record is durable */
	uint32_t marking;   /* records being written, lock dropped */
	bool keep_record;   /* a settle failed: the next start settles */
	uint32_t unsettled; /* size checks queued, not done */
	/* Rebuild: while watched, every write counts in writes; while
	 * frozen, no segment is granted and no gateway write starts. */
	uint32_t watched;
	uint32_t frozen;     /* freezes held (a rebuild, a scrub) */
	bool wanted;         /* someone was refused while frozen */
	uint32_t gw_writers; /* gateway writes running now */
	uint64_t writes;     /* write grants and gateway writes */
	struct pando_grant *segs;
	struct gfile *next;
};

struct pando_grants {
	struct pando_grants_ops ops;
	uint32_t timeout_s;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a segment, a writer or a freeze ended */
	struct gfile *bucket[GRANTS_BUCKETS];
	struct pando_layout_stats st;
};

/* The file's record; created when asked (NULL if out of memory). */
struct gfile *gfile_get(struct pando_grants *g, uint64_t ino, bool create);
/* Frees the record once nothing keeps it. */
void gfile_put(struct pando_grants *g, struct gfile *f);
bool gfile_has_writers(const struct gfile *f);
/* Deletes the write-layout record once no write segment or size check
 * needs it. */
void gfile_forget_writer(struct pando_grants *g, struct gfile *f);
/* A recalled segment neither returned nor fenced yet. */
bool gfile_recall_pending(const struct gfile *f);
void grants_log(struct pando_grants *g, enum pando_grants_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Waits on g->cond until done(g, ino) or max_ms pass; 0 or -ETIMEDOUT. */
int grants_wait(struct pando_grants *g, uint64_t ino, bool (*done)(struct gfile *f),
		uint32_t max_ms);

#endif
