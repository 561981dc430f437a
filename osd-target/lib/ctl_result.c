/* The results side every control procedure shares: target statuses as
 * -errno, and results decoded by their rpcgen filter. */
#include <errno.h>

#include "byteorder.h"
#include "ctl_client.h"

int ctl_status_errno(uint32_t status)
{
	switch (status) {
	case OSD_OK:
		return 0;
	case OSD_ERR_NOENT:
		return -ENOENT;
	case OSD_ERR_IO:
		return -EIO;
	case OSD_ERR_ACCES:
		return -EACCES;
	case OSD_ERR_EXIST:
		return -EEXIST;
	case OSD_ERR_INVAL:
		return -EINVAL;
	case OSD_ERR_FBIG:
		return -EFBIG;
	case OSD_ERR_NOSPC:
		return -ENOSPC;
	case OSD_ERR_NOTEMPTY:
		return -ENOTEMPTY;
	case OSD_ERR_SERVERFAULT:
		return -EREMOTEIO;
	default:
		return -EPROTO;
	}
}

/* Decodes results with an rpcgen filter; they must fill the reply exactly. */
static int xdr_decode_exact(const uint8_t *res, size_t len, xdrproc_t proc, void *obj)
{
	XDR xdrs;
	bool ok;

	xdrmem_ncreate(&xdrs, (char *)res, (u_int)len, XDR_DECODE);
	ok = proc(&xdrs, obj) && xdr_getpos(&xdrs) == len;
	XDR_DESTROY(&xdrs);
	if (!ok) {
		xdr_free(proc, obj);
		return -EPROTO;
	}
	return 0;
}

int ctl_decode_result(const uint8_t *res, size_t len, void *arg)
{
	const struct ctl_result *r = arg;
	int rc = xdr_decode_exact(res, len, r->xdr, r->res);

	if (rc)
		return rc;
	rc = ctl_status_errno(*r->status);
	if (r->take)
		rc = r->take(r->res, rc, r->out);
	xdr_free(r->xdr, r->res);
	return rc;
}

int ctl_call_result(struct osd_ctl_client *c, uint32_t proc, xdrproc_t xdr_args, void *args,
		    struct ctl_result *res)
{
	struct ctl_call call = { .proc = proc,
				 .xdr_args = xdr_args,
				 .args = args,
				 .decode = ctl_decode_result,
				 .out = res };

	return ctl_call(c, &call);
}

static int decode_status(const uint8_t *res, size_t len, void *out)
{
	return len == 4 ? ctl_status_errno(get_be32(res)) : -EPROTO;
}

int ctl_call_status(struct osd_ctl_client *c, uint32_t proc, xdrproc_t xdr_args, void *args)
{
	struct ctl_call call = {
		.proc = proc, .xdr_args = xdr_args, .args = args, .decode = decode_status
	};

	return ctl_call(c, &call);
}
