/* The control program's memory of the calls it has admitted, so that none
 * runs twice: a credential (key id, time, nonce) is remembered from its
 * admission until its time falls out of the skew window, after which the
 * time check refuses it anyway.  Only the credential's own second needs
 * looking at (the time is under the MAC), so entries live in one bucket
 * per second of credential time.
 *
 * Memory is bounded by max_entries (16-byte entries in hash sets at most
 * half full: about 64 bytes each at worst).  When the cache is full the
 * oldest second is dropped and every credential of that second or older
 * is refused from then on (CTL_REPLAY_STALE): the window shrinks to what
 * fits, so a replay never gets through, and callers whose clocks agree
 * with the target's are still served.  A failed allocation refuses the
 * call (CTL_REPLAY_NOMEM).
 *
 * The target's clock is trusted to move forward: stepped back by D
 * seconds, it lets calls that expired within the last D seconds through
 * once more (slew it, as chrony and ntpd do by default).
 *
 * Safe to share between threads (one mutex: a lookup and an insert). */
#ifndef PANDO_CTL_REPLAY_H
#define PANDO_CTL_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* 2^18 calls in the window: over 800 a second kept for 300 s, about 16 MiB
 * at most. */
#define CTL_REPLAY_MAX_ENTRIES (1u << 18)

enum ctl_replay_verdict {
	CTL_REPLAY_FRESH = 0, /* never seen: remembered from now on */
	CTL_REPLAY_SEEN,      /* a replay */
	CTL_REPLAY_STALE,     /* older than what a full cache still holds */
	CTL_REPLAY_NOMEM,     /* could not be remembered, so not admitted */
};

struct ctl_replay;

/* window_s: the skew the caller allows (below 512).  NULL without memory. */
struct ctl_replay *ctl_replay_new(size_t max_entries, unsigned window_s);
void ctl_replay_free(struct ctl_replay *r);

/* Checks and remembers one credential whose time the caller has found
 * within window_s of now_s (key ids are never 0). */
enum ctl_replay_verdict ctl_replay_check(struct ctl_replay *r, uint32_t key_id, uint64_t time_s,
					 uint64_t nonce, uint64_t now_s);

/* Entries held now (for tests). */
size_t ctl_replay_count(struct ctl_replay *r);

#endif
