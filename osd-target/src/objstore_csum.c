/* Extent checksums (objstore.h): a CRC32C per 64 KiB of object data, kept
 * by every write, truncation and removal, and read back, or verified
 * against the disk, for scrub.
 *
 * They live beside the data file, in "PPPP.OOOO.c": 8 bytes per extent
 * at extent * 8, the CRC (u32, big-endian) then a tag that says one is
 * stored (zero, as in a hole of the file, says none is).  A file rather
 * than RocksDB keys, because every data write changes them: a full disk
 * then fails that one write with ENOSPC, as the data's own pwrite would,
 * where a failed RocksDB write stops every later change to the index
 * (object removal included) until a restart.  The file is sparse like
 * the data: 128 KiB per GiB of object.
 *
 * An extent's CRC is always over the full 64 KiB, zeros past the object's
 * end: growing an object (by a write further on, or a truncate up) then
 * never changes the CRC of an extent it did not write.
 *
 * Ordering: ref->csum_lock is held from before a change reaches the data
 * file until its checksums are written, so the last record written for
 * an extent is always that of the last change to it.  The checksum file
 * is made durable by COMMIT, FLUSH, truncation and a stable write of no
 * bytes (the gateway's COMMIT); a stable write syncs only its data (see
 * obj_ref_write).  The file is made by an object's first write, long
 * after the create that synced the data file's name, so the sync that
 * commits its records syncs its shard's directory too when a checksum
 * file was made there since: without its name, a power cut would leave
 * the object's extents looking like holes, which scrub never checks.
 * After a crash that lost one but not the other, scrub sees a mismatch
 * and repairs the extent from a mirror. */
#include "objstore_internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byteorder.h"
#include "crc32c.h"
#include "log.h"

#define REC_LEN 8
#define REC_TAG 0x43524331u /* "CRC1": a CRC is stored */

void csum_init(struct objstore *s)
{
	void *zeros = calloc(1, OBJ_CSUM_EXTENT);

	/* Without memory to spare at open, the CRC of zeros comes out of a
	 * loop instead; both are the same value. */
	if (zeros) {
		s->zero_crc = crc32c(0, zeros, OBJ_CSUM_EXTENT);
		free(zeros);
		return;
	}
	s->zero_crc = 0;
	for (unsigned i = 0; i < OBJ_CSUM_EXTENT; i += 8)
		s->zero_crc = crc32c(s->zero_crc, "\0\0\0\0\0\0\0\0", 8);
}

uint32_t objstore_zero_crc(const struct objstore *s)
{
	return s->zero_crc;
}

/* Reads extent e into buf (OBJ_CSUM_EXTENT bytes), zeros past the end.
 * The last extent there can be stops short of 2^63, where pread would
 * refuse the whole request. */
static int extent_read(struct obj_ref *ref, uint64_t e, uint8_t *buf)
{
	uint64_t start = e << OBJ_CSUM_SHIFT;
	size_t want = start > OBJSTORE_MAX_OFFSET - OBJ_CSUM_EXTENT
			      ? (size_t)(OBJSTORE_MAX_OFFSET - start)
			      : OBJ_CSUM_EXTENT;
	size_t done = 0;

	while (done < want) {
		ssize_t r = pread(ref->fd, buf + done, want - done, (off_t)(start + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_error("objstore: read extent %" PRIu64 " of %" PRIx64 ".%" PRIx64
				  ": %s",
				  e, ref->id.partition, ref->id.object, strerror(errno));
			return -EIO;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	memset(buf + done, 0, OBJ_CSUM_EXTENT - done);
	return 0;
}

/* ---- the checksum file ------------------------------------------------ */

void csum_path(char *buf, const struct obj_id *id)
{
	obj_path(buf, id);
	strcat(buf, ".c");
}

bool csum_name_parse(const char *name, struct obj_id *id)
{
	char base[OBJ_PATH_LEN];
	size_t len = strlen(name);

	if (len != 35 || strcmp(name + 33, ".c"))
		return false;
	memcpy(base, name, 33);
	base[33] = 0;
	return obj_name_parse(base, id);
}

void csum_unlink(struct objstore *s, const struct obj_id *id)
{
	char path[CSUM_PATH_LEN];

	csum_path(path, id);
	if (unlinkat(s->objfd, path, 0) < 0 && errno != ENOENT)
		log_error("objstore: unlink objects/%s: %s", path, strerror(errno));
}

/* The checksum file's descriptor, opened on first use; -ENOENT when it
 * is not there and create is false (no extent has a CRC stored). */
static int csum_fd(struct obj_ref *ref, bool create)
{
	char path[CSUM_PATH_LEN];

	if (ref->cfd >= 0)
		return ref->cfd;
	csum_path(path, &ref->id);
	ref->cfd = openat(ref->s->objfd, path, O_RDWR | O_CLOEXEC);
	if (ref->cfd < 0 && errno == ENOENT && create) {
		ref->cfd = openat(ref->s->objfd, path, O_RDWR | O_CLOEXEC | O_CREAT, 0600);
		if (ref->cfd >= 0)
			atomic_store(&ref->s->csum_names_unsynced[obj_shard(&ref->id)], true);
	}
	if (ref->cfd >= 0)
		return ref->cfd;
	if (errno == ENOENT && !create)
		return -ENOENT;
	log_error("objstore: open objects/%s: %s", path, strerror(errno));
	return errno_io(errno);
}

static int rec_write(struct obj_ref *ref, uint64_t first, const uint8_t *recs, size_t n)
{
	int fd = csum_fd(ref, true);
	ssize_t w;

	if (fd < 0)
		return fd;
	w = pwrite(fd, recs, n * REC_LEN, (off_t)(first * REC_LEN));
	if (w == (ssize_t)(n * REC_LEN))
		return 0;
	if (w >= 0)
		errno = ENOSPC; /* a short write to a regular file: out of room */
	if (errno != ENOSPC && errno != EDQUOT)
		log_error("objstore: write checksums of %" PRIx64 ".%" PRIx64 ": %s",
			  ref->id.partition, ref->id.object, strerror(errno));
	return errno_io(errno);
}

static void csum_rec_encode(uint8_t *rec, uint32_t crc)
{
	put_be32(rec, crc);
	put_be32(rec + 4, REC_TAG);
}

/* CRC of extent e as it is on disk now. */
static int extent_crc(struct obj_ref *ref, uint64_t e, uint8_t **scratch, uint32_t *crc)
{
	int rc;

	if (!*scratch && !(*scratch = malloc(OBJ_CSUM_EXTENT)))
		return -ENOMEM;
	rc = extent_read(ref, e, *scratch);
	if (!rc)
		*crc = crc32c(0, *scratch, OBJ_CSUM_EXTENT);
	return rc;
}

/* Extents the write covers whole take their CRC from the caller's buffer;
 * the one or two it covers in part are read back from the data file.
 * One pwrite of the records, 8 bytes an extent. */
int csum_after_write(struct obj_ref *ref, uint64_t off, const void *buf, size_t len)
{
	uint64_t end = off + len, first = off >> OBJ_CSUM_SHIFT;
	size_t n = len ? (size_t)(((end - 1) >> OBJ_CSUM_SHIFT) - first + 1) : 0;
	uint8_t *scratch = NULL, *recs;
	int rc = 0;

	if (!n)
		return 0;
	recs = malloc(n * REC_LEN);
	if (!recs)
		return -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		uint64_t start = (first + i) << OBJ_CSUM_SHIFT;
		uint32_t crc = 0;

		if (start >= off && start + OBJ_CSUM_EXTENT <= end)
			crc = crc32c(0, (const uint8_t *)buf + (start - off), OBJ_CSUM_EXTENT);
		else
			rc = extent_crc(ref, first + i, &scratch, &crc);
		csum_rec_encode(recs + i * REC_LEN, crc);
	}
	if (!rc)
		rc = rec_write(ref, first, recs, n);
	free(scratch);
	free(recs);
	return rc;
}

/* Reads the records of extents [first, first + n) into recs; zeros (none
 * stored) past the file's end or with no file at all. */
static int rec_read(struct obj_ref *ref, uint64_t first, size_t n, uint8_t *recs)
{
	int fd = csum_fd(ref, false);
	size_t done = 0;

	memset(recs, 0, n * REC_LEN);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	while (done < n * REC_LEN) {
		ssize_t r =
			pread(fd, recs + done, n * REC_LEN - done, (off_t)(first * REC_LEN + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_error("objstore: read checksums of %" PRIx64 ".%" PRIx64 ": %s",
				  ref->id.partition, ref->id.object, strerror(errno));
			return -EIO;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return 0;
}

static bool rec_stored(const uint8_t *rec)
{
	return get_be32(rec + 4) == REC_TAG;
}

/* Records wholly past the new end go; the extent the end falls in is
 * recomputed, its tail now zeros, when it had a CRC (else it was, and
 * stays, zeros). */
int csum_after_truncate(struct obj_ref *ref, uint64_t length)
{
	uint64_t keep = (length + OBJ_CSUM_EXTENT - 1) >> OBJ_CSUM_SHIFT;
	uint8_t rec[REC_LEN], *scratch = NULL;
	int fd = csum_fd(ref, false), rc;
	uint32_t crc;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)(keep * REC_LEN)) < 0) {
		log_error("objstore: truncate checksums of %" PRIx64 ".%" PRIx64 ": %s",
			  ref->id.partition, ref->id.object, strerror(errno));
		return errno_io(errno);
	}
	if (length % OBJ_CSUM_EXTENT == 0)
		return 0;
	rc = rec_read(ref, keep - 1, 1, rec);
	if (rc || !rec_stored(rec))
		return rc;
	rc = extent_crc(ref, keep - 1, &scratch, &crc);
	free(scratch);
	if (!rc) {
		csum_rec_encode(rec, crc);
		rc = rec_write(ref, keep - 1, rec, 1);
	}
	return rc;
}

/* The names of the checksum files made in the object's shard, if any
 * were made since its directory was last synced.  The flag is cleared
 * before the sync, so a file made during it sets it again. */
static int csum_names_sync(struct obj_ref *ref)
{
	unsigned shard = obj_shard(&ref->id);
	char name[4];
	int rc;

	if (!atomic_exchange(&ref->s->csum_names_unsynced[shard], false))
		return 0;
	snprintf(name, sizeof(name), "%02x", shard);
	rc = fsync_at(ref->s->objfd, name);
	if (rc) {
		atomic_store(&ref->s->csum_names_unsynced[shard], true);
		atomic_fetch_add(&ref->s->sync_failures, 1);
	}
	return rc;
}

/* Opens the checksum file when this ref has not: the write that stored
 * the records may have gone through a ref the cache has since closed. */
int csum_sync(struct obj_ref *ref)
{
	int fd;

	pthread_mutex_lock(&ref->csum_lock);
	fd = csum_fd(ref, false);
	pthread_mutex_unlock(&ref->csum_lock);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fdatasync(fd) == 0)
		return csum_names_sync(ref);
	atomic_fetch_add(&ref->s->sync_failures, 1);
	log_error("objstore: fdatasync checksums of %" PRIx64 ".%" PRIx64 ": %s", ref->id.partition,
		  ref->id.object, strerror(errno));
	return errno_io(errno);
}

/* ---- reading them back ------------------------------------------------ */

/* Extents [first, first + n) under the lock, so that no write is half
 * way through one: the stored CRCs, and with verify the bytes read back. */
static int extents_check(struct obj_ref *ref, uint64_t first, size_t n, bool verify, uint8_t *buf,
			 uint8_t *recs, struct obj_csum *out)
{
	int rc;

	pthread_mutex_lock(&ref->csum_lock);
	rc = atomic_load(&ref->removed) ? -ENOENT : rec_read(ref, first, n, recs);
	for (size_t i = 0; !rc && i < n; i++) {
		struct obj_csum *c = &out[i];

		c->stored = rec_stored(recs + i * REC_LEN);
		c->crc = c->stored ? get_be32(recs + i * REC_LEN) : ref->s->zero_crc;
		c->verify = OBJ_CSUM_UNCHECKED;
		if (!verify)
			continue;
		if (extent_read(ref, first + i, buf))
			c->verify = OBJ_CSUM_UNREADABLE;
		else
			c->verify = crc32c(0, buf, OBJ_CSUM_EXTENT) == c->crc ? OBJ_CSUM_OK
									      : OBJ_CSUM_MISMATCH;
	}
	pthread_mutex_unlock(&ref->csum_lock);
	return rc;
}

int obj_ref_checksums(struct obj_ref *ref, uint64_t first, size_t count, bool verify,
		      struct obj_csum *out, uint64_t *length)
{
	uint8_t *recs, *buf = NULL;
	struct stat st;
	int rc;

	if (first > OBJ_CSUM_MAX_EXTENT || count > OBJ_CSUM_MAX_EXTENT - first + 1)
		return -EFBIG;
	recs = malloc(count ? count * REC_LEN : 1);
	if (verify && recs)
		buf = malloc(OBJ_CSUM_EXTENT);
	rc = !recs || (verify && !buf) ? -ENOMEM
				       : extents_check(ref, first, count, verify, buf, recs, out);
	free(buf);
	free(recs);
	if (!rc && fstat(ref->fd, &st) < 0)
		rc = -EIO;
	if (!rc)
		*length = (uint64_t)st.st_size;
	return rc;
}
