/* An engine for the unit tests: real pando-osd processes
 * (../../osdio/tests/osd_fixture.h), a cluster.conf naming them, a new
 * namespace store, and the engine opened on them with a fake host that
 * records what the engine asked of it.  Everything lives in the OSD
 * fixture's directory, removed when every check passed. */
#ifndef PANDO_MDS_FIXTURE_H
#define PANDO_MDS_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "grants.h"
#include "mds.h"
#include "osd_fixture.h"

#define MDS_FIXTURE_LOG_LINES 256

/* What the engine asked of its host. */
struct fake_host {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned recalls;
	uint64_t last_recall_ino;
	unsigned jobs_run;
	bool refuse_jobs; /* submit answers -ESHUTDOWN, as a stopping server */
	unsigned invalidations;
	uint64_t last_invalidated_ino;
};

struct mds_fixture {
	struct osd_fixture osds;
	char db_path[128];
	char cluster_path[128];
	char empty[1];
	char prefix[16];
	struct fake_host host;
	struct pando_mds mds;
};

/* The configuration the export block gives by default (../../fsal/export.c),
 * over nosds OSDs, without etcd; tune, when set, changes it before the
 * engine opens.  0, or -1 with the reason on stderr; either way
 * mds_fixture_finish ends it. */
int mds_fixture_start(struct mds_fixture *f, int nosds, void (*tune)(struct pando_mds_config *cfg));
/* Closes the engine and opens it again on the same store and OSDs, as a
 * manager that restarts (then pando_mds_recover is the caller's). */
int mds_fixture_reopen(struct mds_fixture *f);
/* Closes the engine, stops the OSDs, keeps the directory if keep (pass
 * check_failures). */
void mds_fixture_finish(struct mds_fixture *f, int keep);

/* Waits up to ms for the fake host's counter *what to reach n. */
bool fake_host_wait(struct fake_host *h, const unsigned *what, unsigned n, int ms);

/* How many of the engine's log lines since the last clear contain needle
 * (lines are "LEVEL func: message"; MDS_FIXTURE_VERBOSE=1 prints them). */
int mds_fixture_log_find(const char *needle);
void mds_fixture_log_clear(void);
/* Where the first such line is among them (0: the first since the clear),
 * -1 when none: the order the engine did things in. */
int mds_fixture_log_first(const char *needle);

/* A new view at epoch: the seed's OSDs, with OSD out (0: none) marked
 * out.  What pando_view_apply returns. */
int mds_fixture_mark_out(struct mds_fixture *f, uint64_t epoch, uint32_t out);
/* Whether the copies of a journal map (JOURNAL_COPIES mirrors) hold the
 * same bytes: the same length, not 0, and the same CRC extent by extent
 * as their OSDs keep them.  1 if so, 0 if not, -errno. */
int mds_fixture_copies_same(struct mds_fixture *f, const struct pando_storage_map *map);

/* Objects in the journal's space (JOURNAL_OBJECT_BIT) on the OSDs, every
 * copy counted; -1 when an OSD does not answer. */
long mds_fixture_journal_objects(struct mds_fixture *f);

/* A regular file made in the root directory of the store. */
int mds_fixture_create(struct mds_fixture *f, const char *name, struct ns_attr *out);

/* A client's layout of file ino (client 7 at 10.0.0.7), as LAYOUTGET asks
 * the grants for it; what pando_grants_grant answers. */
int mds_fixture_layout_get(struct mds_fixture *f, uint64_t ino, bool write,
			   struct pando_grant **seg);
/* LAYOUTCOMMIT then LAYOUTRETURN of seg: no size left to settle. */
void mds_fixture_layout_return(struct mds_fixture *f, struct pando_grant *seg);

#endif
