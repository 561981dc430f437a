/* Pando's quotas in rquota's units (rquota.h). */
#include "rquota.h"

#include <errno.h>

static uint64_t blocks(uint64_t bytes, uint64_t bsize)
{
	return bytes / bsize + (bytes % bsize != 0);
}

static uint64_t files32(uint64_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : n;
}

void pando_rquota_report(const struct ns_quota *q, const struct ns_quota *used,
			 struct pando_rquota *r)
{
	uint64_t most = q->bytes > used->bytes ? q->bytes : used->bytes;

	r->bsize = PANDO_RQUOTA_SET_BLOCK;
	while (blocks(most, r->bsize) > UINT32_MAX)
		r->bsize *= 2;
	r->bhardlimit = blocks(q->bytes, r->bsize);
	r->bsoftlimit = r->bhardlimit;
	r->curblocks = blocks(used->bytes, r->bsize);
	r->fhardlimit = files32(q->files);
	r->fsoftlimit = r->fhardlimit;
	r->curfiles = files32(used->files);
}

static bool soft_kept(uint64_t soft, uint64_t hard)
{
	return soft == 0 || soft == hard;
}

int pando_rquota_limits(const struct pando_rquota *r, struct ns_quota *q)
{
	if (!soft_kept(r->bsoftlimit, r->bhardlimit) || !soft_kept(r->fsoftlimit, r->fhardlimit))
		return -EINVAL;
	if (r->bhardlimit > UINT64_MAX / PANDO_RQUOTA_SET_BLOCK)
		return -EINVAL;
	q->bytes = r->bhardlimit * PANDO_RQUOTA_SET_BLOCK;
	q->files = r->fhardlimit;
	return 0;
}
