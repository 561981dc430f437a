/* What each member of a manager group holds, kept in etcd without a
 * lease:
 *
 *   <Etcd_Prefix>groups/<group>/held/<name> = {"seq": N, "at": unix time}
 *
 * N is the last journal record the member's store holds.  Its key under
 * members/ goes with its lease when it dies, and the active trims the
 * journal past every member it sees (group.c); a member that was down,
 * the old active above all, would come back to find the records after
 * its own trimmed, and need a new snapshot.  So each member also puts
 * its position here (when it moves, at most once a second, and every
 * PANDO_HELD_REFRESH_S), and the trim floor keeps what a member whose
 * record is younger than PANDO_HELD_KEEP_S needs.  Past that, a member
 * counts as gone: it starts again from a snapshot. */
#ifndef PANDO_HELD_H
#define PANDO_HELD_H

#include <stddef.h>
#include <stdint.h>

struct etcd_client;
struct etcd_options;
struct pando_held;

#define PANDO_HELD_REFRESH_S 60
#define PANDO_HELD_KEEP_S 3600

/* The member's position: 0 while it has none. */
typedef uint64_t (*pando_held_seq_fn)(void *arg);

/* Puts key from a thread of its own until stopped; key is copied. */
int pando_held_start(const struct etcd_options *etcd, const char *key, pando_held_seq_fn seq,
		     void *arg, struct pando_held **out);
/* Puts the position once more, then stops; NULL is fine. */
void pando_held_stop(struct pando_held *h);

/* Lowers *floor to the seq of each record under prefix (.../held/) at
 * most PANDO_HELD_KEEP_S old at now, but the one of member `self`;
 * malformed values are skipped and counted in *bad.  0 or the etcd
 * client's error. */
int pando_held_floor(struct etcd_client *c, const char *prefix, const char *self, int64_t now,
		     uint64_t *floor, unsigned *bad);

/* One record's value: 0 and its fields, or -EINVAL. */
int pando_held_parse(const char *value, size_t len, uint64_t *seq, int64_t *at);

#endif
