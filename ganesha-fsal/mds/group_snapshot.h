/* The group's snapshot: what a standby that starts from nothing (no
 * store at its Db_Path) begins with, kept on the OSDs.
 *
 * The standby asks for one: it puts <Etcd_Prefix>groups/<group>/
 * snapshot_wanted = {"from": its name}.  The active looks every
 * GROUP_SNAPSHOT_POLL_MS; asked, or Snapshot_Interval after the last one
 * listed if its store has moved on since, and no snapshot made or tried
 * in the last 5 s, it makes a store snapshot (ns_snapshot)
 * beside its store, packs it (snapshot_pack.h) into an object of
 * JOURNAL_COPIES mirrors in the journal's object space, stable on every
 * copy, and only then puts
 *
 *   <Etcd_Prefix>groups/<group>/snapshot =
 *     {"index", "seq", "bytes", "at": unix time, "map": its map in hex}
 *
 * deletes the request and removes the snapshot before (key first, then
 * objects).  For GROUP_SNAPSHOT_HOLD_S after the listing's "at", every
 * active's trim floor keeps the journal's records after its seq
 * (group_snapshot_hold).  The standby waits for a snapshot of a later
 * index than the one there when it asked, reads it from the first copy
 * that gives a well-formed pack (every CRC right), unpacks it into
 * <Db_Path>.fetch and renames that to Db_Path: from there it follows the
 * journal as every standby does.  When no new one comes within
 * GROUP_SNAPSHOT_FALLBACK_S (no active: every member's store was lost),
 * it takes the one listed when it asked, if the journal still holds every
 * record after it, so the group starts again from that snapshot and the
 * journal.
 *
 * Every GROUP_REBUILD_S the active also puts back the copies of the
 * listed snapshot and of the journal's segments that are on OSDs that are
 * out (pando_journal_rebuild). */
#ifndef PANDO_GROUP_SNAPSHOT_H
#define PANDO_GROUP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct etcd_client;
struct pando_mds;
struct pando_storage_map;
struct group_snapshot_server;

/* The value at the snapshot key. */
struct group_snapshot_listing {
	uint64_t index, seq, bytes;
	int64_t at;
	struct pando_storage_map *map;
};

#define GROUP_SNAPSHOT_POLL_MS 500
#define GROUP_SNAPSHOT_HOLD_S 3600
/* Twice the lead's lease: a live active answers well before. */
#define GROUP_SNAPSHOT_FALLBACK_S 10
/* Object ids of snapshots: the journal's space, apart from its segments. */
#define GROUP_SNAPSHOT_OBJECT_BIT (1ull << 62)

/* The listing's value: JSON {"at", "bytes", "index", "map", "seq"}, the
 * counts non-negative integers, the index not 0, the map in hex
 * (journal_map_hex), at most JOURNAL_VALUE_MAX bytes.  0, or -EINVAL:
 * not a listing.  The map is the caller's to free. */
int group_snapshot_listing_parse(const char *value, size_t len, struct group_snapshot_listing *s);
/* The value for s; NULL when its map does not encode.  Freed by free(). */
char *group_snapshot_listing_format(const struct group_snapshot_listing *s);

/* The active's side: answers requests until stopped.  *out NULL on
 * failure (logged). */
int group_snapshot_serve(struct pando_mds *mds, struct group_snapshot_server **out);
void group_snapshot_serve_stop(struct group_snapshot_server *s);

/* The group's snapshot as it is now, if its index is at least min_index
 * and, when `covered`, the journal still holds every record after it
 * (else -EAGAIN; -ENOENT: none), unpacked into dir, which must not exist
 * (-EEXIST), from the first copy that gives a well-formed pack; *seq its
 * seq. */
int group_snapshot_get(struct pando_mds *mds, struct etcd_client *c, uint64_t min_index,
		       bool covered, const char *dir, uint64_t *seq);

/* The trim floor's part: *floor lowered to the listed snapshot's seq when
 * it was listed within GROUP_SNAPSHOT_HOLD_S of now.  0 (also with none
 * listed, or a malformed listing, which holds nothing), or etcd's
 * errors. */
int group_snapshot_hold(struct pando_mds *mds, struct etcd_client *c, int64_t now, uint64_t *floor);

/* The standby's side: asks, waits, and makes Db_Path the snapshot's copy
 * (*seq its seq).  -EINTR once stop() says so; the OSDs' and etcd's
 * errors are waited out. */
int group_snapshot_fetch(struct pando_mds *mds, const char *name, bool (*stop)(void),
			 uint64_t *seq);

#endif
