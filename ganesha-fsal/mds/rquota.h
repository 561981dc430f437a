/* Quotas as rquota carries them (Sun's rquota.x, versions 1 and 2, which
 * Ganesha serves and Linux's quota, setquota and edquota call for NFS
 * mounts): block counts in units of a block size the server picks, and
 * file counts, each 32 bits on the wire.  Limits a client sets come in
 * 1 KiB blocks (quota-tools' QUOTABLOCK_SIZE) with no block size.
 * Pando's quotas are hard limits in bytes and files (ns_store.h): no soft
 * limit, so no grace time. */
#ifndef PANDO_RQUOTA_H
#define PANDO_RQUOTA_H

#include <stdint.h>

#include "ns_store.h"

#define PANDO_RQUOTA_SET_BLOCK 1024u

struct pando_rquota {
	uint64_t bsize;
	uint64_t bhardlimit, bsoftlimit, curblocks;
	uint64_t fhardlimit, fsoftlimit, curfiles;
};

/* The quota `q` and the usage `used` as rquota reports them: in the
 * smallest power-of-two block size from 1 KiB up whose counts all fit
 * 32 bits; a byte limit rounded up to a block, so it never reads as 0
 * (none); the hard limit reported as the soft one too, since it is the
 * quota; file counts past 32 bits as UINT32_MAX. */
void pando_rquota_report(const struct ns_quota *q, const struct ns_quota *used,
			 struct pando_rquota *r);

/* The quota a SETQUOTA asks for (block limits in PANDO_RQUOTA_SET_BLOCK
 * units; usage and times ignored): -EINVAL when a soft limit is neither 0
 * nor its hard limit, a limit Pando would not keep. */
int pando_rquota_limits(const struct pando_rquota *r, struct ns_quota *q);

#endif
