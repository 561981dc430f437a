/* Sparse files over NFSv4.2: SEEK, ALLOCATE and DEALLOCATE.
 *
 * SEEK: the manager does not know where an object-backed file's holes
 * are (the OSDs keep sparse objects but say nothing of them), and RFC
 * 7862 15.11 lets a server report a file as data up to its end: data is
 * where the caller looks, the hole is at the end of the file.
 *
 * ALLOCATE promises that writes in the range will not fail for space;
 * the OSDs cannot reserve space, so it is NOTSUPP and Linux's
 * posix_fallocate() falls back to writing zeros, which keeps the promise.
 *
 * DEALLOCATE (punch a hole, size unchanged) writes zeros over the part
 * of the range inside the file, through the gateway: the same path, the
 * same recall of other writers and the same set-id rule as a WRITE.  The
 * space is not given back to the OSDs. */
#include "pando_fsal.h"

#define ZERO_CHUNK (1u << 20)

static fsal_status_t pando_seek2(struct fsal_obj_handle *o, struct state_t *state,
				 struct io_info *info)
{
	struct pando_handle *h = to_handle(o);
	uint64_t off = info->io_content.hole.di_offset;
	struct ns_attr a;
	int rc = ns_getattr(h->exp->mds.ns, h->ino, &a);

	if (rc)
		return pando_status(rc);
	if (off >= a.size)
		return fsalstat(ERR_FSAL_NXIO, 0);
	switch (info->io_content.what) {
	case NFS4_CONTENT_DATA:
		info->io_eof = false;
		break;
	case NFS4_CONTENT_HOLE:
		info->io_content.hole.di_offset = a.size;
		info->io_eof = true;
		break;
	default:
		return fsalstat(ERR_FSAL_UNION_NOTSUPP, 0);
	}
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static int write_zeros(struct pando_handle *h, uint64_t off, uint64_t end)
{
	void *zeros = gsh_calloc(1, ZERO_CHUNK);
	int rc = 0;

	while (!rc && off < end) {
		struct iovec iov = { .iov_base = zeros,
				     .iov_len = end - off < ZERO_CHUNK ? end - off : ZERO_CHUNK };
		size_t n = 0;

		rc = pando_data_write(h, off, &iov, 1, true, &n);
		if (!rc && n == 0)
			rc = -EIO;
		off += n;
	}
	gsh_free(zeros);
	return rc;
}

static fsal_status_t pando_fallocate(struct fsal_obj_handle *o, struct state_t *state,
				     uint64_t offset, uint64_t length, bool allocate)
{
	struct pando_handle *h = to_handle(o);
	struct ns_attr a;
	uint64_t end;
	int rc;

	if (allocate)
		return fsalstat(ERR_FSAL_NOTSUPP, 0);
	rc = ns_getattr(h->exp->mds.ns, h->ino, &a);
	if (rc)
		return pando_status(rc);
	end = length > UINT64_MAX - offset ? UINT64_MAX : offset + length;
	if (end > a.size)
		end = a.size; /* past the end it is a hole already */
	return pando_status(offset < end ? write_zeros(h, offset, end) : 0);
}

void pando_sparse_ops_init(struct fsal_obj_ops *ops)
{
	ops->seek2 = pando_seek2;
	ops->fallocate = pando_fallocate;
}
