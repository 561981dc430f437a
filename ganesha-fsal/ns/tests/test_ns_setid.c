/* Set-id bits on writes: which bits a write clears for which writer
 * (Linux's setattr_should_drop_suidgid), ns_write clearing them in the
 * batch that changes the data, and NS_SET_KILL_SETID for writes the store
 * never sees (object data, pNFS). */
#include "ns_test.h"

#include <errno.h>

static struct ns_store *s;
static char path[128];

static const uint32_t sup[] = { 30 };
static const struct ns_cred root = { .uid = 0, .gid = 0 };
static const struct ns_cred nobody = { .uid = 65534, .gid = 65534 };
/* In group 30 through a supplementary group only. */
static const struct ns_cred member = { .uid = 1001, .gid = 1001, .groups = sup, .ngroups = 1 };

static uint32_t cleared(uint32_t mode, uint32_t gid, enum ns_type type, const struct ns_cred *c)
{
	struct ns_attr a = { .type = type, .mode = mode, .uid = 1000, .gid = gid };

	return ns_setid_cleared(&a, c);
}

static void test_rule(void)
{
	const struct ns_cred owner = { .uid = 1000, .gid = 1000 };

	/* Set-uid always goes; set-gid with group execute. */
	CHECK_EQ(cleared(04777, 0, NS_REG, &nobody), 04000);
	CHECK_EQ(cleared(02777, 0, NS_REG, &nobody), 02000);
	CHECK_EQ(cleared(06777, 0, NS_REG, &nobody), 06000);
	CHECK_EQ(cleared(06777, 30, NS_REG, &member), 06000);
	/* Set-gid without group execute stays for members of the group (the
	 * primary or a supplementary one), and goes for anyone else (Linux
	 * 6.2+, "attr: use consistent sgid stripping checks"). */
	CHECK_EQ(cleared(02767, 65534, NS_REG, &nobody), 0);
	CHECK_EQ(cleared(02767, 30, NS_REG, &member), 0);
	CHECK_EQ(cleared(02767, 0, NS_REG, &nobody), 02000);
	CHECK_EQ(cleared(06767, 30, NS_REG, &member), 04000);
	/* The owner is no exception; root (CAP_FSETID) is. */
	CHECK_EQ(cleared(04755, 1000, NS_REG, &owner), 04000);
	CHECK_EQ(cleared(06777, 1, NS_REG, &root), 0);
	/* Nothing to clear; not a regular file. */
	CHECK_EQ(cleared(0777, 0, NS_REG, &nobody), 0);
	CHECK_EQ(cleared(01777, 0, NS_REG, &nobody), 0);
	CHECK_EQ(cleared(06777, 0, NS_DIR, &nobody), 0);
}

static uint64_t setid_file(const char *name, uint32_t mode, uint32_t gid)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, name);
	struct ns_setattr sa = { .mask = NS_SET_MODE | NS_SET_GID, .mode = mode, .gid = gid };

	CHECK_EQ(ns_setattr(s, f, &sa, NULL), 0);
	CHECK_EQ(attr_of(s, f).mode, mode);
	return f;
}

static void test_inline_write(void)
{
	uint64_t f = setid_file("w", 06777, 0);
	struct ns_attr a, before = attr_of(s, f);
	char buf[8];
	size_t n = 0;
	bool eof;

	/* The bits go in the write's own batch: one change. */
	CHECK_EQ(ns_write(s, f, 0, "abc", 3, true, &nobody, &a), 0);
	CHECK_EQ(a.mode, 0777);
	CHECK_EQ(a.change, before.change + 1);
	CHECK_EQ(attr_of(s, f).mode, 0777);
	CHECK_EQ(ns_read(s, f, 0, sizeof(buf), buf, &n, &eof), 0);
	CHECK(n == 3 && memcmp(buf, "abc", 3) == 0);

	/* Root, or no writer named, keeps them. */
	f = setid_file("r", 06777, 0);
	CHECK_EQ(ns_write(s, f, 0, "abc", 3, true, &root, &a), 0);
	CHECK_EQ(a.mode, 06777);
	CHECK_EQ(ns_write(s, f, 1, "x", 1, true, NULL, &a), 0);
	CHECK_EQ(a.mode, 06777);
	/* A write of nothing changes nothing. */
	before = attr_of(s, f);
	CHECK_EQ(ns_write(s, f, 0, "", 0, true, &nobody, &a), 0);
	CHECK_EQ(a.mode, 06777);
	CHECK_EQ(attr_of(s, f).change, before.change);
	/* A write that fails clears nothing. */
	CHECK_EQ(ns_write(s, f, UINT64_MAX, "x", 1, true, &nobody, NULL), -EFBIG);
	CHECK_EQ(attr_of(s, f).mode, 06777);

	f = setid_file("m", 02767, 30);
	CHECK_EQ(ns_write(s, f, 0, "x", 1, true, &member, &a), 0);
	CHECK_EQ(a.mode, 02767);
	CHECK_EQ(ns_write(s, f, 0, "x", 1, true, &nobody, &a), 0);
	CHECK_EQ(a.mode, 0767);
}

static void test_kill_setattr(void)
{
	uint64_t f = setid_file("k", 04777, 0);
	struct ns_setattr kill = { .mask = NS_SET_KILL_SETID, .writer = &root };
	struct ns_attr a, before = attr_of(s, f);

	/* Nothing to clear: no change at all, attributes still come back. */
	CHECK_EQ(ns_setattr(s, f, &kill, &a), 0);
	CHECK_EQ(a.mode, 04777);
	CHECK_EQ(attr_of(s, f).change, before.change);
	kill.writer = &nobody;
	CHECK_EQ(ns_setattr(s, f, &kill, &a), 0);
	CHECK_EQ(a.mode, 0777);
	CHECK(a.change > before.change);
	CHECK(a.ctime.tv_sec >= before.ctime.tv_sec);

	/* With the size and mtime a gateway write to objects leaves. */
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_MODE, .mode = 06755 }, NULL),
		 0);
	kill.mask = NS_SET_KILL_SETID | NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_MTIME_NOW;
	kill.size = 100;
	CHECK_EQ(ns_setattr(s, f, &kill, &a), 0);
	CHECK_EQ(a.mode, 0755);
	CHECK_EQ(a.size, 100);

	/* A mode set in the same call is what the caller asked for. */
	kill.mask = NS_SET_KILL_SETID | NS_SET_MODE;
	kill.mode = 04700;
	CHECK_EQ(ns_setattr(s, f, &kill, &a), 0);
	CHECK_EQ(a.mode, 04700);

	/* It needs a writer. */
	kill = (struct ns_setattr){ .mask = NS_SET_KILL_SETID };
	CHECK_EQ(ns_setattr(s, f, &kill, NULL), -EINVAL);
	CHECK_EQ(attr_of(s, f).mode, 04700);
}

int main(void)
{
	test_dir_init("setid");
	s = test_store(path, sizeof(path), NULL);
	test_rule();
	test_inline_write();
	test_kill_setattr();
	check_clean(s);
	ns_close(s);
	test_dir_done();
	CHECK_DONE();
}
