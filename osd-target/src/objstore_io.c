/* Object data I/O through an open-object reference.  Every call checks
 * removed first: a removed object's descriptor stays open until the last
 * put, and I/O through it would quietly succeed on an unlinked file. */
#include "objstore_internal.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

void obj_ref_cap_versions(const struct obj_ref *ref, uint32_t *floor, uint32_t *cur)
{
	uint64_t v = atomic_load(&ref->cap_versions);

	*floor = (uint32_t)(v >> 32);
	*cur = (uint32_t)v;
}

void obj_ref_cap_hold(struct obj_ref *ref)
{
	pthread_rwlock_rdlock(&ref->cap_lock);
}

void obj_ref_cap_release(struct obj_ref *ref)
{
	pthread_rwlock_unlock(&ref->cap_lock);
}

static int ref_stat(struct obj_ref *ref, struct stat *st)
{
	if (fstat(ref->fd, st) == 0)
		return 0;
	log_error("objstore: fstat %" PRIx64 ".%" PRIx64 ": %s", ref->id.partition, ref->id.object,
		  strerror(errno));
	return -EIO;
}

static int ref_datasync(struct obj_ref *ref)
{
	if (fdatasync(ref->fd) == 0)
		return 0;
	atomic_fetch_add(&ref->s->sync_failures, 1);
	log_error("objstore: fdatasync %" PRIx64 ".%" PRIx64 ": %s", ref->id.partition,
		  ref->id.object, strerror(errno));
	return errno_io(errno);
}

int obj_ref_read(struct obj_ref *ref, uint64_t off, size_t len, void *buf, size_t *n, bool *eof)
{
	struct stat st;
	size_t done = 0;
	int rc;

	if (atomic_load(&ref->removed))
		return -ENOENT;
	if (off > OBJSTORE_MAX_OFFSET)
		return -EFBIG;
	if (len > OBJSTORE_MAX_OFFSET - off)
		len = OBJSTORE_MAX_OFFSET - off;
	while (done < len) {
		ssize_t r = pread(ref->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_error("objstore: read %" PRIx64 ".%" PRIx64 ": %s", ref->id.partition,
				  ref->id.object, strerror(errno));
			return -EIO;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	/* After the read, so that a concurrent extension is not reported
	 * as the end of the object. */
	rc = ref_stat(ref, &st);
	if (rc)
		return rc;
	*n = done;
	*eof = off + done >= (uint64_t)st.st_size;
	return 0;
}

uint64_t obj_ref_readable(struct obj_ref *ref, uint64_t off, uint64_t len)
{
	struct stat st;

	if (fstat(ref->fd, &st) < 0 || (uint64_t)st.st_size <= off)
		return 0;
	return (uint64_t)st.st_size - off < len ? (uint64_t)st.st_size - off : len;
}

/* pwrite() until done; 0 or -errno. */
static int ref_pwrite(struct obj_ref *ref, uint64_t off, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r =
			pwrite(ref->fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;

			/* A full disk or a too-large file is the client's to handle,
			 * not a fault to log. */
			if (e != ENOSPC && e != EDQUOT && e != EFBIG)
				log_error("objstore: write %" PRIx64 ".%" PRIx64 ": %s",
					  ref->id.partition, ref->id.object, strerror(e));
			return errno_io(e);
		}
		done += (size_t)r;
	}
	return 0;
}

/* The data and its extent checksums under csum_lock (objstore_csum.c);
 * the sync after it, so that writes to one object still sync together.
 * A stable write syncs its data, not its checksums: a second fdatasync
 * would double its cost (130 -> 240 us for 64 KiB on the test VM), and a
 * checksum a crash loses only makes scrub repair a good extent from a
 * mirror.  COMMIT and FLUSH sync both (obj_ref_sync), and so does a stable
 * write of no bytes: that is the gateway's COMMIT (objio_flush), which
 * wants the verifier only a write answers, and a crash after it must not
 * leave durable data beside old CRCs on every mirror (unrepairable).  A
 * write that fails part way leaves the checksums of what it changed
 * stale: scrub finds and repairs them from a mirror. */
int obj_ref_write(struct obj_ref *ref, uint64_t off, const void *buf, size_t len,
		  enum obj_stable stable)
{
	int rc;

	if ((unsigned)stable > OBJ_FILE_SYNC)
		return -EINVAL;
	if (off > OBJSTORE_MAX_OFFSET || len > OBJSTORE_MAX_OFFSET - off)
		return -EFBIG;
	if (!len && stable != OBJ_UNSTABLE)
		return obj_ref_sync(ref);
	pthread_mutex_lock(&ref->csum_lock);
	rc = atomic_load(&ref->removed) ? -ENOENT : ref_pwrite(ref, off, buf, len);
	if (!rc)
		rc = csum_after_write(ref, off, buf, len);
	pthread_mutex_unlock(&ref->csum_lock);
	return rc || stable == OBJ_UNSTABLE ? rc : ref_datasync(ref);
}

/* Durably: the length is an attribute the caller is told is set. */
int ref_truncate(struct obj_ref *ref, uint64_t length)
{
	int rc = 0;

	pthread_mutex_lock(&ref->csum_lock);
	if (atomic_load(&ref->removed)) {
		rc = -ENOENT;
	} else if (ftruncate(ref->fd, (off_t)length) < 0) {
		if (errno != ENOSPC && errno != EFBIG)
			log_error("objstore: truncate %" PRIx64 ".%" PRIx64 ": %s",
				  ref->id.partition, ref->id.object, strerror(errno));
		rc = errno_io(errno);
	}
	if (!rc)
		rc = csum_after_truncate(ref, length);
	pthread_mutex_unlock(&ref->csum_lock);
	if (!rc)
		rc = ref_datasync(ref);
	return rc ? rc : csum_sync(ref);
}

/* The data, then its checksums. */
int obj_ref_sync(struct obj_ref *ref)
{
	int rc;

	if (atomic_load(&ref->removed))
		return -ENOENT;
	rc = ref_datasync(ref);
	return rc ? rc : csum_sync(ref);
}

int obj_ref_info(struct obj_ref *ref, struct obj_info *info)
{
	struct obj_rec r;
	struct stat st;
	int rc;

	if (atomic_load(&ref->removed))
		return -ENOENT;
	rc = ref_stat(ref, &st);
	if (!rc)
		rc = rec_load(ref->s, &ref->id, &r);
	if (rc)
		return rc;
	info->length = (uint64_t)st.st_size;
	info->used_bytes = (uint64_t)st.st_blocks * 512;
	info->mtime_ns = ts_ns(&st.st_mtim);
	info->ctime_ns = r.ctime_ns;
	info->created_ns = r.created_ns;
	info->owner_file = r.owner_file;
	info->component = r.component;
	obj_ref_cap_versions(ref, &info->read_floor, &info->cap_version);
	return 0;
}
