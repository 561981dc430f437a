/* Extent checksums (objstore.h): a CRC32C per 64 KiB of object data under
 * 'C' keys in RocksDB, kept by every write, truncation and removal, and
 * read back, or verified against the disk, for scrub.
 *
 * An extent's CRC is always over the full 64 KiB, zeros past the object's
 * end: growing an object (by a write further on, or a truncate up) then
 * never changes the CRC of an extent it did not write.
 *
 * Ordering: ref->csum_lock is held from before a change reaches the file
 * until its checksums are put, so the last put for an extent is always
 * that of the last change to it.  Checksums of UNSTABLE writes are put
 * without sync, like their data; stable writes sync them, and a COMMIT or
 * FLUSH syncs the log.  After a crash that lost one but not the other,
 * scrub sees a mismatch and repairs the extent from a mirror. */
#include "objstore_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byteorder.h"
#include "crc32c.h"
#include "log.h"

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
			      ? (size_t)(OBJSTORE_MAX_OFFSET - start) : OBJ_CSUM_EXTENT;
	size_t done = 0;

	while (done < want) {
		ssize_t r = pread(ref->fd, buf + done, want - done, (off_t)(start + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_error("objstore: read extent %" PRIu64 " of %" PRIx64 ".%" PRIx64 ": %s",
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

static void batch_put_crc(rocksdb_writebatch_t *b, const struct obj_id *id, uint64_t e,
			  uint32_t crc)
{
	uint8_t k[KEY_MAX], v[4];

	put_be32(v, crc);
	rocksdb_writebatch_put(b, (const char *)k, key_csum(k, id, e), (const char *)v, 4);
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

static int batch_commit(struct objstore *s, rocksdb_writebatch_t *b, bool sync)
{
	int rc = sync ? db_write(s, b) : db_write_nosync(s, b);

	rocksdb_writebatch_destroy(b);
	return rc;
}

/* Extents the write covers whole take their CRC from the caller's buffer;
 * the one or two it covers in part are read back from the file. */
int csum_after_write(struct obj_ref *ref, uint64_t off, const void *buf, size_t len,
		     bool sync)
{
	rocksdb_writebatch_t *b;
	uint8_t *scratch = NULL;
	uint64_t end = off + len;
	int rc = 0;

	if (!len)
		return 0;
	b = rocksdb_writebatch_create();
	for (uint64_t e = off >> OBJ_CSUM_SHIFT; !rc && e <= (end - 1) >> OBJ_CSUM_SHIFT; e++) {
		uint64_t start = e << OBJ_CSUM_SHIFT;
		uint32_t crc;

		if (start >= off && start + OBJ_CSUM_EXTENT <= end)
			crc = crc32c(0, (const uint8_t *)buf + (start - off), OBJ_CSUM_EXTENT);
		else
			rc = extent_crc(ref, e, &scratch, &crc);
		if (!rc)
			batch_put_crc(b, &ref->id, e, crc);
	}
	free(scratch);
	if (rc) {
		rocksdb_writebatch_destroy(b);
		return rc;
	}
	return batch_commit(ref->s, b, sync);
}

/* Queues deletes of the object's checksums from extent `from` on. */
static int queue_deletes(struct objstore *s, const struct obj_id *id, uint64_t from,
			 rocksdb_writebatch_t *b, rocksdb_writebatch_wi_t *wb)
{
	struct db_iter i;

	for (iter_open_csums(s, &i, id, from); iter_valid(&i); rocksdb_iter_next(i.it)) {
		size_t len;
		const uint8_t *k = iter_key(&i, &len);

		if (b)
			rocksdb_writebatch_delete(b, (const char *)k, len);
		else
			rocksdb_writebatch_wi_delete(wb, (const char *)k, len);
	}
	return iter_close(&i);
}

/* Extents wholly past the new end go; the one the end falls in is
 * recomputed, its tail now zeros, when it had a CRC (else it was, and
 * stays, zeros).  Synced: the truncation is. */
int csum_after_truncate(struct obj_ref *ref, uint64_t length)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t keep = (length + OBJ_CSUM_EXTENT - 1) >> OBJ_CSUM_SHIFT;
	uint64_t last = length >> OBJ_CSUM_SHIFT;
	uint8_t k[KEY_MAX], *scratch = NULL;
	int rc = queue_deletes(ref->s, &ref->id, keep, b, NULL);

	if (!rc && length % OBJ_CSUM_EXTENT) {
		rc = db_exists(ref->s, k, key_csum(k, &ref->id, last));
		if (rc > 0) {
			uint32_t crc;

			rc = extent_crc(ref, last, &scratch, &crc);
			if (!rc)
				batch_put_crc(b, &ref->id, last, crc);
		}
	}
	free(scratch);
	if (rc < 0) {
		rocksdb_writebatch_destroy(b);
		return rc;
	}
	return batch_commit(ref->s, b, true);
}

int csum_delete_wi(struct objstore *s, rocksdb_writebatch_wi_t *wb, const struct obj_id *id)
{
	return queue_deletes(s, id, 0, NULL, wb);
}

int csum_delete_now(struct objstore *s, const struct obj_id *id)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	int rc = queue_deletes(s, id, 0, b, NULL);

	if (rc || !rocksdb_writebatch_count(b)) {
		rocksdb_writebatch_destroy(b);
		return rc;
	}
	return batch_commit(s, b, true);
}

/* ---- reading them back ------------------------------------------------ */

static int stored_crc(struct obj_ref *ref, uint64_t e, struct obj_csum *c)
{
	uint8_t k[KEY_MAX];
	size_t vlen;
	char *v;
	int rc = db_get(ref->s, k, key_csum(k, &ref->id, e), &v, &vlen);

	if (rc)
		return rc;
	c->stored = v != NULL;
	c->crc = ref->s->zero_crc;
	if (v && vlen == 4) {
		c->crc = get_be32((const uint8_t *)v);
	} else if (v) {
		log_error("objstore: bad checksum record for %" PRIx64 ".%" PRIx64 " extent %" PRIu64,
			  ref->id.partition, ref->id.object, e);
		rc = -EIO;
	}
	rocksdb_free(v);
	return rc;
}

/* One extent, under the lock so that no write is half way through it. */
static int extent_check(struct obj_ref *ref, uint64_t e, bool verify, uint8_t *buf,
			struct obj_csum *c)
{
	int rc;

	pthread_mutex_lock(&ref->csum_lock);
	rc = atomic_load(&ref->removed) ? -ENOENT : stored_crc(ref, e, c);
	c->verify = OBJ_CSUM_UNCHECKED;
	if (!rc && verify) {
		if (extent_read(ref, e, buf))
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
	uint8_t *buf = NULL;
	int rc = 0;

	if (first > OBJ_CSUM_MAX_EXTENT || count > OBJ_CSUM_MAX_EXTENT - first + 1)
		return -EFBIG;
	if (verify && !(buf = malloc(OBJ_CSUM_EXTENT)))
		return -ENOMEM;
	for (size_t i = 0; !rc && i < count; i++)
		rc = extent_check(ref, first + i, verify, buf, &out[i]);
	free(buf);
	if (!rc) {
		struct stat st;

		if (fstat(ref->fd, &st) < 0)
			return -EIO;
		*length = (uint64_t)st.st_size;
	}
	return rc;
}
