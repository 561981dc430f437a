/* File handle = capability (NASD/OSD style).  The metadata manager mints
 * one per (object, rights, capability version); the OSD verifies it on
 * every request.  Byte layout in README.md. */
#ifndef PANDO_CAPABILITY_H
#define PANDO_CAPABILITY_H

#include <stddef.h>
#include <stdint.h>

#include "pando/cluster_key.h"

#define CAPABILITY_SIZE 56
#define CAPABILITY_FORMAT 1
#define CAPABILITY_MAC_LEN 16

enum cap_rights {
	CAP_RIGHTS_READ = 1,
	CAP_RIGHTS_RW = 3,
};

struct capability {
	uint8_t rights; /* enum cap_rights */
	uint16_t key_id;
	uint32_t osd_id;
	uint64_t partition;
	uint64_t object;
	uint32_t cap_version;
	uint64_t expiry; /* Unix seconds, 0 = never */
	/* The AUTH_SYS uid the holder's NFSv3 calls must carry; 0 = any
	 * caller.  In the bytes that were reserved zero, so handles minted
	 * before it keep their meaning. */
	uint32_t holder;
};

enum cap_verdict {
	CAP_VALID = 0,
	CAP_MALFORMED,   /* wrong length, version, rights */
	CAP_UNKNOWN_KEY, /* signed with a key id we do not hold */
	CAP_BAD_MAC,     /* forged or corrupted, or the HMAC failed here */
};

/* Writes CAPABILITY_SIZE bytes; key->id (the current key, never the
 * previous one) is stamped into the handle. */
void capability_mint(const struct cluster_key *key, const struct capability *cap,
		     uint8_t out[CAPABILITY_SIZE]);
/* Decodes and authenticates with the current or the previous key; on
 * CAP_VALID fills *cap.  Expiry, OSD id, holder,
 * object existence and version are the caller's checks. */
enum cap_verdict capability_verify(const struct cluster_key *key, const uint8_t *fh, size_t len,
				   struct capability *cap);
const char *cap_verdict_name(enum cap_verdict v);

#endif
