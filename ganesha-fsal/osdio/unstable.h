/* Files with UNSTABLE gateway writes not yet COMMITted, by inode, each
 * with the manager's verifier epoch (moved on whenever an OSD is seen to
 * have restarted) at the first of them.  The COMMIT compares it with the
 * epoch then: another epoch means an OSD restarted in between, and the
 * bytes it acknowledged may be gone.
 *
 * Kept by inode for the life of the export, not on Ganesha's object
 * handle: its cache may evict and free the handle between the WRITE and
 * the COMMIT, and the COMMIT would then come to a new handle that knows
 * of no unstable writes.  An entry goes at the file's next COMMIT.
 *
 * A client that writes UNSTABLE and never commits must not grow it for
 * ever: it holds at most `max` files, and a write to a file it has no
 * room for goes stable instead, needing no entry. */
#ifndef PANDO_UNSTABLE_H
#define PANDO_UNSTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unstable_files;

/* NULL without memory. */
struct unstable_files *unstable_files_new(size_t max);
void unstable_files_free(struct unstable_files *u);
/* Room for ino before an UNSTABLE write of it goes out: 0 (it has an
 * entry now, or had one), -ENOMEM, or -ENOSPC when the table is full: the
 * write must go stable. */
int unstable_files_reserve(struct unstable_files *u, uint64_t ino);
/* An UNSTABLE write of ino came back under epoch; the epoch of the first
 * since the last COMMIT is what counts.  0, -ENOMEM, or -ENOSPC (no entry
 * reserved and the table full). */
int unstable_files_note(struct unstable_files *u, uint64_t ino, uint64_t epoch);
/* At ino's COMMIT, the epoch being now: whether its unstable writes came
 * under another (they may be lost).  They are forgotten either way. */
bool unstable_files_lost(struct unstable_files *u, uint64_t ino, uint64_t now);

#endif
