/* The journal: every namespace batch the active metadata manager
 * commits, in commit order, on mirrored objects on the OSDs, for its
 * standbys to apply into their own stores.
 *
 * Records (journal_record.h) go into segments.  A segment is an object
 * of JOURNAL_COPIES mirrors, placed as a file's would be (declustered,
 * one copy per failure domain), with ids in a space no file uses
 * (JOURNAL_OBJECT_BIT).  A segment is listed in etcd before its first
 * record is written, at <prefix>journal/<group>/<index, 16 hex digits>:
 * {"index", "term", "first_seq", "map": the storage map's bytes in hex}.
 * A writer never appends to a segment it did not open, so a new term
 * starts a new segment and whatever an older leadership left in its own
 * stays as it was.
 *
 * Writing is a group commit: append() copies a batch behind the others
 * and returns; one thread writes all that is pending to every copy,
 * stable, in order, then releases the sync() waiters up to the last
 * record it wrote.  A write that fails on a copy (its OSD down or not
 * answering within the OSD timeout) ends the segment there and goes
 * whole into a new one, in the same term, whose copies avoid the OSDs
 * that failed; the same records may then be in both, and a reader
 * applies them once.  A write that still cannot reach every copy (no OSD
 * left to avoid the failed ones, or JOURNAL_ROLLS_MAX new segments
 * failed in turn) is tried again, on any OSD, for 10 s, and then fails
 * the journal: every sync() from then on returns
 * -EIO, and the manager must stop acknowledging changes.  A journal whose
 * manager is no longer sure that it leads stops too, with -ESHUTDOWN:
 * the change is not lost but left to the next active, so clients are
 * told to send it again (NFS3ERR_JUKEBOX, NFS4ERR_DELAY) and find the
 * next active at the service address by then.  A group's active (with
 * the failed callback) stops the same way when its journal fails for
 * good, and lets a standby, which may reach the OSDs it cannot, lead. */
#ifndef PANDO_JOURNAL_H
#define PANDO_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal_record.h"
#include "ns_store.h"
#include "pando/storage_map.h"

#define JOURNAL_COPIES 3
#define JOURNAL_OBJECT_BIT PANDO_JOURNAL_OBJECT_BIT
#define JOURNAL_SEGMENT_BYTES (64ull << 20)

struct etcd_client;
struct pando_mds;
struct pando_journal;
struct pando_journal_reader;

struct pando_journal_options {
	const char *group;      /* segments under <Etcd_Prefix>journal/<group>/ */
	uint64_t term;          /* the leadership writing (election.h) */
	uint64_t segment_bytes; /* when to roll to the next segment (0: JOURNAL_SEGMENT_BYTES) */
	/* Whether the writer still leads and is sure of it
	 * (pando_election_leading), asked once each write is on every copy
	 * and before any record in it is acknowledged: the first "no" fails
	 * the journal.  Another manager leads only after this one's lease
	 * expired, later than this one stops being sure, so every record
	 * acknowledged is on the copies before a new leader reads them.
	 * NULL: the writer alone writes the group's journal (tests). */
	bool (*leading)(void *arg);
	void *leading_arg;
	/* The seq every member of the group has applied (the standbys' and
	 * what a recent snapshot holds), asked by the writer each time it
	 * starts a segment: the segments before, whose records are all at or
	 * below it, are trimmed (their keys, then their objects).  NULL or 0:
	 * nothing is trimmed. */
	uint64_t (*trim_floor)(void *arg);
	void *trim_arg;
	/* Called once, from the writer's thread, when the journal fails for
	 * good (not while it closes): the changes it holds and any later are
	 * then left to the next
	 * active (-ESHUTDOWN), and the writer's manager must let a standby,
	 * which may reach the OSDs it cannot, lead.  NULL: -EIO. */
	void (*failed)(void *arg);
	void *failed_arg;
};

/* A map of JOURNAL_COPIES mirrors, one per failure domain, over the OSDs
 * that take new components, with object ids from first_object_id (in the
 * journal's space: JOURNAL_OBJECT_BIT set).  -ENOSPC: too few OSDs. */
int pando_journal_place(struct pando_mds *mds, uint64_t first_object_id, uint64_t seed,
			struct pando_storage_map **map);

/* Starts the writer; its first segment is listed in etcd at the first
 * write.  -ENOSPC: fewer than JOURNAL_COPIES OSDs take new components. */
int pando_journal_open(struct pando_mds *mds, const struct pando_journal_options *opt,
		       struct pando_journal **out);
/* Queues the batch with sequence number seq (above every earlier one).
 * Waits only while more than JOURNAL_PENDING_MAX bytes are unwritten. */
int pando_journal_append(struct pando_journal *j, uint64_t seq, const void *batch, size_t len);
/* Returns once every record up to seq is on every copy: 0, or -EIO or
 * -ESHUTDOWN once the journal has stopped. */
int pando_journal_sync(struct pando_journal *j, uint64_t seq);
/* The seq of the last record on every copy (0: none yet). */
uint64_t pando_journal_durable(struct pando_journal *j);
/* Writes what is pending, then stops. */
void pando_journal_close(struct pando_journal *j);
/* The hook a store opens with (ns_options.journal) to journal its
 * batches here; valid while j is open. */
const struct ns_journal *pando_journal_ns(struct pando_journal *j);

/* Rebuild (journal_rebuild.c).  A copy on an OSD that is out (or dropped
 * from the map) is made anew from a healthy one on an OSD that takes new
 * components, one per failure domain as placed, stable, before the listing
 * names it.  The writer leaves a segment with such a copy for a new one at
 * its next write, or within JOURNAL_IDLE_MS (1 s) while idle, when one can
 * be placed (else it goes on in it, on the copies it has); the group's
 * active rebuilds the others'. */
bool pando_journal_map_degraded(struct pando_mds *mds, const struct pando_storage_map *map);
/* A copy of old, with its copies that are out rebuilt (*rebuilt of them),
 * into *out; owner is stored with each new object.  -errno, with nothing
 * left on the OSDs. */
int pando_journal_copies_rebuild(struct pando_mds *mds, uint64_t owner,
				 const struct pando_storage_map *old, uint64_t seed,
				 struct pando_storage_map **out, size_t *rebuilt);
/* The copies now has and old does not, removed: the listing that was to
 * name them lost a race with a write or a trim. */
void pando_journal_copies_forget(struct pando_mds *mds, uint64_t owner,
				 const struct pando_storage_map *old,
				 const struct pando_storage_map *now);
/* The listing at key (read at mod revision rev), whose map is old, put
 * again with the map's copies that are out rebuilt: format makes the new
 * value from listing and the new map.  -EEXIST when the key was written
 * or deleted since rev; on any failure, the new copies are removed. */
typedef char *(*pando_journal_format_fn)(const void *listing, const struct pando_storage_map *map);
int pando_journal_relist(struct pando_mds *mds, struct etcd_client *c, const char *key, int64_t rev,
			 uint64_t owner, const struct pando_storage_map *old, uint64_t seed,
			 pando_journal_format_fn format, const void *listing, size_t *rebuilt);
/* Every listed segment of group's journal but the last, its copies that
 * are out rebuilt and the segment listed again with the new map, only if
 * its key was not written or deleted (trimmed) since it was read.
 * *rebuilt counts the copies.  0, or the first error (the rest are still
 * tried). */
int pando_journal_rebuild(struct pando_mds *mds, struct etcd_client *c, const char *group,
			  size_t *rebuilt);

/* A standby's side: applies the records after seq `after`, written in
 * term `term` (ns_applied; 0: not known), in order, across segments and
 * terms. */
typedef int (*pando_journal_apply_fn)(void *arg, const struct journal_record *r);
int pando_journal_reader_new(struct pando_mds *mds, const char *group, uint64_t after,
			     uint64_t term, struct pando_journal_reader **out);
/* Applies every record there is now; *applied counts them.  0 at the
 * tail; -ESTALE when the journal no longer holds the records right
 * after the reader's position, or when the reader holds records that
 * the next segment's writer did not have (an old leader's write that
 * landed after the new leader read its segment, or a store that was
 * the active of an ended term and holds batches it never journaled):
 * a standby that needs a snapshot.  What apply returned, or -errno of the OSDs and etcd. */
int pando_journal_read(struct pando_journal_reader *r, pando_journal_apply_fn apply, void *arg,
		       size_t *applied);
/* The sequence number of the last record applied. */
uint64_t pando_journal_reader_seq(const struct pando_journal_reader *r);
void pando_journal_reader_free(struct pando_journal_reader *r);

#endif
