/* POSIX permission checks: owner, group (primary and supplementary),
 * other, root, and the sticky directory rule. */
#include "check.h"

#include <errno.h>

#include "ns_store.h"

#define R NS_MAY_READ
#define W NS_MAY_WRITE
#define X NS_MAY_EXEC

static const uint32_t groups[] = { 20, 30 };

static int may(uint32_t mode, enum ns_type type, uint32_t uid, uint32_t gid, unsigned want)
{
	struct ns_attr a = { .type = type, .mode = mode, .uid = 100, .gid = 30 };
	struct ns_cred c = { .uid = uid, .gid = gid, .groups = groups, .ngroups = 2 };

	return ns_access(&a, &c, want);
}

static void test_classes(void)
{
	/* Owner gets the owner bits only, even when group or other have more. */
	CHECK_EQ(may(0640, NS_REG, 100, 1, R | W), 0);
	CHECK_EQ(may(0640, NS_REG, 100, 1, X), -EACCES);
	CHECK_EQ(may(0077, NS_REG, 100, 30, R), -EACCES);
	/* Group through the primary gid or a supplementary one. */
	CHECK_EQ(may(0640, NS_REG, 200, 30, R), 0);
	CHECK_EQ(may(0640, NS_REG, 200, 1, R), 0);
	CHECK_EQ(may(0640, NS_REG, 200, 1, W), -EACCES);
	CHECK_EQ(may(0607, NS_REG, 200, 1, R), -EACCES);
	/* Other. */
	struct ns_attr a = { .type = NS_REG, .mode = 0604, .uid = 100, .gid = 30 };
	struct ns_cred c = { .uid = 300, .gid = 1 };

	CHECK_EQ(ns_access(&a, &c, R), 0);
	CHECK_EQ(ns_access(&a, &c, R | W), -EACCES);
	CHECK_EQ(ns_access(&a, &c, 0), 0);
	/* Unknown bits in want are ignored. */
	CHECK_EQ(ns_access(&a, &c, R | 0x100), 0);
}

static void test_root(void)
{
	CHECK_EQ(may(0000, NS_REG, 0, 0, R | W), 0);
	CHECK_EQ(may(0000, NS_REG, 0, 0, X), -EACCES);
	CHECK_EQ(may(0001, NS_REG, 0, 0, X), 0);
	CHECK_EQ(may(0100, NS_REG, 0, 0, R | W | X), 0);
	CHECK_EQ(may(0000, NS_DIR, 0, 0, X), 0);
}

static void test_sticky(void)
{
	struct ns_attr dir = { .type = NS_DIR, .mode = 01777, .uid = 10 };
	struct ns_attr file = { .type = NS_REG, .mode = 0644, .uid = 20 };
	struct ns_cred owner = { .uid = 20 }, dirowner = { .uid = 10 };
	struct ns_cred other = { .uid = 30 }, root = { .uid = 0 };

	CHECK_EQ(ns_sticky_allows(&dir, &file, &owner), 0);
	CHECK_EQ(ns_sticky_allows(&dir, &file, &dirowner), 0);
	CHECK_EQ(ns_sticky_allows(&dir, &file, &root), 0);
	CHECK_EQ(ns_sticky_allows(&dir, &file, &other), -EPERM);
	dir.mode = 0777;
	CHECK_EQ(ns_sticky_allows(&dir, &file, &other), 0);
}

int main(void)
{
	test_classes();
	test_root();
	test_sticky();
	CHECK_DONE();
}
