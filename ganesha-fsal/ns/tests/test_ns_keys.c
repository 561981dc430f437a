/* The on-disk format with known bytes: keys, records, and the merge
 * operator's arithmetic.  ../../README.md documents the same layouts. */
#include "check.h"

#include <string.h>
#include <unistd.h>

#include "byteorder.h"
#include "ns_internal.h"

static void test_keys(void)
{
	uint8_t k[KEY_MAX];
	static const uint8_t inode[] = { 'I', 0, 0, 0, 0, 0, 0, 0x12, 0x34 };
	static const uint8_t dirent[] = { 'D', 0, 0, 0, 0, 0, 0, 0, 1, 'a', 'b' };
	static const uint8_t index[] = { 'R', 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3 };
	static const uint8_t counter[] = { 'C', 'i' };
	uint8_t end[] = { 'R', 0, 0, 0, 0, 0, 0, 0, 0xff };

	CHECK_EQ(key_id(k, K_INODE, 0x1234), sizeof(inode));
	CHECK(memcmp(k, inode, sizeof(inode)) == 0);
	CHECK_EQ(key_dirent(k, 1, "ab", 2), sizeof(dirent));
	CHECK(memcmp(k, dirent, sizeof(dirent)) == 0);
	CHECK_EQ(key_index(k, 1, 3), sizeof(index));
	CHECK(memcmp(k, index, sizeof(index)) == 0);
	CHECK_EQ(key_counter(k, C_INODES), 2);
	CHECK(memcmp(k, counter, 2) == 0);
	prefix_end(end, sizeof(end));
	CHECK_EQ(end[7], 1);
	CHECK_EQ(end[8], 0);
}

static void test_inode_record(void)
{
	struct ns_inode r = {
		.ino = 5,
		.type = NS_REG,
		.flags = IF_VERF,
		.mode = 0644,
		.uid = 1000,
		.gid = 100,
		.nlink = 1,
		.gen = 0xdeadbeef,
		.size = 0x0102030405060708ull,
		.rdev = 0,
		.change = 3,
		.inline_len = 11,
		.verf = { 1, 2, 3, 4, 5, 6, 7, 8 },
		.atime = { -1, 999999999 },
		.mtime = { 1700000000, 1 },
	};
	uint8_t v[INODE_REC_LEN];
	struct ns_inode d;

	inode_encode(&r, v);
	CHECK_EQ(v[0], INODE_REC_VERSION);
	CHECK_EQ(v[1], NS_REG);
	CHECK(v[2] == 0 && v[3] == IF_VERF);
	CHECK(v[4] == 0 && v[5] == 0 && v[6] == 0x01 && v[7] == 0xa4);
	CHECK(v[20] == 0xde && v[23] == 0xef);
	CHECK(v[24] == 1 && v[31] == 8);
	CHECK(v[75] == 11);
	CHECK(v[80] == 1 && v[87] == 8);
	/* atime: seconds -1 as two's complement, then nanoseconds. */
	CHECK(v[88] == 0xff && v[95] == 0xff);
	CHECK(v[96] == 0x3b && v[97] == 0x9a && v[98] == 0xc9 && v[99] == 0xff);
	CHECK_EQ(inode_decode(5, v, sizeof(v), &d), 0);
	CHECK_EQ(d.gen, r.gen);
	CHECK_EQ(d.atime.tv_sec, -1);
	CHECK_EQ(d.atime.tv_nsec, 999999999);
	CHECK(memcmp(d.verf, r.verf, NS_VERF_LEN) == 0);
	CHECK_EQ(inode_decode(5, v, sizeof(v) - 1, &d), -EIO);
	v[1] = 0;
	CHECK_EQ(inode_decode(5, v, sizeof(v), &d), -EIO);
	v[1] = NS_REG;
	v[0] = 2;
	CHECK_EQ(inode_decode(5, v, sizeof(v), &d), -EIO);
}

static void test_small_records(void)
{
	static const uint8_t dirent[] = { 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 4 };
	static const uint8_t index[] = { 0, 0, 0, 0, 0, 0, 0, 9, NS_DIR, 'x', 'y' };
	static const uint8_t intent[] = { 1, NS_INTENT_REMOVE, 0, 0, 0, 0, 0, 0, 0, 7, 'm' };
	struct dirent_rec d = { .ino = 9, .seq = 4 };
	uint8_t v[64], type;
	struct ns_intent in;
	const char *name;
	size_t len;
	uint64_t ino;

	dirent_encode(&d, v);
	CHECK(memcmp(v, dirent, sizeof(dirent)) == 0);
	CHECK_EQ(index_encode(9, NS_DIR, "xy", 2, v), sizeof(index));
	CHECK(memcmp(v, index, sizeof(index)) == 0);
	CHECK_EQ(index_decode(v, sizeof(index), &ino, &type, &name, &len), 0);
	CHECK_EQ(ino, 9);
	CHECK_EQ(len, 2);
	CHECK_EQ(index_decode(v, INDEX_REC_HDR, &ino, &type, &name, &len), -EIO);
	intent_encode_hdr(7, NS_INTENT_REMOVE, v);
	v[INTENT_REC_HDR] = 'm';
	CHECK(memcmp(v, intent, sizeof(intent)) == 0);
	CHECK_EQ(intent_decode(42, v, sizeof(intent), &in), 0);
	CHECK_EQ(in.id, 42);
	CHECK_EQ(in.ino, 7);
	CHECK_EQ(in.len, 1);
}

/* Folds merge operands the way RocksDB will, in a scratch database. */
static uint64_t fold(char key, const int64_t *ops, int n)
{
	rocksdb_options_t *o = rocksdb_options_create();
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	char dir[] = "/tmp/pando-ns-keys-XXXXXX", *err = NULL, *v = NULL;
	uint8_t k[2] = { (uint8_t)key, C_INODES }, e[8];
	size_t klen = key == K_NEXT ? 1 : 2, vlen = 0;
	uint64_t out = 0;
	rocksdb_t *db;

	CHECK(mkdtemp(dir) != NULL);
	rocksdb_options_set_create_if_missing(o, 1);
	rocksdb_options_set_merge_operator(o, merge_operator());
	db = rocksdb_open(o, dir, &err);
	CHECK(db != NULL);
	for (int i = 0; db && i < n; i++) {
		put_be64(e, (uint64_t)ops[i]);
		rocksdb_writebatch_merge(b, (const char *)k, klen, (const char *)e, 8);
	}
	if (db) {
		rocksdb_write(db, wo, b, &err);
		v = rocksdb_get(db, ro, (const char *)k, klen, &vlen, &err);
		rocksdb_close(db);
	}
	CHECK(err == NULL && v && vlen == 8);
	if (v && vlen == 8)
		out = get_be64((const uint8_t *)v);
	rocksdb_free(v);
	rocksdb_destroy_db(o, dir, &err);
	rmdir(dir);
	rocksdb_writebatch_destroy(b);
	rocksdb_readoptions_destroy(ro);
	rocksdb_writeoptions_destroy(wo);
	rocksdb_options_destroy(o);
	return out;
}

static void test_merge(void)
{
	static const int64_t adds[] = { 5, -2, 10, -13 };
	static const int64_t maxes[] = { 7, 3, 9, 8 };

	CHECK_EQ(fold(K_COUNTER, adds, 4), 0);
	CHECK_EQ(fold(K_COUNTER, adds, 3), 13);
	CHECK_EQ(fold(K_NEXT, maxes, 4), 9);
}

int main(void)
{
	test_keys();
	test_inode_record();
	test_small_records();
	test_merge();
	CHECK_DONE();
}
