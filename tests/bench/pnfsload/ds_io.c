/* NFSv3 (RFC 1813) READ, WRITE and COMMIT to flexfiles data servers. */
#include <errno.h>
#include <string.h>

#include "pnfsload.h"

#define NFSPROC3_READ 6u
#define NFSPROC3_WRITE 7u
#define NFSPROC3_COMMIT 21u
#define FATTR3_SIZE 84u
#define WCC_ATTR_SIZE 24u
#define NFS3ERR_IO 5

static void skip(struct xdr_r *r, size_t n)
{
	if (r->err || (size_t)(r->end - r->p) < n)
		r->err = true;
	else
		r->p += n;
}

static void skip_post_op_attr(struct xdr_r *r)
{
	if (xr_bool(r))
		skip(r, FATTR3_SIZE);
}

static void skip_wcc_data(struct xdr_r *r)
{
	if (xr_bool(r))
		skip(r, WCC_ATTR_SIZE);
	skip_post_op_attr(r);
}

int ds_write_start(struct ds_target *t, unsigned slot, uint64_t off, const uint8_t *data,
		   uint32_t count, uint32_t stable, uint8_t *rbuf, size_t cap)
{
	static const uint8_t zeros[4];
	uint8_t args[256];
	struct xdr_w w = { args, sizeof(args), 0 };

	xw_opaque(&w, t->fh.data, t->fh.len);
	xw_u64(&w, off);
	xw_u32(&w, count);
	xw_u32(&w, stable);
	xw_u32(&w, count);
	struct iovec iov[3] = { { args, w.len },
				{ (void *)data, count },
				{ (void *)zeros, XDR_PAD(count) - count } };

	return rpc_start(t->conn, slot, NFSPROC3_WRITE, &t->cred, iov, 3, rbuf, cap);
}

static int finish(struct ds_target *t, unsigned slot, struct xdr_r *r)
{
	const uint8_t *res;
	size_t len;
	uint32_t why = 0, status;
	int err = rpc_finish(t->conn, slot, &res, &len, &why);

	if (err)
		return err;
	*r = (struct xdr_r){ res, res + len, false, false };
	status = xr_u32(r);
	if (r->err)
		return -EBADMSG;
	return (int)status;
}

int ds_write_finish(struct ds_target *t, unsigned slot, uint32_t count, uint32_t stable)
{
	struct xdr_r r;
	int err = finish(t, slot, &r);
	uint32_t got, committed;

	if (err)
		return err;
	skip_wcc_data(&r);
	got = xr_u32(&r);
	committed = xr_u32(&r);
	skip(&r, NFS4_VERIFIER_SIZE);
	if (r.err)
		return -EBADMSG;
	return got != count || committed < stable ? -EREMOTEIO : 0;
}

int ds_read(struct ds_target *t, unsigned slot, uint64_t off, uint32_t count, uint8_t *rbuf,
	    size_t cap, const uint8_t **data)
{
	uint8_t args[256];
	struct xdr_w w = { args, sizeof(args), 0 };
	struct xdr_r r;
	uint32_t got, dlen;
	int err;

	xw_opaque(&w, t->fh.data, t->fh.len);
	xw_u64(&w, off);
	xw_u32(&w, count);
	struct iovec iov = { args, w.len };

	if ((err = rpc_start(t->conn, slot, NFSPROC3_READ, &t->cred, &iov, 1, rbuf, cap)) ||
	    (err = finish(t, slot, &r)))
		return err;
	skip_post_op_attr(&r);
	got = xr_u32(&r);
	xr_bool(&r); /* eof */
	dlen = xr_u32(&r);
	*data = r.p;
	skip(&r, XDR_PAD(dlen));
	if (r.err || dlen != got)
		return -EBADMSG;
	return got != count ? -EREMOTEIO : 0;
}

int ds_commit(struct ds_target *t, unsigned slot, uint8_t *rbuf, size_t cap)
{
	uint8_t args[256];
	struct xdr_w w = { args, sizeof(args), 0 };
	struct xdr_r r;
	int err;

	xw_opaque(&w, t->fh.data, t->fh.len);
	xw_u64(&w, 0);
	xw_u32(&w, 0); /* to the end of the file */
	struct iovec iov = { args, w.len };

	if ((err = rpc_start(t->conn, slot, NFSPROC3_COMMIT, &t->cred, &iov, 1, rbuf, cap)) ||
	    (err = finish(t, slot, &r)))
		return err;
	skip_wcc_data(&r);
	skip(&r, NFS4_VERIFIER_SIZE);
	return r.err ? -EBADMSG : 0;
}

const char *ds_strerror(int err)
{
	static const struct {
		int status;
		const char *name;
	} names[] = {
		{ 1, "NFS3ERR_PERM" },
		{ 2, "NFS3ERR_NOENT" },
		{ 5, "NFS3ERR_IO" },
		{ 13, "NFS3ERR_ACCES" },
		{ 22, "NFS3ERR_INVAL" },
		{ 27, "NFS3ERR_FBIG" },
		{ 28, "NFS3ERR_NOSPC" },
		{ 70, "NFS3ERR_STALE" },
		{ 10001, "NFS3ERR_BADHANDLE" },
		{ 10006, "NFS3ERR_SERVERFAULT" },
		{ 10008, "NFS3ERR_JUKEBOX" },
	};

	if (err == -EREMOTEIO)
		return "short or unstable reply";
	if (err < 0)
		return strerror(-err);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].status == err)
			return names[i].name;
	return "NFS3ERR_?";
}

int32_t ds_error_status(int err)
{
	if (err > 0)
		return err; /* NFS3 and NFSv4 share these numbers */
	return err == -EREMOTEIO || err == -EBADMSG ? NFS3ERR_IO : 6; /* NFS4ERR_NXIO */
}

uint32_t ds_piece(const struct open_file *f, uint64_t off, uint32_t count)
{
	uint64_t left = f->stripe_unit ? f->stripe_unit - off % f->stripe_unit : count;

	return left < count ? (uint32_t)left : count;
}

/* One piece (within a stripe unit) to its column of every mirror, the
 * mirrors' calls in flight together.  Every call started is finished,
 * also after a failure: its slot on that connection is free again for
 * the next call of a client that rides through the failure. */
static int write_piece(struct open_file *f, unsigned slot, uint64_t off, const uint8_t *buf,
		       uint32_t count, uint32_t stable, uint8_t *rbufs, unsigned *failed)
{
	unsigned started;
	int err = 0;

	for (started = 0; started < f->mirrors; started++) {
		unsigned t = lo_target(f, started, off);

		if ((err = ds_write_start(&f->targets[t], slot, off, buf, count, stable,
					  rbufs + started * 1024, 1024))) {
			*failed = t;
			break;
		}
	}
	for (unsigned m = 0; m < started; m++) {
		unsigned t = lo_target(f, m, off);
		int e = ds_write_finish(&f->targets[t], slot, count, stable);

		if (e && !err) {
			err = e;
			*failed = t;
		}
	}
	return err;
}

int ds_write_mirrors(struct open_file *f, unsigned slot, uint64_t off, const uint8_t *buf,
		     uint32_t count, uint32_t stable, uint8_t *rbufs, unsigned *failed)
{
	int err = 0;

	for (uint32_t done = 0, n; !err && done < count; done += n) {
		n = ds_piece(f, off + done, count - done);
		err = write_piece(f, slot, off + done, buf + done, n, stable, rbufs, failed);
	}
	return err;
}
