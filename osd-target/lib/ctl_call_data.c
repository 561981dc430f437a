/* Object data: READ and WRITE (ctl_proc_read.c and ctl_proc_write.c on
 * the server). */
#include <errno.h>
#include <string.h>

#include "ctl_client.h"
#include "xdr.h"

struct read_out {
	void *buf;
	size_t len;
	size_t *n;
	bool *eof;
};

/* By hand rather than rpcgen: the data goes straight to the caller's buffer,
 * and a target sending more than was asked is caught before the copy. */
static int decode_read(const uint8_t *res, size_t len, void *arg)
{
	struct read_out *out = arg;
	struct xdr_r x;
	uint32_t status, n;
	const uint8_t *data;
	bool eof;

	xr_init(&x, res, len);
	status = xr_u32(&x);
	if (status != OSD_OK)
		return x.err || xr_left(&x) ? -EPROTO : ctl_status_errno(status);
	eof = xr_bool(&x);
	data = xr_opaque_ref(&x, (uint32_t)out->len, &n);
	if (x.err || xr_left(&x))
		return -EPROTO;
	memcpy(out->buf, data, n);
	*out->n = n;
	*out->eof = eof;
	return 0;
}

int osd_ctl_read(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t off, void *buf,
		 size_t len, size_t *n, bool *eof)
{
	size_t count = len < OSD_CTL_MAX_DATA ? len : OSD_CTL_MAX_DATA;
	struct read_out out = { buf, count, n, eof };
	osd_read_args args = { .id = { id->partition, id->object },
			       .offset = off,
			       .count = (u_int)count };
	struct ctl_call call = { .proc = OSDCTL_READ,
				 .xdr_args = CTL_XDRPROC(xdr_osd_read_args),
				 .args = &args,
				 .decode = decode_read,
				 .out = &out };

	return ctl_call(c, &call);
}

/* WRITE arguments up to the data's length; the data follows uncopied. */
static bool_t xdr_write_head(XDR *xdrs, osd_write_args *args)
{
	return xdr_osd_obj_id(xdrs, &args->id) && xdr_osd_u64(xdrs, &args->offset) &&
	       xdr_osd_stable(xdrs, &args->stable) && xdr_u_int(xdrs, &args->data.data_len);
}

struct write_out {
	size_t len;
	uint8_t *verf;
};

static int take_write(const void *res, int rc, void *arg)
{
	const osd_write_res_ok *ok = &((const osd_write_res *)res)->osd_write_res_u.ok;
	struct write_out *out = arg;

	if (!rc && ok->count != out->len)
		rc = -EIO;
	if (!rc && out->verf)
		memcpy(out->verf, ok->verifier, sizeof(ok->verifier));
	return rc;
}

int osd_ctl_write(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t off,
		  const void *buf, size_t len, enum osd_ctl_stable stable, uint8_t verf[8])
{
	struct write_out out = { len, verf };
	osd_write_args args = { .id = { id->partition, id->object },
				.offset = off,
				.stable = (osd_stable)stable };
	osd_write_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_write_res, take_write, &out);
	struct ctl_call call = { .proc = OSDCTL_WRITE,
				 .xdr_args = CTL_XDRPROC(xdr_write_head),
				 .args = &args,
				 .tail = buf,
				 .tail_len = len,
				 .decode = ctl_decode_result,
				 .out = &res };

	if (len > OSD_CTL_MAX_DATA || (unsigned)stable > OSD_CTL_FILE_SYNC)
		return -EINVAL;
	args.data.data_len = (u_int)len;
	return ctl_call(c, &call);
}
