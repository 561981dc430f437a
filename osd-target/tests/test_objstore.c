/* Unit tests for the object store, against a real RocksDB in a temporary
 * directory. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "objstore.h"
#include "objstore_internal.h"

#define MIB (1u << 20)
#define GIB (1ull << 30)

static char root[] = "/tmp/pando-objstore-XXXXXX";
static char dir[64];

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static struct objstore *reopen(struct objstore *s)
{
	struct objstore *n = NULL;

	objstore_close(s);
	CHECK_EQ(objstore_open(dir, &n), 0);
	return n;
}

static int create_one(struct objstore *s, uint64_t part, uint64_t obj)
{
	struct obj_create_req req = { .object = obj, .owner_file = 42, .component = 1 };
	int res = -1, rc = objstore_object_create(s, part, &req, 1, &res);

	return rc ? rc : res;
}

static int write_at(struct objstore *s, uint64_t part, uint64_t obj, uint64_t off, const void *buf,
		    size_t len, enum obj_stable stable)
{
	struct obj_id id = { part, obj };
	struct obj_ref *ref;
	int rc = objstore_get(s, &id, &ref);

	if (rc)
		return rc;
	rc = obj_ref_write(ref, off, buf, len, stable);
	objstore_put(s, ref);
	return rc;
}

static int read_at(struct objstore *s, uint64_t part, uint64_t obj, uint64_t off, void *buf,
		   size_t len, size_t *n, bool *eof)
{
	struct obj_id id = { part, obj };
	struct obj_ref *ref;
	int rc = objstore_get(s, &id, &ref);

	if (rc)
		return rc;
	rc = obj_ref_read(ref, off, len, buf, n, eof);
	objstore_put(s, ref);
	return rc;
}

static int info_of(struct objstore *s, uint64_t part, uint64_t obj, struct obj_info *in)
{
	struct obj_id id = { part, obj };
	struct obj_ref *ref;
	int rc = objstore_get(s, &id, &ref);

	if (rc)
		return rc;
	rc = obj_ref_info(ref, in);
	objstore_put(s, ref);
	return rc;
}

/* A process that dies without objstore_close: what it acknowledged stays,
 * and the orphan file a crash can leave is swept at the next open.  Runs
 * first, while this process has no RocksDB threads that fork would lose. */
static void test_crash(void)
{
	char orphan[128], buf[16] = { 0 };
	struct objstore *s = NULL;
	size_t n = 0;
	bool eof = false;
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		if (objstore_format(dir, 7, 3) || objstore_open(dir, &s) ||
		    objstore_partition_create(s, 1) || create_one(s, 1, 5) ||
		    write_at(s, 1, 5, 0, "hello", 5, OBJ_DATA_SYNC))
			_exit(1);
		_exit(0);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(orphan, sizeof(orphan), "%s/objects/00/%016x.%016x", dir, 1, 0xff);
	close(open(orphan, O_CREAT | O_WRONLY, 0644));
	CHECK_EQ(access(orphan, F_OK), 0);

	CHECK_EQ(objstore_open(dir, &s), 0);
	CHECK(access(orphan, F_OK) < 0);
	CHECK_EQ(objstore_superblock(s)->osd_id, 7);
	CHECK_EQ(objstore_superblock(s)->key_id, 3);
	CHECK_EQ(read_at(s, 1, 5, 0, buf, sizeof(buf), &n, &eof), 0);
	CHECK_EQ(n, 5);
	CHECK(eof);
	CHECK(memcmp(buf, "hello", 5) == 0);
	objstore_close(s);
}

static void test_format(void)
{
	const struct objstore_superblock *sb;
	struct objstore_superblock first;
	struct objstore *s = NULL;
	char other[96];

	CHECK_EQ(objstore_format(dir, 7, 3), -EEXIST);
	snprintf(other, sizeof(other), "%s/none", root);
	CHECK_EQ(mkdir(other, 0700), 0);
	CHECK_EQ(objstore_open(other, &s), -ENOENT);
	snprintf(other, sizeof(other), "%s/other", root);
	CHECK_EQ(objstore_format(other, 9, 2), 0);
	CHECK_EQ(objstore_format(other, 9, 2), -EEXIST);
	CHECK_EQ(objstore_open(other, &s), 0);
	sb = objstore_superblock(s);
	first = *sb;
	CHECK_EQ(sb->osd_id, 9);
	CHECK_EQ(sb->key_id, 2);
	CHECK(sb->created_ns > 0);
	objstore_close(s);
	CHECK_EQ(objstore_open(other, &s), 0);
	CHECK(memcmp(objstore_superblock(s), &first, sizeof(first)) == 0);
	objstore_close(s);
}

static void test_partitions(struct objstore *s)
{
	uint64_t ids[8];
	size_t n = 0;
	bool eof = false;

	CHECK_EQ(objstore_partition_create(s, 0), -EINVAL);
	CHECK_EQ(objstore_partition_create(s, 1), -EEXIST);
	CHECK_EQ(objstore_partition_create(s, 3), 0);
	CHECK_EQ(objstore_partition_create(s, UINT64_MAX), 0);
	CHECK_EQ(objstore_partition_create(s, 2), 0);
	CHECK_EQ(objstore_partition_list(s, 0, ids, 8, &n, &eof), 0);
	CHECK_EQ(n, 4);
	CHECK(eof);
	CHECK_EQ(ids[0], 1);
	CHECK_EQ(ids[1], 2);
	CHECK_EQ(ids[2], 3);
	CHECK(ids[3] == UINT64_MAX);
	CHECK_EQ(objstore_partition_list(s, 1, ids, 2, &n, &eof), 0);
	CHECK_EQ(n, 2);
	CHECK(!eof);
	CHECK_EQ(ids[0], 2);
	CHECK_EQ(objstore_partition_list(s, UINT64_MAX, ids, 8, &n, &eof), 0);
	CHECK_EQ(n, 0);
	CHECK(eof);
	CHECK_EQ(objstore_partition_remove(s, 1), -ENOTEMPTY);
	CHECK_EQ(objstore_partition_remove(s, 3), 0);
	CHECK_EQ(objstore_partition_remove(s, 3), -ENOENT);
	CHECK_EQ(objstore_partition_remove(s, UINT64_MAX), 0);
	CHECK_EQ(objstore_partition_remove(s, 0), -EINVAL);
	CHECK_EQ(create_one(s, 3, 1), -ENOENT);
	CHECK_EQ(objstore_object_list(s, 3, 0, ids, 8, &n, &eof), -ENOENT);
}

static bool all_distinct(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (v[i] == v[j])
				return false;
	return true;
}

static struct objstore *test_create(struct objstore *s)
{
	struct obj_create_req reqs[6] = {
		{ .object = 0 }, { .object = 100 }, { .object = 0 },
		{ .object = 1 }, { .object = 100 }, { .object = 0 },
	};
	uint64_t seen[16], ids[16];
	int res[6];
	size_t n = 0, k = 0;
	bool eof = false;
	struct objstore_stat st;

	CHECK_EQ(objstore_object_create(s, 2, reqs, 6, res), 0);
	CHECK_EQ(res[0], 0);
	CHECK_EQ(res[1], 0);
	CHECK_EQ(res[2], 0);
	CHECK_EQ(res[3], 0);
	CHECK_EQ(res[4], -EEXIST);
	CHECK_EQ(res[5], 0);
	/* Picked ids avoid the explicit ones of the same batch. */
	for (int i = 0; i < 6; i++) {
		if (i != 4)
			seen[k++] = reqs[i].object;
		CHECK(reqs[i].object != 0);
	}
	CHECK(all_distinct(seen, k));
	CHECK_EQ(create_one(s, 2, 100), -EEXIST);
	CHECK_EQ(objstore_statfs(s, &st), 0);
	CHECK_EQ(st.partitions, 2);
	CHECK_EQ(st.objects, 6);
	CHECK(st.total_bytes > 0 && st.free_bytes <= st.total_bytes);

	s = reopen(s);
	for (int i = 0; i < 3; i++) {
		struct obj_create_req r = { 0 };
		int rc = -1;

		CHECK_EQ(objstore_object_create(s, 2, &r, 1, &rc), 0);
		CHECK_EQ(rc, 0);
		seen[k++] = r.object;
	}
	CHECK(all_distinct(seen, k));
	CHECK_EQ(objstore_object_list(s, 2, 0, ids, 16, &n, &eof), 0);
	CHECK_EQ(n, k);
	CHECK(eof);
	for (size_t i = 1; i < n; i++)
		CHECK(ids[i - 1] < ids[i]);
	CHECK_EQ(objstore_object_list(s, 2, ids[1], ids, 2, &n, &eof), 0);
	CHECK_EQ(n, 2);
	CHECK(!eof);
	CHECK_EQ(objstore_statfs(s, &st), 0);
	CHECK_EQ(st.objects, 9);
	return s;
}

static void test_io(struct objstore *s)
{
	char buf[64] = { 0 };
	struct obj_id id = { 1, 10 };
	struct obj_ref *ref = NULL;
	size_t n = 0;
	bool eof = false;

	CHECK_EQ(create_one(s, 1, 10), 0);
	CHECK_EQ(write_at(s, 1, 10, 0, "0123456789", 10, OBJ_UNSTABLE), 0);
	CHECK_EQ(write_at(s, 1, 10, 10, "abcdef", 6, OBJ_FILE_SYNC), 0);
	CHECK_EQ(read_at(s, 1, 10, 0, buf, 10, &n, &eof), 0);
	CHECK_EQ(n, 10);
	CHECK(!eof);
	CHECK(memcmp(buf, "0123456789", 10) == 0);
	CHECK_EQ(read_at(s, 1, 10, 10, buf, 6, &n, &eof), 0);
	CHECK_EQ(n, 6);
	CHECK(eof);
	CHECK(memcmp(buf, "abcdef", 6) == 0);
	CHECK_EQ(read_at(s, 1, 10, 12, buf, 64, &n, &eof), 0);
	CHECK_EQ(n, 4);
	CHECK(eof);
	CHECK_EQ(read_at(s, 1, 10, 16, buf, 64, &n, &eof), 0);
	CHECK_EQ(n, 0);
	CHECK(eof);
	CHECK_EQ(read_at(s, 1, 10, 1000, buf, 64, &n, &eof), 0);
	CHECK_EQ(n, 0);
	CHECK(eof);

	CHECK_EQ(objstore_get(s, &id, &ref), 0);
	CHECK_EQ(obj_ref_write(ref, OBJSTORE_MAX_OFFSET, "x", 1, OBJ_UNSTABLE), -EFBIG);
	CHECK_EQ(obj_ref_write(ref, OBJSTORE_MAX_OFFSET + 1, "x", 1, OBJ_UNSTABLE), -EFBIG);
	CHECK_EQ(obj_ref_write(ref, UINT64_MAX, "x", 1, OBJ_UNSTABLE), -EFBIG);
	CHECK_EQ(obj_ref_read(ref, UINT64_MAX, 1, buf, &n, &eof), -EFBIG);
	CHECK_EQ(obj_ref_sync(ref), 0);
	objstore_put(s, ref);
	CHECK_EQ(objstore_flush(s, &id), 0);
	CHECK_EQ(objstore_flush(s, NULL), 0);

	id.object = 999;
	CHECK_EQ(objstore_get(s, &id, &ref), -ENOENT);
	id.object = 0;
	CHECK_EQ(objstore_get(s, &id, &ref), -EINVAL);
}

static void test_sparse(struct objstore *s)
{
	char buf[4096], zero[4096] = { 0 };
	struct obj_info in;
	size_t n = 0;
	bool eof = true;

	CHECK_EQ(create_one(s, 1, 11), 0);
	CHECK_EQ(write_at(s, 1, 11, GIB, "tail", 4, OBJ_DATA_SYNC), 0);
	CHECK_EQ(info_of(s, 1, 11, &in), 0);
	CHECK(in.length == GIB + 4);
	CHECK(in.used_bytes < MIB);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(read_at(s, 1, 11, GIB / 2, buf, sizeof(buf), &n, &eof), 0);
	CHECK_EQ(n, sizeof(buf));
	CHECK(!eof);
	CHECK(memcmp(buf, zero, sizeof(buf)) == 0);
	CHECK_EQ(read_at(s, 1, 11, GIB - 2, buf, sizeof(buf), &n, &eof), 0);
	CHECK_EQ(n, 6);
	CHECK(eof);
	CHECK(memcmp(buf, "\0\0tail", 6) == 0);
}

static void fill(uint8_t *buf, size_t len, uint64_t off, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((off + i) * 131 + seed + ((off + i) >> 12));
}

static void test_large(struct objstore *s)
{
	uint8_t *buf = malloc(MIB), *want = malloc(MIB);
	struct obj_info in;
	size_t n = 0;
	bool eof = false;

	CHECK_EQ(create_one(s, 1, 12), 0);
	for (unsigned i = 0; i < 8; i++) {
		fill(buf, MIB, (uint64_t)i * MIB, 7);
		CHECK_EQ(write_at(s, 1, 12, (uint64_t)i * MIB, buf, MIB,
				  i == 7 ? OBJ_FILE_SYNC : OBJ_UNSTABLE),
			 0);
	}
	CHECK_EQ(info_of(s, 1, 12, &in), 0);
	CHECK(in.length == 8ull * MIB);
	CHECK(in.used_bytes >= 8ull * MIB);
	for (unsigned i = 0; i < 8; i++) {
		fill(want, MIB, (uint64_t)i * MIB, 7);
		CHECK_EQ(read_at(s, 1, 12, (uint64_t)i * MIB, buf, MIB, &n, &eof), 0);
		CHECK_EQ(n, MIB);
		CHECK_EQ(eof, i == 7);
		CHECK(memcmp(buf, want, MIB) == 0);
	}
	free(buf);
	free(want);
}

static uint64_t get_u64(struct objstore *s, const struct obj_id *id, uint32_t number)
{
	uint8_t v[8] = { 0 };
	size_t len = 0;

	CHECK_EQ(objstore_attr_get(s, id, 1, number, v, sizeof(v), &len), 0);
	CHECK_EQ(len, 8);
	return be64(v);
}

static uint32_t get_u32(struct objstore *s, const struct obj_id *id, uint32_t number)
{
	uint8_t v[8] = { 0 };
	size_t len = 0;

	CHECK_EQ(objstore_attr_get(s, id, 1, number, v, sizeof(v), &len), 0);
	CHECK_EQ(len, 4);
	return be32(v);
}

static void test_info_attrs(struct objstore *s)
{
	struct obj_id id = { 1, 10 }, none = { 1, 777 };
	uint8_t v[8];
	size_t len;
	uint64_t ctime = get_u64(s, &id, OBJ_ATTR_CTIME);

	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_LENGTH), 16);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_OWNER), 42);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_COMPONENT), 1);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_CAP_VERSION), 0);
	CHECK(get_u64(s, &id, OBJ_ATTR_CREATED) > 0);
	CHECK(get_u64(s, &id, OBJ_ATTR_MTIME) > 0);
	CHECK(get_u64(s, &id, OBJ_ATTR_USED) > 0);
	CHECK_EQ(objstore_attr_get(s, &id, 1, OBJ_ATTR_LENGTH, v, 4, &len), -EINVAL);
	CHECK_EQ(objstore_attr_get(s, &id, 1, OBJ_ATTR_READ_FLOOR + 1, v, 8, &len), -EINVAL);
	CHECK_EQ(objstore_attr_get(s, &id, 1, 0, v, 8, &len), -EINVAL);
	CHECK_EQ(objstore_attr_get(s, &id, 5, 1, v, 8, &len), -EINVAL);
	CHECK_EQ(objstore_attr_get(s, &none, 1, OBJ_ATTR_LENGTH, v, 8, &len), -ENOENT);

	put64(v, 4);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_LENGTH, v, 8), 0);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_LENGTH), 4);
	put64(v, 3 * MIB);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_LENGTH, v, 8), 0);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_LENGTH), 3 * MIB);
	put64(v, 16);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_LENGTH, v, 8), 0);
	put64(v, OBJSTORE_MAX_OFFSET + 1);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_LENGTH, v, 8), -EFBIG);
	put64(v, 4242);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_OWNER, v, 8), 0);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_OWNER), 4242);
	CHECK(get_u64(s, &id, OBJ_ATTR_CTIME) > ctime);
	put32(v, 3);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_COMPONENT, v, 4), 0);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_COMPONENT), 3);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_COMPONENT, v, 8), -EINVAL);
	put32(v, 5);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_CAP_VERSION, v, 4), 0);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_CAP_VERSION), 5);
	put64(v, 1);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_MTIME, v, 8), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_CTIME, v, 8), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_CREATED, v, 8), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_USED, v, 8), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_READ_FLOOR, v, 4), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_READ_FLOOR + 1, v, 8), -EINVAL);
	/* An unknown number with an empty value, as SETATTR decodes it (no
	 * buffer at all): refused, never read. */
	CHECK_EQ(objstore_attr_set(s, &id, 1, 0, NULL, 0), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_READ_FLOOR + 1, NULL, 0), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &none, 1, OBJ_ATTR_OWNER, v, 8), -ENOENT);
}

static void test_user_attrs(struct objstore *s)
{
	struct obj_id id = { 1, 10 }, none = { 1, 777 };
	static uint8_t big[OBJSTORE_ATTR_MAX_LEN + 1];
	uint32_t pages[8], numbers[8];
	char v[OBJSTORE_ATTR_MAX_LEN];
	size_t len = 0, n = 0;

	CHECK_EQ(objstore_attr_get(s, &id, 0x10000, 1, v, sizeof(v), &len), -ENOENT);
	CHECK_EQ(objstore_attr_set(s, &id, 0x10001, 2, "two", 3), 0);
	CHECK_EQ(objstore_attr_set(s, &id, 0x10000, 7, "seven", 5), 0);
	CHECK_EQ(objstore_attr_set(s, &id, 0x10000, 1, "one", 3), 0);
	CHECK_EQ(objstore_attr_set(s, &id, 0x10000, 1, "uno", 3), 0);
	memset(big, 'b', sizeof(big));
	CHECK_EQ(objstore_attr_set(s, &id, 0x10002, 1, big, sizeof(big)), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 0x10002, 1, big, sizeof(big) - 1), 0);
	CHECK_EQ(objstore_attr_set(s, &id, 5, 1, "x", 1), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &id, 0xffff, 1, "x", 1), -EINVAL);
	CHECK_EQ(objstore_attr_set(s, &none, 0x10000, 1, "x", 1), -ENOENT);

	CHECK_EQ(objstore_attr_get(s, &id, 0x10000, 1, v, sizeof(v), &len), 0);
	CHECK_EQ(len, 3);
	CHECK(memcmp(v, "uno", 3) == 0);
	CHECK_EQ(objstore_attr_get(s, &id, 0x10000, 7, v, 2, &len), -EINVAL);
	CHECK_EQ(objstore_attr_get(s, &id, 0x10002, 1, v, sizeof(v), &len), 0);
	CHECK_EQ(len, OBJSTORE_ATTR_MAX_LEN);

	CHECK_EQ(objstore_attr_list(s, &id, pages, numbers, 8, &n), 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(pages[0], 0x10000);
	CHECK_EQ(numbers[0], 1);
	CHECK_EQ(pages[1], 0x10000);
	CHECK_EQ(numbers[1], 7);
	CHECK_EQ(pages[2], 0x10001);
	CHECK_EQ(pages[3], 0x10002);
	CHECK_EQ(objstore_attr_list(s, &id, pages, numbers, 2, &n), 0);
	CHECK_EQ(n, 2);

	CHECK_EQ(objstore_attr_set(s, &id, 0x10002, 1, NULL, 0), 0);
	CHECK_EQ(objstore_attr_get(s, &id, 0x10002, 1, v, sizeof(v), &len), -ENOENT);
	CHECK_EQ(objstore_attr_list(s, &id, pages, numbers, 8, &n), 0);
	CHECK_EQ(n, 3);
	CHECK_EQ(objstore_attr_list(s, &none, pages, numbers, 8, &n), -ENOENT);
}

static void check_caps(struct obj_ref *ref, uint32_t floor, uint32_t cur)
{
	uint32_t f = 0, c = 0;

	obj_ref_cap_versions(ref, &f, &c);
	CHECK_EQ(f, floor);
	CHECK_EQ(c, cur);
}

/* A fence (SET_CAP_VERSION, or SETATTR of the version) moves the current
 * version and the read floor together; a revocation of writers raises
 * the current version alone, and never lowers it. */
static void test_cap_version(struct objstore *s)
{
	struct obj_id id = { 1, 10 };
	struct obj_ref *ref = NULL;
	uint32_t old = 0;
	uint8_t v[4];

	CHECK_EQ(objstore_get(s, &id, &ref), 0);
	check_caps(ref, 5, 5);
	CHECK_EQ(objstore_revoke_writers(s, &id, 7, &old), 0);
	CHECK_EQ(old, 5);
	check_caps(ref, 5, 7);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_READ_FLOOR), 5);
	CHECK_EQ(objstore_set_cap_version(s, &id, 6, &old), 0);
	CHECK_EQ(old, 7);
	check_caps(ref, 6, 6);
	put32(v, 9);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_CAP_VERSION, v, 4), 0);
	check_caps(ref, 9, 9);
	CHECK_EQ(objstore_set_cap_version(s, &id, 6, NULL), 0);
	CHECK_EQ(objstore_revoke_writers(s, &id, 5, &old), 0);
	CHECK_EQ(old, 6);
	CHECK_EQ(objstore_revoke_writers(s, &id, 6, &old), 0);
	check_caps(ref, 6, 6);
	CHECK_EQ(objstore_revoke_writers(s, &id, 8, NULL), 0);
	check_caps(ref, 6, 8);
	objstore_put(s, ref);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_CAP_VERSION), 8);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_READ_FLOOR), 6);
	CHECK_EQ(objstore_attr_set(s, &id, 1, OBJ_ATTR_READ_FLOOR, v, 4), -EINVAL);
	id.object = 777;
	CHECK_EQ(objstore_set_cap_version(s, &id, 6, &old), -ENOENT);
	CHECK_EQ(objstore_revoke_writers(s, &id, 6, &old), -ENOENT);
	id.object = 0;
	CHECK_EQ(objstore_revoke_writers(s, &id, 6, &old), -EINVAL);
}

/* Stores written before the read floor hold version-1 object records (33
 * bytes, no floor): they read with the floor at the capability version,
 * so every handle keeps the meaning it had, and the next change writes
 * the record as version 2. */
static struct objstore *test_v1_record(struct objstore *s)
{
	struct obj_id id = { 1, 30 };
	uint8_t k[KEY_MAX], v1[33] = { 1 };
	size_t klen = key_obj(k, id.partition, id.object), vlen = 0;
	char *v2 = NULL;
	int res = -1;

	CHECK_EQ(create_one(s, 1, 30), 0);
	put64(v1 + 1, 1000); /* created */
	put64(v1 + 9, 2000); /* ctime */
	put64(v1 + 17, 77);  /* owner */
	put32(v1 + 25, 2);   /* component */
	put32(v1 + 29, 11);  /* cap version */
	CHECK_EQ(db_put(s, k, klen, v1, sizeof(v1)), 0);
	s = reopen(s);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_CAP_VERSION), 11);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_READ_FLOOR), 11);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_OWNER), 77);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_COMPONENT), 2);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_CREATED), 1000);

	CHECK_EQ(objstore_revoke_writers(s, &id, 12, NULL), 0);
	CHECK_EQ(db_get(s, k, klen, &v2, &vlen), 0);
	CHECK(v2 != NULL);
	if (v2) {
		CHECK_EQ(vlen, 37);
		CHECK_EQ(v2[0], 2);
		CHECK_EQ(be32((const uint8_t *)v2 + 29), 12);
		CHECK_EQ(be32((const uint8_t *)v2 + 33), 11);
		rocksdb_free(v2);
	}
	v1[0] = 3; /* a version this code never wrote */
	CHECK_EQ(db_put(s, k, klen, v1, sizeof(v1)), 0);
	s = reopen(s);
	CHECK_EQ(objstore_revoke_writers(s, &id, 13, NULL), -EIO);
	CHECK_EQ(objstore_object_remove(s, 1, &id.object, 1, &res), 0);
	CHECK_EQ(res, 0);
	return s;
}

static void test_remove(struct objstore *s)
{
	struct obj_id id = { 1, 13 };
	struct obj_ref *ref = NULL, *again = NULL;
	uint64_t objs[4] = { 13, 13, 0, 555 };
	struct obj_info in;
	char buf[8];
	size_t n, len;
	bool eof;
	int res[4];

	CHECK_EQ(create_one(s, 1, 13), 0);
	CHECK_EQ(objstore_attr_set(s, &id, 0x10000, 1, "gone", 4), 0);
	CHECK_EQ(write_at(s, 1, 13, 0, "data", 4, OBJ_UNSTABLE), 0);
	CHECK_EQ(objstore_get(s, &id, &ref), 0);
	CHECK_EQ(objstore_object_remove(s, 1, objs, 4, res), 0);
	CHECK_EQ(res[0], 0);
	CHECK_EQ(res[1], -ENOENT);
	CHECK_EQ(res[2], -EINVAL);
	CHECK_EQ(res[3], -ENOENT);
	CHECK_EQ(obj_ref_read(ref, 0, sizeof(buf), buf, &n, &eof), -ENOENT);
	CHECK_EQ(obj_ref_write(ref, 0, "x", 1, OBJ_UNSTABLE), -ENOENT);
	CHECK_EQ(obj_ref_sync(ref), -ENOENT);
	CHECK_EQ(obj_ref_info(ref, &in), -ENOENT);
	CHECK_EQ(objstore_get(s, &id, &again), -ENOENT);
	objstore_put(s, ref);
	CHECK_EQ(objstore_object_remove(s, 9, objs, 1, res), -ENOENT);

	/* The id can be taken again, without the old attributes. */
	CHECK_EQ(create_one(s, 1, 13), 0);
	CHECK_EQ(objstore_attr_get(s, &id, 0x10000, 1, buf, sizeof(buf), &len), -ENOENT);
	CHECK_EQ(info_of(s, 1, 13, &in), 0);
	CHECK_EQ(in.length, 0);
}

static struct objstore *test_persist(struct objstore *s)
{
	struct obj_id id = { 1, 10 };
	struct objstore_stat before, after;
	char v[16];
	size_t len = 0, n = 0;
	bool eof = false;

	CHECK_EQ(objstore_statfs(s, &before), 0);
	s = reopen(s);
	CHECK_EQ(objstore_statfs(s, &after), 0);
	CHECK_EQ(after.partitions, before.partitions);
	CHECK_EQ(after.objects, before.objects);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_LENGTH), 16);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_OWNER), 4242);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_COMPONENT), 3);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_CAP_VERSION), 8);
	CHECK_EQ(get_u32(s, &id, OBJ_ATTR_READ_FLOOR), 6);
	CHECK_EQ(objstore_attr_get(s, &id, 0x10000, 1, v, sizeof(v), &len), 0);
	CHECK(len == 3 && memcmp(v, "uno", 3) == 0);
	CHECK_EQ(read_at(s, 1, 10, 0, v, sizeof(v), &n, &eof), 0);
	/* Truncated to 4 bytes, then extended: the rest reads as zeros. */
	CHECK(n == 16 && eof && memcmp(v, "0123\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0);
	CHECK_EQ(create_one(s, 1, 13), -EEXIST);
	return s;
}

#define THREADS 4
#define CHUNK (256u << 10)
#define ROUNDS 8

struct worker {
	struct objstore *s;
	unsigned idx;
	int failures;
};

/* Writes its own stripes of the shared object 20 and all of its own
 * object 21 + idx, one ref per request as the NFS server does. */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(CHUNK);

	for (unsigned r = 0; r < ROUNDS; r++) {
		uint64_t off = ((uint64_t)r * THREADS + w->idx) * CHUNK;

		fill(buf, CHUNK, off, 1);
		if (write_at(w->s, 1, 20, off, buf, CHUNK, OBJ_UNSTABLE))
			w->failures++;
		fill(buf, CHUNK, (uint64_t)r * CHUNK, w->idx);
		if (write_at(w->s, 1, 21 + w->idx, (uint64_t)r * CHUNK, buf, CHUNK,
			     r & 1 ? OBJ_DATA_SYNC : OBJ_UNSTABLE))
			w->failures++;
	}
	free(buf);
	return NULL;
}

static bool verify(struct objstore *s, uint64_t obj, uint64_t len, unsigned seed, bool stripes)
{
	uint8_t *buf = malloc(CHUNK), *want = malloc(CHUNK);
	bool ok = true;

	for (uint64_t off = 0; ok && off < len; off += CHUNK) {
		size_t n = 0;
		bool eof = false;

		fill(want, CHUNK, off, stripes ? 1 : seed);
		ok = read_at(s, 1, obj, off, buf, CHUNK, &n, &eof) == 0 && n == CHUNK &&
		     eof == (off + CHUNK == len) && memcmp(buf, want, CHUNK) == 0;
	}
	free(buf);
	free(want);
	return ok;
}

static void test_threads(struct objstore *s)
{
	struct obj_create_req reqs[THREADS + 1] = { { .object = 20 } };
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	int res[THREADS + 1];

	for (unsigned i = 0; i < THREADS; i++)
		reqs[i + 1].object = 21 + i;
	CHECK_EQ(objstore_object_create(s, 1, reqs, THREADS + 1, res), 0);
	for (unsigned i = 0; i < THREADS + 1; i++)
		CHECK_EQ(res[i], 0);
	for (unsigned i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s = s, .idx = i };
		CHECK_EQ(pthread_create(&tid[i], NULL, worker_run, &w[i]), 0);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		CHECK_EQ(w[i].failures, 0);
	}
	CHECK(verify(s, 20, (uint64_t)ROUNDS * THREADS * CHUNK, 1, true));
	for (unsigned i = 0; i < THREADS; i++)
		CHECK(verify(s, 21 + i, (uint64_t)ROUNDS * CHUNK, i, false));
}

static struct objstore *test_wipe(struct objstore *s)
{
	struct objstore_superblock sb = *objstore_superblock(s);
	struct objstore_stat st;
	struct obj_id id = { 1, 10 };
	struct obj_ref *ref = NULL;
	uint64_t ids[4];
	size_t n = 0;
	bool eof = false;

	CHECK_EQ(objstore_get(s, &id, &ref), 0);
	CHECK_EQ(objstore_wipe(s), 0);
	CHECK_EQ(obj_ref_write(ref, 0, "x", 1, OBJ_UNSTABLE), -ENOENT);
	objstore_put(s, ref);
	CHECK_EQ(objstore_get(s, &id, &ref), -ENOENT);
	CHECK_EQ(objstore_statfs(s, &st), 0);
	CHECK_EQ(st.partitions, 0);
	CHECK_EQ(st.objects, 0);
	CHECK_EQ(objstore_partition_list(s, 0, ids, 4, &n, &eof), 0);
	CHECK_EQ(n, 0);
	s = reopen(s);
	CHECK(memcmp(objstore_superblock(s), &sb, sizeof(sb)) == 0);
	CHECK_EQ(objstore_statfs(s, &st), 0);
	CHECK_EQ(st.objects, 0);
	CHECK_EQ(objstore_partition_create(s, 1), 0);
	CHECK_EQ(create_one(s, 1, 10), 0);
	CHECK_EQ(get_u64(s, &id, OBJ_ATTR_LENGTH), 0);
	return s;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static int wide, files;

static int count_wide(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	if (type == FTW_F)
		files++;
	if (st->st_mode & 077) {
		fprintf(stderr, "%s: mode %04o\n", path, st->st_mode & 07777);
		wide++;
	}
	return 0;
}

/* Objects are the file system's data: the store's directory, its shards
 * and its files are the owner's alone, and a directory an admin made
 * wider is tightened at open. */
static void test_private(void)
{
	struct objstore *s = NULL;
	char p[128];

	snprintf(p, sizeof(p), "%s/private", root);
	CHECK_EQ(objstore_format(p, 4, 1), 0);
	CHECK_EQ(mode_of(p), 0700);
	snprintf(p, sizeof(p), "%s/private/objects", root);
	CHECK_EQ(mode_of(p), 0700);
	snprintf(p, sizeof(p), "%s/private/superblock", root);
	CHECK_EQ(mode_of(p), 0600);
	snprintf(p, sizeof(p), "%s/private", root);
	CHECK_EQ(chmod(p, 0755), 0);
	CHECK_EQ(objstore_open(p, &s), 0);
	CHECK_EQ(mode_of(p), 0700);
	if (s) {
		CHECK_EQ(objstore_partition_create(s, 1), 0);
		CHECK_EQ(create_one(s, 1, 5), 0);
		objstore_close(s);
	}
	wide = files = 0;
	snprintf(p, sizeof(p), "%s/private/objects", root);
	CHECK_EQ(nftw(p, count_wide, 16, FTW_PHYS), 0);
	CHECK(files > 0);
	CHECK_EQ(wide, 0);
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
	test_crash();
	test_format();
	test_private();
	CHECK_EQ(objstore_open(dir, &s), 0);
	if (s) {
		test_partitions(s);
		s = test_create(s);
		test_io(s);
		test_sparse(s);
		test_large(s);
		test_info_attrs(s);
		test_user_attrs(s);
		test_cap_version(s);
		s = test_v1_record(s);
		test_remove(s);
		s = test_persist(s);
		test_threads(s);
		s = test_wipe(s);
		objstore_close(s);
	}
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	CHECK_DONE();
}
