/* The start that GETATTR and FSSTAT share: their one argument is a handle,
 * and they read through it. */
#ifndef PANDO_NFS3_FH_ARGS_H
#define PANDO_NFS3_FH_ARGS_H

#include <errno.h>

#include "nfs3.h"

/* Decodes the handle and opens its object for reading.  -EINVAL when the
 * bytes are no handle (the caller answers GARBAGE_ARGS); else 0 with *st the
 * handle's status, and on NFS3_OK obj open for nfs3_obj_close. */
static inline int nfs3_open_fh_args(const struct osd_ctx *ctx, struct xdr_r *args,
				    struct nfs3_obj *obj, enum nfsstat3 *st)
{
	struct nfs3_fh fh;

	if (nfs3_decode_fh_args(args, &fh))
		return -EINVAL;
	*st = nfs3_obj_open(ctx, &fh, NFS3_NEED_READ, obj);
	return 0;
}

#endif
