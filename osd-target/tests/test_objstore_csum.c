/* The object store's extent checksums: kept by writes (whole, partial,
 * sparse, racing), truncation and removal, persistent, and verified
 * against the bytes on disk.  Every check compares with a model of the
 * object held in memory.  Against a real RocksDB in a temporary dir. */
#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "log.h"
#include "objstore.h"
#include "objstore_internal.h"

#define EXT OBJ_CSUM_EXTENT
#define MODEL (24 * EXT)
#define PART 1

static char root[] = "/tmp/pando-csum-XXXXXX";
static char dir[64];
static uint8_t model[MODEL];
static uint64_t model_len;

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static struct obj_ref *get(struct objstore *s, uint64_t obj)
{
	struct obj_id id = { PART, obj };
	struct obj_ref *ref = NULL;

	CHECK_EQ(objstore_get(s, &id, &ref), 0);
	return ref;
}

static void model_write(struct objstore *s, uint64_t obj, uint64_t off, size_t len, int seed)
{
	struct obj_ref *ref = get(s, obj);

	for (size_t i = 0; i < len; i++)
		model[off + i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
	if (ref)
		CHECK_EQ(obj_ref_write(ref, off, model + off, len, OBJ_UNSTABLE), 0);
	objstore_put(s, ref);
	if (off + len > model_len)
		model_len = off + len;
}

static uint32_t model_crc(uint64_t e)
{
	return crc32c(0, model + e * EXT, EXT);
}

/* Every extent's CRC is the model's; those never written are not stored;
 * verify finds every one intact. */
static void check_model(struct objstore *s, uint64_t obj, const bool *stored, size_t n)
{
	struct obj_csum c[MODEL / EXT];
	struct obj_ref *ref = get(s, obj);
	uint64_t len = 0;

	if (!ref)
		return;
	CHECK_EQ(obj_ref_checksums(ref, 0, n, true, c, &len), 0);
	CHECK_EQ(len, model_len);
	for (size_t e = 0; e < n; e++) {
		CHECK_EQ(c[e].crc, model_crc(e));
		CHECK_EQ(c[e].stored, stored[e]);
		CHECK_EQ(c[e].verify, OBJ_CSUM_OK);
	}
	objstore_put(s, ref);
}

static void test_write_overwrite_truncate(struct objstore *s)
{
	bool stored[MODEL / EXT] = { 0 };
	struct obj_create_req req = { .object = 1 };
	uint8_t val[8];
	struct obj_id id = { PART, 1 };
	int res;

	memset(model, 0, sizeof(model));
	model_len = 0;
	CHECK_EQ(objstore_object_create(s, PART, &req, 1, &res), 0);
	check_model(s, 1, stored, 4);     /* empty: all holes */
	model_write(s, 1, 0, 2 * EXT, 1); /* two whole extents */
	stored[0] = stored[1] = true;
	check_model(s, 1, stored, 4);
	model_write(s, 1, 100, 1000, 2); /* inside extent 0 */
	check_model(s, 1, stored, 4);
	model_write(s, 1, EXT - 10, 20, 3); /* across 0 and 1 */
	check_model(s, 1, stored, 4);
	model_write(s, 1, 2 * EXT, 5, 4); /* a short tail */
	stored[2] = true;
	check_model(s, 1, stored, 4);
	model_write(s, 1, 10 * EXT + 7, 3 * EXT, 5); /* sparse, unaligned */
	stored[10] = stored[11] = stored[12] = stored[13] = true;
	check_model(s, 1, stored, 16);

	/* truncate down into extent 1: 2..13 go, 1's tail becomes zeros */
	put64(val, EXT + 10);
	CHECK_EQ(objstore_attr_set(s, &id, OBJSTORE_ATTR_PAGE_INFO, OBJ_ATTR_LENGTH, val, 8), 0);
	memset(model + EXT + 10, 0, sizeof(model) - EXT - 10);
	model_len = EXT + 10;
	memset(stored + 2, 0, sizeof(stored) - 2);
	check_model(s, 1, stored, 16);
	/* and up again: zeros, nothing stored changes */
	put64(val, 5 * EXT);
	CHECK_EQ(objstore_attr_set(s, &id, OBJSTORE_ATTR_PAGE_INFO, OBJ_ATTR_LENGTH, val, 8), 0);
	model_len = 5 * EXT;
	check_model(s, 1, stored, 16);
	/* to an extent boundary, then to zero */
	put64(val, EXT);
	CHECK_EQ(objstore_attr_set(s, &id, OBJSTORE_ATTR_PAGE_INFO, OBJ_ATTR_LENGTH, val, 8), 0);
	memset(model + EXT, 0, EXT);
	model_len = EXT;
	stored[1] = false;
	check_model(s, 1, stored, 4);
	put64(val, 0);
	CHECK_EQ(objstore_attr_set(s, &id, OBJSTORE_ATTR_PAGE_INFO, OBJ_ATTR_LENGTH, val, 8), 0);
	memset(model, 0, EXT);
	model_len = 0;
	stored[0] = false;
	check_model(s, 1, stored, 4);
}

/* Bytes changed behind the store's back: verify names exactly that
 * extent, and only with verify are the bytes read at all. */
static void test_corruption_found(struct objstore *s)
{
	struct obj_create_req req = { .object = 2 };
	struct obj_id id = { PART, 2 };
	struct obj_csum c[6];
	struct obj_ref *ref;
	char path[OBJ_PATH_LEN + 16];
	uint64_t len;
	int res, fd;

	CHECK_EQ(objstore_object_create(s, PART, &req, 1, &res), 0);
	model_len = 0;
	model_write(s, 2, 0, 5 * EXT + 123, 9);
	obj_path(path, &id);
	fd = openat(s->objfd, path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pwrite(fd, "rot", 3, 3 * EXT + 4000), 3);
	close(fd);
	ref = get(s, 2);
	if (!ref)
		return;
	CHECK_EQ(obj_ref_checksums(ref, 0, 6, false, c, &len), 0);
	for (int e = 0; e < 6; e++)
		CHECK_EQ(c[e].verify, OBJ_CSUM_UNCHECKED);
	CHECK_EQ(obj_ref_checksums(ref, 0, 6, true, c, &len), 0);
	CHECK_EQ(len, 5 * EXT + 123);
	for (int e = 0; e < 6; e++)
		CHECK_EQ(c[e].verify, e == 3 ? OBJ_CSUM_MISMATCH : OBJ_CSUM_OK);
	CHECK_EQ(c[3].crc, model_crc(3)); /* the stored one */
	/* a write over it (the repair) makes it whole again */
	CHECK_EQ(obj_ref_write(ref, 3 * EXT, model + 3 * EXT, EXT, OBJ_FILE_SYNC), 0);
	CHECK_EQ(obj_ref_checksums(ref, 3, 1, true, c, &len), 0);
	CHECK_EQ(c[0].verify, OBJ_CSUM_OK);
	/* bounds: the last extent there is, and one past it */
	CHECK_EQ(obj_ref_checksums(ref, OBJ_CSUM_MAX_EXTENT, 1, true, c, &len), 0);
	CHECK_EQ(c[0].stored, false);
	CHECK_EQ(obj_ref_checksums(ref, OBJ_CSUM_MAX_EXTENT, 2, false, c, &len), -EFBIG);
	CHECK_EQ(obj_ref_checksums(ref, OBJ_CSUM_MAX_EXTENT + 1, 1, false, c, &len), -EFBIG);
	objstore_put(s, ref);
}

/* The size of an object's checksum file, -1 when there is none. */
static long csum_file_size(struct objstore *s, uint64_t obj)
{
	struct obj_id id = { PART, obj };
	char path[CSUM_PATH_LEN];
	struct stat st;

	csum_path(path, &id);
	return fstatat(s->objfd, path, &st, 0) ? -1 : (long)st.st_size;
}

/* Removal takes the checksums with it; a new object of the id has none,
 * even where a crash left the old one's file behind. */
static void test_remove_forgets(struct objstore *s)
{
	struct obj_create_req req = { .object = 2 };
	struct obj_id id = { PART, 2 };
	char path[CSUM_PATH_LEN];
	uint64_t obj = 2;
	int res, fd;

	CHECK_EQ(csum_file_size(s, 2), 6 * 8); /* 8 bytes an extent */
	CHECK_EQ(objstore_object_remove(s, PART, &obj, 1, &res), 0);
	CHECK_EQ(res, 0);
	CHECK_EQ(csum_file_size(s, 2), -1);
	csum_path(path, &id);
	fd = openat(s->objfd, path, O_CREAT | O_WRONLY, 0640); /* as a crash leaves it */
	CHECK(fd >= 0 && write(fd, "\1\2\3\4CRC1", 8) == 8);
	close(fd);
	CHECK_EQ(objstore_object_create(s, PART, &req, 1, &res), 0);
	CHECK_EQ(res, 0);
	CHECK_EQ(csum_file_size(s, 2), -1);
}

struct racer {
	struct objstore *s;
	int seed;
};

/* Unaligned writes of 40 KiB over the same 8 extents, from 4 threads. */
static void *race(void *arg)
{
	struct racer *r = arg;
	uint8_t buf[40 << 10];
	struct obj_ref *ref = get(r->s, 3);

	for (int i = 0; ref && i < 200; i++) {
		uint64_t off = (uint64_t)((r->seed * 7919 + i * 104729) % (8 * EXT - sizeof(buf)));

		memset(buf, r->seed * 16 + i, sizeof(buf));
		CHECK_EQ(obj_ref_write(ref, off, buf, sizeof(buf), OBJ_UNSTABLE), 0);
	}
	objstore_put(r->s, ref);
	return NULL;
}

/* However writes interleave, every checksum ends up that of the data. */
static void test_racing_writes(struct objstore *s)
{
	struct obj_create_req req = { .object = 3 };
	struct racer r[4];
	pthread_t th[4];
	struct obj_csum c[8];
	struct obj_ref *ref;
	uint64_t len;
	int res;

	CHECK_EQ(objstore_object_create(s, PART, &req, 1, &res), 0);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct racer){ s, i + 1 };
		pthread_create(&th[i], NULL, race, &r[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ref = get(s, 3);
	if (!ref)
		return;
	CHECK_EQ(obj_ref_checksums(ref, 0, 8, true, c, &len), 0);
	for (int e = 0; e < 8; e++)
		CHECK_EQ(c[e].verify, OBJ_CSUM_OK);
	objstore_put(s, ref);
}

/* Checksums outlive a close and reopen (a COMMIT-synced write). */
static struct objstore *test_persist(struct objstore *s)
{
	struct obj_csum c[4];
	struct obj_ref *ref;
	uint64_t len;

	objstore_close(s);
	s = NULL;
	CHECK_EQ(objstore_open(dir, &s), 0);
	if (!s)
		return NULL;
	ref = get(s, 1);
	if (ref) {
		CHECK_EQ(obj_ref_write(ref, 0, "persist", 7, OBJ_UNSTABLE), 0);
		CHECK_EQ(obj_ref_sync(ref), 0);
		objstore_put(s, ref);
	}
	objstore_close(s);
	s = NULL;
	CHECK_EQ(objstore_open(dir, &s), 0);
	ref = s ? get(s, 1) : NULL;
	if (ref) {
		memset(model, 0, sizeof(model));
		memcpy(model, "persist", 7);
		CHECK_EQ(obj_ref_checksums(ref, 0, 4, true, c, &len), 0);
		CHECK_EQ(c[0].crc, model_crc(0));
		CHECK_EQ(c[0].stored, true);
		CHECK_EQ(c[0].verify, OBJ_CSUM_OK);
		objstore_put(s, ref);
	}
	return s;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	struct objstore *s = NULL;

	log_init(LOG_ERROR, stderr);
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/data", root);
	CHECK_EQ(objstore_format(dir, 1, 1), 0);
	CHECK_EQ(objstore_open(dir, &s), 0);
	if (s) {
		CHECK_EQ(objstore_partition_create(s, PART), 0);
		test_write_overwrite_truncate(s);
		test_corruption_found(s);
		test_remove_forgets(s);
		test_racing_writes(s);
		s = test_persist(s);
		if (s)
			objstore_close(s);
	}
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	CHECK_DONE();
}
