/* Names and the operations that make and remove them: create in every
 * create mode, mkdir, mknod, symlink and readlink, link, unlink, rmdir,
 * lookup. */
#include "ns_test.h"

#include <errno.h>

#include "ns_internal.h"

static struct ns_store *s;
static char path[128];

static void test_names(void)
{
	char longest[NS_NAME_MAX + 1], too_long[NS_NAME_MAX + 2];
	const char odd[] = { 'a', '\n', (char)0xff, (char)0xc3, '\\', '*', 0 };
	struct ns_attr a;

	memset(longest, 'x', NS_NAME_MAX);
	longest[NS_NAME_MAX] = 0;
	memset(too_long, 'y', NS_NAME_MAX + 1);
	too_long[NS_NAME_MAX + 1] = 0;
	CHECK(mkfile(s, NS_ROOT_INO, longest) != 0);
	CHECK(ino_of(s, NS_ROOT_INO, longest) != 0);
	CHECK_EQ(ns_create(s, NS_ROOT_INO, too_long, TEST_NEW, NS_GUARDED, NULL, NULL, NULL),
		 -ENAMETOOLONG);
	CHECK_EQ(ns_lookup(s, NS_ROOT_INO, too_long, &a), -ENAMETOOLONG);
	CHECK_EQ(ns_create(s, NS_ROOT_INO, "", TEST_NEW, NS_GUARDED, NULL, NULL, NULL), -EINVAL);
	CHECK_EQ(ns_create(s, NS_ROOT_INO, "a/b", TEST_NEW, NS_GUARDED, NULL, NULL, NULL), -EINVAL);
	CHECK_EQ(ns_mkdir(s, NS_ROOT_INO, ".", TEST_NEWDIR, NULL), -EINVAL);
	CHECK_EQ(ns_mkdir(s, NS_ROOT_INO, "..", TEST_NEWDIR, NULL), -EINVAL);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "."), -EINVAL);
	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, ".."), -EINVAL);
	CHECK_EQ(ns_lookup(s, NS_ROOT_INO, "", &a), -EINVAL);
	/* Bytes, not characters: no UTF-8 needed, and case matters. */
	CHECK(mkfile(s, NS_ROOT_INO, odd) != 0);
	CHECK(ino_of(s, NS_ROOT_INO, odd) != 0);
	CHECK(mkfile(s, NS_ROOT_INO, "Case") != 0);
	CHECK_EQ(ino_of(s, NS_ROOT_INO, "case"), 0);
	CHECK(mkfile(s, NS_ROOT_INO, "...") != 0);
	CHECK(mkfile(s, NS_ROOT_INO, ".hidden") != 0);
}

static void test_create_modes(void)
{
	const uint8_t v1[NS_VERF_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const uint8_t v2[NS_VERF_LEN] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	uint64_t d = mkdir_(s, NS_ROOT_INO, "modes");
	struct ns_attr a, b;
	bool existed = true;

	CHECK_EQ(ns_create(s, d, "u", TEST_NEW, NS_UNCHECKED, NULL, &a, &existed), 0);
	CHECK(!existed);
	CHECK_EQ(a.type, NS_REG);
	CHECK_EQ(a.mode, 0644);
	CHECK_EQ(a.uid, 1000);
	CHECK_EQ(a.gid, 100);
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(a.size, 0);
	CHECK_EQ(ns_create(s, d, "u", TEST_NEW, NS_UNCHECKED, NULL, &b, &existed), 0);
	CHECK(existed);
	CHECK_EQ(b.ino, a.ino);
	CHECK_EQ(ns_create(s, d, "u", TEST_NEW, NS_GUARDED, NULL, &b, &existed), -EEXIST);
	mkdir_(s, d, "sub");
	CHECK_EQ(ns_create(s, d, "sub", TEST_NEW, NS_UNCHECKED, NULL, &b, NULL), -EEXIST);

	/* Exclusive: a retransmission with the same verifier gets the file. */
	CHECK_EQ(ns_create(s, d, "x", TEST_NEW, NS_EXCLUSIVE, v1, &a, &existed), 0);
	CHECK(!existed);
	CHECK(a.has_verf);
	CHECK(memcmp(a.verf, v1, NS_VERF_LEN) == 0);
	CHECK(!b.has_verf);
	CHECK_EQ(ns_create(s, d, "x", TEST_NEW, NS_EXCLUSIVE, v1, &b, &existed), 0);
	CHECK(existed);
	CHECK_EQ(b.ino, a.ino);
	CHECK_EQ(ns_create(s, d, "x", TEST_NEW, NS_EXCLUSIVE, v2, &b, NULL), -EEXIST);
	CHECK_EQ(ns_create(s, d, "u", TEST_NEW, NS_EXCLUSIVE, v1, &b, NULL), -EEXIST);
	CHECK_EQ(ns_create(s, d, "sub", TEST_NEW, NS_EXCLUSIVE, v1, &b, NULL), -EEXIST);
	/* ...and the verifier outlives a restart. */
	ns_close(s);
	CHECK_EQ(ns_open(path, &(struct ns_options){ .nosync = true }, &s), 0);
	CHECK_EQ(ns_create(s, d, "x", TEST_NEW, NS_EXCLUSIVE, v1, &b, &existed), 0);
	CHECK(existed);
	CHECK_EQ(b.ino, a.ino);

	CHECK_EQ(ns_create(s, a.ino, "in-a-file", TEST_NEW, NS_GUARDED, NULL, NULL, NULL),
		 -ENOTDIR);
	CHECK_EQ(ns_create(s, 999999, "nowhere", TEST_NEW, NS_GUARDED, NULL, NULL, NULL), -ESTALE);
}

static void test_dir_attrs(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "attrs");
	struct ns_attr before = attr_of(s, d), after, sub;
	struct timespec pause = { 0, 2000000 };

	CHECK_EQ(before.nlink, 2);
	CHECK_EQ(before.parent, NS_ROOT_INO);
	CHECK_EQ(before.size, 0);
	nanosleep(&pause, NULL);
	mkfile(s, d, "f");
	after = attr_of(s, d);
	CHECK(after.change > before.change);
	CHECK(after.mtime.tv_sec * 1000000000ll + after.mtime.tv_nsec >
	      before.mtime.tv_sec * 1000000000ll + before.mtime.tv_nsec);
	CHECK_EQ(after.size, 1);
	CHECK_EQ(after.nlink, 2);
	CHECK_EQ(ns_mkdir(s, d, "s", TEST_NEWDIR, &sub), 0);
	CHECK_EQ(sub.parent, d);
	CHECK_EQ(sub.nlink, 2);
	CHECK_EQ(attr_of(s, d).nlink, 3);
	CHECK_EQ(attr_of(s, d).size, 2);
	CHECK_EQ(ns_mkdir(s, d, "s", TEST_NEWDIR, NULL), -EEXIST);
	CHECK_EQ(ns_mkdir(s, d, "f", TEST_NEWDIR, NULL), -EEXIST);
	CHECK_EQ(ns_rmdir(s, d, "s"), 0);
	CHECK_EQ(attr_of(s, d).nlink, 2);
	CHECK_EQ(attr_of(s, d).size, 1);
}

static void test_lookup(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "look"), e = mkdir_(s, d, "deeper");
	uint64_t f = mkfile(s, e, "file");
	struct ns_attr a;

	CHECK_EQ(ns_lookup(s, e, "file", &a), 0);
	CHECK_EQ(a.ino, f);
	CHECK_EQ(ns_lookup(s, e, ".", &a), 0);
	CHECK_EQ(a.ino, e);
	CHECK_EQ(ns_lookup(s, e, "..", &a), 0);
	CHECK_EQ(a.ino, d);
	CHECK_EQ(ns_lookup(s, NS_ROOT_INO, "..", &a), 0);
	CHECK_EQ(a.ino, NS_ROOT_INO);
	CHECK_EQ(ns_lookup(s, e, "nope", &a), -ENOENT);
	CHECK_EQ(ns_lookup(s, f, "x", &a), -ENOTDIR);
	CHECK_EQ(ns_lookup(s, f, "..", &a), -ENOTDIR);
	CHECK_EQ(ns_lookup(s, 424242, "x", &a), -ESTALE);
}

static void test_mknod_symlink(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "special");
	char target[NS_SYMLINK_MAX + 2], buf[NS_SYMLINK_MAX + 1];
	struct ns_new dev = { .mode = 0600, .rdev_major = 8, .rdev_minor = 17 };
	struct ns_attr a;
	size_t len = 0;

	CHECK_EQ(ns_mknod(s, d, "blk", NS_BLK, &dev, &a), 0);
	CHECK_EQ(a.type, NS_BLK);
	CHECK_EQ(a.rdev_major, 8);
	CHECK_EQ(a.rdev_minor, 17);
	CHECK_EQ(ns_mknod(s, d, "chr", NS_CHR, &dev, &a), 0);
	CHECK_EQ(a.type, NS_CHR);
	CHECK_EQ(ns_mknod(s, d, "fifo", NS_FIFO, &dev, &a), 0);
	CHECK_EQ(a.rdev_major, 0);
	CHECK_EQ(ns_mknod(s, d, "sock", NS_SOCK, &dev, &a), 0);
	CHECK_EQ(ns_mknod(s, d, "reg", NS_REG, &dev, &a), -EINVAL);
	CHECK_EQ(ns_mknod(s, d, "dir", NS_DIR, &dev, &a), -EINVAL);
	CHECK_EQ(ns_mknod(s, d, "fifo", NS_FIFO, &dev, &a), -EEXIST);

	CHECK_EQ(ns_symlink(s, d, "ln", "../some/where", TEST_NEW, &a), 0);
	CHECK_EQ(a.type, NS_LNK);
	CHECK_EQ(a.size, 13);
	CHECK_EQ(ns_readlink(s, a.ino, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, 13);
	CHECK(strcmp(buf, "../some/where") == 0);
	CHECK_EQ(ns_readlink(s, a.ino, buf, 13, &len), -ERANGE);
	CHECK_EQ(ns_readlink(s, d, buf, sizeof(buf), &len), -EINVAL);
	CHECK_EQ(ns_readlink(s, 777777, buf, sizeof(buf), &len), -ESTALE);
	memset(target, 't', sizeof(target));
	target[NS_SYMLINK_MAX] = 0;
	CHECK_EQ(ns_symlink(s, d, "max", target, TEST_NEW, &a), 0);
	CHECK_EQ(ns_readlink(s, a.ino, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, NS_SYMLINK_MAX);
	target[NS_SYMLINK_MAX] = 't';
	target[NS_SYMLINK_MAX + 1] = 0;
	CHECK_EQ(ns_symlink(s, d, "over", target, TEST_NEW, &a), -ENAMETOOLONG);
	CHECK_EQ(ns_symlink(s, d, "empty", "", TEST_NEW, &a), -EINVAL);
	CHECK_EQ(ns_unlink(s, d, "ln"), 0);
	CHECK_EQ(ns_unlink(s, d, "blk"), 0);
}

/* Sets a record's nlink behind the store's back, to reach NS_LINK_MAX. */
static void force_nlink(uint64_t ino, uint32_t nlink)
{
	uint8_t k[ID_KEY_LEN], v[INODE_REC_LEN];
	struct ns_inode r;
	char *err = NULL;

	CHECK_EQ(inode_load(s, ino, &r), 0);
	r.nlink = nlink;
	inode_encode(&r, v);
	rocksdb_put(s->db, s->wopts, (const char *)k, key_id(k, K_INODE, ino), (const char *)v,
		    sizeof(v), &err);
	CHECK(err == NULL);
}

static void test_link_unlink(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "links"), e = mkdir_(s, NS_ROOT_INO, "links2");
	uint64_t f = mkfile(s, d, "f");
	struct ns_attr a, before = attr_of(s, f);

	CHECK_EQ(ns_link(s, f, e, "g", &a), 0);
	CHECK_EQ(a.nlink, 2);
	CHECK(a.change > before.change);
	CHECK_EQ(ino_of(s, e, "g"), f);
	CHECK_EQ(ns_link(s, f, d, "f", NULL), -EEXIST);
	CHECK_EQ(ns_link(s, f, d, "..", NULL), -EINVAL);
	CHECK_EQ(ns_link(s, e, d, "dirlink", NULL), -EPERM);
	CHECK_EQ(ns_link(s, f, f, "x", NULL), -ENOTDIR);
	CHECK_EQ(ns_link(s, 55555, d, "x", NULL), -ESTALE);
	force_nlink(f, NS_LINK_MAX);
	CHECK_EQ(ns_link(s, f, d, "toomany", NULL), -EMLINK);
	force_nlink(f, 2);

	CHECK_EQ(ns_unlink(s, d, "f"), 0);
	CHECK_EQ(attr_of(s, f).nlink, 1);
	CHECK_EQ(ns_unlink(s, d, "f"), -ENOENT);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "links2"), -EISDIR);
	CHECK_EQ(ns_unlink(s, f, "x"), -ENOTDIR);
	CHECK_EQ(ns_unlink(s, 55555, "x"), -ESTALE);
	CHECK_EQ(ns_unlink(s, e, "g"), 0);
	CHECK_EQ(ns_getattr(s, f, &a), -ESTALE);

	mkfile(s, e, "h");
	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "links2"), -ENOTEMPTY);
	CHECK_EQ(ns_rmdir(s, e, "h"), -ENOTDIR);
	CHECK_EQ(ns_rmdir(s, e, "nope"), -ENOENT);
	CHECK_EQ(ns_unlink(s, e, "h"), 0);
	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "links2"), 0);
	CHECK_EQ(ns_getattr(s, e, &a), -ESTALE);
	CHECK_EQ(ns_create(s, e, "late", TEST_NEW, NS_GUARDED, NULL, NULL, NULL), -ESTALE);
	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "links"), 0);
}

int main(void)
{
	test_dir_init("dir");
	s = test_store(path, sizeof(path), NULL);
	test_names();
	test_create_modes();
	test_dir_attrs();
	test_lookup();
	test_mknod_symlink();
	test_link_unlink();
	check_clean(s);
	ns_close(s);
	test_dir_done();
	CHECK_DONE();
}
