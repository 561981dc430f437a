/* rename: every case POSIX names, and what it does to link counts, parents,
 * cookies, times and intents. */
#include "ns_test.h"

#include <errno.h>

static struct ns_store *s;

static void test_simple(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "simple"), f = mkfile(s, d, "a");
	uint64_t cookie = 0, cookie2 = 0;
	struct ns_attr before = attr_of(s, f), dbefore = attr_of(s, d);

	CHECK_EQ(ns_lookup_cookie(s, d, "a", &cookie), 0);
	CHECK_EQ(ns_rename(s, d, "a", d, "b"), 0);
	CHECK_EQ(ino_of(s, d, "a"), 0);
	CHECK_EQ(ino_of(s, d, "b"), f);
	/* Same directory: the entry keeps its cookie. */
	CHECK_EQ(ns_lookup_cookie(s, d, "b", &cookie2), 0);
	CHECK_EQ(cookie2, cookie);
	CHECK(attr_of(s, f).change > before.change);
	CHECK(attr_of(s, d).change > dbefore.change);
	CHECK_EQ(attr_of(s, d).size, 1);
	CHECK_EQ(ns_rename(s, d, "missing", d, "c"), -ENOENT);
	CHECK_EQ(ns_rename(s, d, "b", d, "b"), 0);
	CHECK_EQ(ino_of(s, d, "b"), f);
	CHECK_EQ(ns_rename(s, d, ".", d, "c"), -EINVAL);
	CHECK_EQ(ns_rename(s, d, "b", d, ".."), -EINVAL);
	CHECK_EQ(ns_rename(s, d, "b", d, ""), -EINVAL);
	CHECK_EQ(ns_rename(s, f, "b", d, "c"), -ENOTDIR);
	CHECK_EQ(ns_rename(s, d, "b", f, "c"), -ENOTDIR);
	CHECK_EQ(ns_rename(s, 987654, "b", d, "c"), -ESTALE);
	CHECK_EQ(ns_rename(s, d, "b", 987654, "c"), -ESTALE);
}

static void test_replace(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "replace");
	uint64_t f = mkfile(s, d, "f"), g = mkfile(s, d, "g"), h;
	uint64_t e = mkdir_(s, d, "e"), full = mkdir_(s, d, "full");
	struct ns_attr a;

	mkfile(s, full, "x");
	/* Over a file: the victim loses its name and, its last, its inode. */
	CHECK_EQ(ns_rename(s, d, "f", d, "g"), 0);
	CHECK_EQ(ino_of(s, d, "g"), f);
	CHECK_EQ(ns_getattr(s, g, &a), -ESTALE);
	CHECK_EQ(attr_of(s, d).size, 3);
	/* A victim with another link survives with one fewer. */
	h = mkfile(s, d, "h");
	CHECK_EQ(ns_link(s, h, d, "h2", NULL), 0);
	CHECK_EQ(ns_rename(s, d, "g", d, "h"), 0);
	CHECK_EQ(attr_of(s, h).nlink, 1);
	CHECK_EQ(ino_of(s, d, "h2"), h);

	CHECK_EQ(ns_rename(s, d, "h", d, "e"), -EISDIR);
	CHECK_EQ(ns_rename(s, d, "e", d, "h"), -ENOTDIR);
	CHECK_EQ(ns_rename(s, d, "e", d, "full"), -ENOTEMPTY);
	/* Over an empty directory: the parent loses one subdirectory. */
	CHECK_EQ(attr_of(s, d).nlink, 4);
	CHECK_EQ(ns_rename(s, d, "full", d, "e"), 0);
	CHECK_EQ(ns_getattr(s, e, &a), -ESTALE);
	CHECK_EQ(attr_of(s, d).nlink, 3);
	CHECK_EQ(ino_of(s, d, "e"), full);
	/* Two names of one inode: nothing happens. */
	CHECK_EQ(ns_link(s, h, d, "h3", NULL), 0);
	CHECK_EQ(ns_rename(s, d, "h2", d, "h3"), 0);
	CHECK_EQ(ino_of(s, d, "h2"), h);
	CHECK_EQ(ino_of(s, d, "h3"), h);
	CHECK_EQ(attr_of(s, h).nlink, 2);
}

static void test_across(void)
{
	uint64_t a = mkdir_(s, NS_ROOT_INO, "from"), b = mkdir_(s, NS_ROOT_INO, "to");
	uint64_t f = mkfile(s, a, "f"), sub = mkdir_(s, a, "sub");
	uint64_t victim = mkdir_(s, b, "victim"), cookie = 0;
	struct ns_attr at;

	mkfile(s, sub, "inside");
	CHECK_EQ(ns_rename(s, a, "f", b, "f"), 0);
	CHECK_EQ(ino_of(s, b, "f"), f);
	CHECK_EQ(ino_of(s, a, "f"), 0);
	CHECK_EQ(attr_of(s, a).size, 1);
	CHECK_EQ(attr_of(s, b).size, 2);
	/* A directory moves with its contents; parents' link counts follow. */
	CHECK_EQ(attr_of(s, a).nlink, 3);
	CHECK_EQ(attr_of(s, b).nlink, 3);
	CHECK_EQ(ns_rename(s, a, "sub", b, "sub"), 0);
	CHECK_EQ(attr_of(s, a).nlink, 2);
	CHECK_EQ(attr_of(s, b).nlink, 4);
	at = attr_of(s, sub);
	CHECK_EQ(at.parent, b);
	CHECK_EQ(ns_lookup(s, sub, "..", &at), 0);
	CHECK_EQ(at.ino, b);
	CHECK(ino_of(s, sub, "inside") != 0);
	/* A new directory, a new cookie. */
	CHECK_EQ(ns_lookup_cookie(s, b, "sub", &cookie), 0);
	CHECK(cookie >= NS_COOKIE_FIRST);
	/* Over an empty directory elsewhere. */
	CHECK_EQ(ns_rename(s, b, "sub", a, "sub"), 0);
	CHECK_EQ(ns_rename(s, a, "sub", b, "victim"), 0);
	CHECK_EQ(ns_getattr(s, victim, &at), -ESTALE);
	CHECK_EQ(attr_of(s, a).nlink, 2);
	CHECK_EQ(attr_of(s, b).nlink, 3);
	CHECK_EQ(attr_of(s, sub).parent, b);
}

static void test_loops(void)
{
	uint64_t top = mkdir_(s, NS_ROOT_INO, "top"), mid = mkdir_(s, top, "mid");
	uint64_t low = mkdir_(s, mid, "low");

	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "top", low, "x"), -EINVAL);
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "top", mid, "x"), -EINVAL);
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "top", top, "x"), -EINVAL);
	CHECK_EQ(ns_rename(s, top, "mid", low, "x"), -EINVAL);
	/* The loop is found before the file in the way. */
	mkfile(s, low, "file");
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "top", low, "file"), -EINVAL);
	CHECK_EQ(ns_unlink(s, low, "file"), 0);
	/* Onto an ancestor: it is not empty. */
	CHECK_EQ(ns_rename(s, mid, "low", NS_ROOT_INO, "top"), -ENOTEMPTY);
	/* Up the tree is fine. */
	CHECK_EQ(ns_rename(s, mid, "low", NS_ROOT_INO, "low"), 0);
	CHECK_EQ(attr_of(s, low).parent, NS_ROOT_INO);
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "low", top, "low"), 0);
	CHECK_EQ(attr_of(s, low).parent, top);
}

int main(void)
{
	char path[128];

	test_dir_init("rename");
	s = test_store(path, sizeof(path), NULL);
	test_simple();
	test_replace();
	test_across();
	test_loops();
	check_clean(s);
	ns_close(s);
	test_dir_done();
	CHECK_DONE();
}
