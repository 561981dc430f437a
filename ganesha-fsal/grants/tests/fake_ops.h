/* The outside world of pando_grants for its unit tests: a clock the test
 * moves, and callbacks that record what they were asked. */
#ifndef GRANTS_FAKE_OPS_H
#define GRANTS_FAKE_OPS_H

#include <pthread.h>

#include "grants.h"

#define FAKE_MAX 256

struct fake {
	pthread_mutex_t lock; /* the callbacks run from several threads */
	uint64_t now;
	struct pando_recall recalls[FAKE_MAX];
	int nrecalls;
	uint64_t fenced_ino[FAKE_MAX];
	uint32_t fenced_cur[FAKE_MAX];
	int nfences;
	uint32_t next_version;          /* what the next fence or revocation moves to */
	int fence_rc;                   /* non-zero: the map could not be read */
	uint64_t revoked_ino[FAKE_MAX]; /* revoke_writers calls */
	uint32_t revoked_cur[FAKE_MAX];
	int nrevokes;
	int revoke_rc;        /* non-zero: an OSD did not take it */
	int marked[FAKE_MAX]; /* write-layout records (0 or 1), by inode */
	int nmarks;           /* mark_writer calls that wrote one */
	int mark_rc;
	int settles[FAKE_MAX]; /* size checks asked, by inode */
	uint32_t down_osd;     /* uses_osd: inodes below 100 use it */
	int logs;
	/* Runs inside mark_writer once the record is written, before the
	 * grants take their lock again: a race made to order. */
	void (*during_mark)(struct fake *fk, uint64_t ino);
	/* Runs inside revoke_writers, with the grants' lock dropped. */
	void (*during_revoke)(struct fake *fk, uint64_t ino);
	struct pando_grants *g;
};

/* A fresh fake and grants over it, recall timeout 10 s. */
struct pando_grants *fake_grants(struct fake *fk);
void fake_free(struct fake *fk);
/* A grant of ino to clientid (its address "10.0.0.<clientid>"). */
int fake_grant(struct fake *fk, uint64_t ino, uint64_t clientid, bool write,
	       struct pando_grant **out);
struct pando_layout_stats fake_stats(struct fake *fk);

#endif
