/* A real object store for the targets that run whole OSD calls: made
 * once per fuzzing process in a temporary directory (removed at exit),
 * with the key, target and object the seed corpora's handles and
 * credentials name (seeds.c makes them with the same values). */
#ifndef PANDO_FUZZ_OSD_FIXTURE_H
#define PANDO_FUZZ_OSD_FIXTURE_H

#include <string.h>

#include "osd.h"

#define FUZZ_OSD_ID 7
#define FUZZ_KEY_ID 3
#define FUZZ_KEY_BYTE 0x5a /* every byte of the secret */
#define FUZZ_PARTITION 0x10
#define FUZZ_OBJECT 0x20

/* The fuzz cluster key. */
static inline void fuzz_key(struct cluster_key *k)
{
	memset(k, 0, sizeof(*k));
	k->id = FUZZ_KEY_ID;
	memset(k->secret, FUZZ_KEY_BYTE, sizeof(k->secret));
}
/* The context of a target whose store holds FUZZ_OBJECT (capability
 * version 1) in FUZZ_PARTITION; exits when it cannot be made. */
struct osd_ctx *fuzz_osd_ctx(void);

#endif
