/* Data: read2, write2 and commit2.  A small file's bytes live inline in
 * the store; past the inline threshold the file moves to OSD objects and
 * its bytes go through the gateway (../cluster/objio.h) under its storage
 * map.  Share reservations are checked through Ganesha's fsal_find_fd, as
 * for any FSAL, with the fd reduced to its open mode (file.c). */
#include "pando_fsal.h"

#include <string.h>

#include "layouts.h"
#include "objio.h"
#include "unstable.h"

static fsal_status_t fd_open(struct fsal_obj_handle *o, fsal_openflags_t flags, struct fsal_fd *fd)
{
	fd->openflags = FSAL_O_NFS_FLAGS(flags);
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static fsal_status_t fd_close(struct fsal_obj_handle *o, struct fsal_fd *fd)
{
	fd->openflags = FSAL_O_CLOSED;
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

/* May the caller do I/O with these flags under this state (or none)? */
static fsal_status_t io_allowed(struct pando_handle *h, bool bypass, struct state_t *state,
				fsal_openflags_t flags)
{
	struct fsal_fd *fd = NULL;
	bool has_lock = false, closefd = false, reusing = false;
	fsal_status_t st;

	st = fsal_find_fd(&fd, &h->obj, &h->fd, &h->share, bypass, state, flags, fd_open, fd_close,
			  &has_lock, &closefd, false, &reusing);
	if (has_lock)
		PTHREAD_RWLOCK_unlock(&h->obj.obj_lock);
	if (closefd && fd)
		fd_close(&h->obj, fd);
	return st;
}

/* Whether the file's map is no longer the one a read used: a rebuild or a
 * transcoding switched it, and the reaper may have removed the objects
 * the read went to; the caller reads again with the new one. */
static bool map_replaced(struct pando_handle *h, const struct pando_storage_map *used)
{
	uint8_t *a = NULL;
	void *b = NULL;
	size_t alen = 0, blen = 0;
	bool replaced = pando_map_blob(used, &a, &alen) == 0 &&
			ns_map_get(h->exp->mds.ns, h->ino, &b, &blen) == 0 &&
			(alen != blen || memcmp(a, b, alen) != 0);

	free(a);
	free(b);
	return replaced;
}

static int read_objects(struct pando_handle *h, const struct ns_attr *a, uint64_t off,
			struct iovec *iov, int iovcnt, size_t *n)
{
	struct pando_storage_map *map;
	struct objio io;
	int rc = pando_objects_open(&h->exp->mds, h->ino, &io, &map);

	*n = 0;
	if (rc)
		return rc;
	if (map->shape.raid == PANDO_RS)
		pthread_rwlock_rdlock(&h->rows_lock);
	for (int i = 0; !rc && i < iovcnt; i++) {
		size_t got = 0;

		rc = objio_read(&io, map, a->size, off + *n, iov[i].iov_base, iov[i].iov_len, &got);
		*n += got;
		if (got < iov[i].iov_len)
			break;
	}
	if (map->shape.raid == PANDO_RS)
		pthread_rwlock_unlock(&h->rows_lock);
	if (rc && map_replaced(h, map))
		rc = -EREMOTE;
	pando_map_free(map);
	return rc;
}

static int read_inline(struct pando_handle *h, uint64_t off, struct iovec *iov, int iovcnt,
		       size_t *n)
{
	bool eof = false;
	int rc = 0;

	*n = 0;
	for (int i = 0; !rc && i < iovcnt && !eof; i++) {
		size_t got = 0;

		rc = ns_read(h->exp->mds.ns, h->ino, off + *n, iov[i].iov_len, iov[i].iov_base,
			     &got, &eof);
		*n += got;
	}
	return rc;
}

int pando_data_read(struct pando_handle *h, uint64_t off, struct iovec *iov, int iovcnt, size_t *n,
		    bool *eof)
{
	struct ns_attr a;
	int rc;

	for (int tries = 0; tries < 3; tries++) {
		rc = ns_getattr(h->exp->mds.ns, h->ino, &a);
		if (rc)
			return rc;
		rc = a.objects ? read_objects(h, &a, off, iov, iovcnt, n)
			       : read_inline(h, off, iov, iovcnt, n);
		/* -EREMOTE / -ENODATA: the file moved between getattr and read,
		 * or its map was switched under the read. */
		if (rc != -EREMOTE && rc != -ENODATA)
			break;
	}
	if (!rc)
		*eof = off + *n >= a.size;
	return rc;
}

static int write_map(struct pando_handle *h, struct objio *io, const struct pando_storage_map *map,
		     uint64_t off, const struct iovec *iov, int iovcnt, bool stable, size_t *n)
{
	bool rs = map->shape.raid == PANDO_RS;
	int rc = 0;

	if (rs) {
		pthread_rwlock_wrlock(&h->rows_lock);
		rc = pando_write_hole_begin(h, stable);
	}
	for (int i = 0; !rc && i < iovcnt; i++) {
		rc = objio_write(io, map, off + *n, iov[i].iov_base, iov[i].iov_len, stable);
		if (!rc)
			*n += iov[i].iov_len;
	}
	if (rs) {
		pando_write_hole_end(h, rc);
		pthread_rwlock_unlock(&h->rows_lock);
	}
	return rc;
}

static uint64_t iov_length(const struct iovec *iov, int iovcnt)
{
	uint64_t len = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return len;
}

static int write_objects(struct pando_handle *h, const struct ns_attr *a,
			 const struct ns_cred *writer, uint64_t off, const struct iovec *iov,
			 int iovcnt, bool stable, size_t *n)
{
	struct pando_export *exp = h->exp;
	struct objio io = { 0 };
	struct pando_storage_map *map = NULL;
	struct ns_setattr sa = { .mask = NS_SET_KILL_SETID, .writer = writer };
	uint64_t self = op_ctx->clientid ? *op_ctx->clientid : 0, end;
	int rc = pando_quota_end(&exp->mds, a, &end);

	/* Past the quota nothing reaches the OSDs (ns_setattr below would
	 * refuse the size anyway, leaving the bytes hidden past it). */
	if (!rc && off + iov_length(iov, iovcnt) > end)
		rc = -EDQUOT;
	if (rc)
		return rc;
	/* Bytes written here and through another client's write layout
	 * would race on the OSDs: recall those layouts first. */
	rc = pando_grants_recall_and_wait(exp->mds.grants, h->ino, self, true,
					  "write through the MDS", RECALL_WAIT_MS);
	/* Set-id bits go before the bytes reach the OSDs, and again with
	 * the size below: a chmod in between counts as if it came first. */
	if (!rc && ns_setid_cleared(a, writer))
		rc = ns_setattr(exp->mds.ns, h->ino, &sa, NULL);
	/* A rebuild must not switch the map under these bytes (rebuild.c). */
	if (!rc)
		rc = pando_grants_write_begin(exp->mds.grants, h->ino);
	if (rc)
		return rc;
	/* With the table of unstable files full, the write goes stable. */
	if (!stable) {
		rc = unstable_files_reserve(exp->mds.unstable, h->ino);
		stable = rc == -ENOSPC;
		if (stable)
			rc = 0;
	}
	if (!rc)
		rc = pando_objects_open(&exp->mds, h->ino, &io, &map);
	*n = 0;
	if (!rc)
		rc = write_map(h, &io, map, off, iov, iovcnt, stable, n);
	if (map)
		pando_map_free(map);
	pando_grants_write_end(exp->mds.grants, h->ino);
	if (io.verf_changed)
		pando_note_verf_change(&exp->mds);
	if (!rc && !stable)
		rc = unstable_files_note(exp->mds.unstable, h->ino,
					 atomic_load(&exp->mds.verf_epoch));
	if (rc)
		return rc;
	/* The size only grows here; an unstable write's size is made durable
	 * by the COMMIT that makes its data durable. */
	sa.mask = NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_MTIME_NOW | NS_SET_KILL_SETID |
		  (stable ? 0 : NS_SET_LAZY);
	sa.size = off + *n;
	return ns_setattr(exp->mds.ns, h->ino, &sa, NULL);
}

static int write_inline(struct pando_handle *h, const struct ns_cred *writer, uint64_t off,
			const struct iovec *iov, int iovcnt, bool stable, size_t *n)
{
	int rc = 0;

	*n = 0;
	for (int i = 0; !rc && i < iovcnt; i++) {
		rc = ns_write(h->exp->mds.ns, h->ino, off + *n, iov[i].iov_base, iov[i].iov_len,
			      stable, writer, NULL);
		if (!rc)
			*n += iov[i].iov_len;
	}
	return rc;
}

int pando_data_write(struct pando_handle *h, uint64_t off, const struct iovec *iov, int iovcnt,
		     bool stable, size_t *n)
{
	struct ns_cred writer;
	struct ns_attr a;
	int rc;

	pando_caller_cred(&writer);
	for (int tries = 0; tries < 3; tries++) {
		rc = ns_getattr(h->exp->mds.ns, h->ino, &a);
		if (rc)
			return rc;
		if (a.objects) {
			rc = write_objects(h, &a, &writer, off, iov, iovcnt, stable, n);
		} else {
			rc = write_inline(h, &writer, off, iov, iovcnt, stable, n);
			if (rc == -EFBIG && *n > 0)
				return 0; /* a short write: what landed inline */
			if (rc == -EFBIG) {
				rc = pando_move_to_objects(h);
				if (rc)
					return rc;
				continue;
			}
		}
		/* -EREMOTE / -ENODATA: the file moved since getattr. */
		if (rc != -EREMOTE && rc != -ENODATA)
			break;
	}
	return rc;
}

static void pando_read2(struct fsal_obj_handle *o, bool bypass, fsal_async_cb done_cb,
			struct fsal_io_arg *arg, void *caller_arg)
{
	struct pando_handle *h = to_handle(o);
	fsal_status_t st;
	size_t n = 0;
	bool eof = false;
	int rc;

	if (arg->info != NULL) {
		/* Our Ganesha's READ_PLUS reads plainly (info NULL) and
		 * answers one DATA segment (patch 0050); an io_info asks
		 * for hole detection, which the OSDs cannot give. */
		done_cb(o, fsalstat(ERR_FSAL_NOTSUPP, 0), arg, caller_arg);
		return;
	}
	st = io_allowed(h, bypass, arg->state, FSAL_O_READ);
	if (FSAL_IS_ERROR(st)) {
		done_cb(o, st, arg, caller_arg);
		return;
	}
	rc = pando_data_read(h, arg->offset, arg->iov, arg->iov_count, &n, &eof);
	atomic_fetch_add(&h->exp->mds.mds_read_bytes, n);
	arg->io_amount = n;
	arg->end_of_file = eof;
	done_cb(o, pando_status(rc), arg, caller_arg);
}

static void pando_write2(struct fsal_obj_handle *o, bool bypass, fsal_async_cb done_cb,
			 struct fsal_io_arg *arg, void *caller_arg)
{
	struct pando_handle *h = to_handle(o);
	fsal_status_t st;
	size_t n = 0;
	int rc;

	st = io_allowed(h, bypass, arg->state, FSAL_O_WRITE);
	if (FSAL_IS_ERROR(st)) {
		done_cb(o, st, arg, caller_arg);
		return;
	}
	rc = pando_data_write(h, arg->offset, arg->iov, arg->iov_count, arg->fsal_stable, &n);
	atomic_fetch_add(&h->exp->mds.mds_write_bytes, n);
	arg->io_amount = n;
	done_cb(o, pando_status(rc), arg, caller_arg);
}

/* An OSD restarted between this file's unstable writes and this COMMIT:
 * they may be gone.  NFSv4 clients see the export's verifier change;
 * NFSv3 WRITE and COMMIT carry Ganesha's own, which an FSAL cannot change,
 * so the COMMIT fails instead (the application's fsync gets EIO), once.
 * Asked of the export, not the handle: Ganesha may have evicted the
 * handle the writes came through. */
static bool unstable_lost(struct pando_handle *h)
{
	return unstable_files_lost(h->exp->mds.unstable, h->ino,
				   atomic_load(&h->exp->mds.verf_epoch));
}

static fsal_status_t pando_commit2(struct fsal_obj_handle *o, off_t offset, size_t len)
{
	struct pando_handle *h = to_handle(o);
	struct ns_attr a;
	int rc = ns_getattr(h->exp->mds.ns, h->ino, &a);

	if (!rc && a.objects)
		rc = pando_objects_flush(&h->exp->mds, h->ino);
	if (!rc && a.objects && unstable_lost(h)) {
		LogWarn(COMPONENT_FSAL,
			"pando: inode %" PRIu64 ": an OSD restarted or failed a "
			"sync under unstable writes; COMMIT fails so the client does not trust them",
			h->ino);
		pando_write_hole_resync_now(h);
		return fsalstat(ERR_FSAL_IO, EIO);
	}
	if (!rc && a.objects)
		pando_write_hole_committed(h);
	/* The store last: the size that unstable object writes left. */
	if (!rc)
		rc = ns_sync(h->exp->mds.ns);
	return pando_status(rc);
}

void pando_io_ops_init(struct fsal_obj_ops *ops)
{
	ops->read2 = pando_read2;
	ops->write2 = pando_write2;
	ops->commit2 = pando_commit2;
}
