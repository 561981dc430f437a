/* Helpers shared by the namespace store's unit tests: a scratch directory,
 * a fresh store in it, and short forms of the common calls. */
#ifndef PANDO_NS_TEST_H
#define PANDO_NS_TEST_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ns_store.h"

static char test_root[64];
static int test_stores;

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static inline void test_dir_init(const char *name)
{
	snprintf(test_root, sizeof(test_root), "/tmp/pando-ns-%s-XXXXXX", name);
	if (!mkdtemp(test_root)) {
		perror("mkdtemp");
		exit(1);
	}
}

static inline void test_dir_done(void)
{
	nftw(test_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh path under the scratch directory for one store. */
static inline const char *test_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/store%d", test_root, test_stores++);
	return buf;
}

/* A fresh, formatted and opened store; nosync unless the test is about
 * durability. */
static inline struct ns_store *test_store(char *path, size_t len, const struct ns_options *o)
{
	struct ns_options def = { .nosync = true };
	struct ns_store *s = NULL;

	if (!o)
		o = &def;
	test_path(path, len);
	CHECK_EQ(ns_format(path, o), 0);
	CHECK_EQ(ns_open(path, o, &s), 0);
	if (!s)
		exit(1);
	return s;
}

#define TEST_NEW (&(const struct ns_new){ .mode = 0644, .uid = 1000, .gid = 100 })
#define TEST_NEWDIR (&(const struct ns_new){ .mode = 0755, .uid = 1000, .gid = 100 })

static inline uint64_t mkfile(struct ns_store *s, uint64_t dir, const char *name)
{
	struct ns_attr a = { 0 };
	int rc = ns_create(s, dir, name, TEST_NEW, NS_GUARDED, NULL, &a, NULL);

	CHECK_EQ(rc, 0);
	return rc ? 0 : a.ino;
}

static inline uint64_t mkdir_(struct ns_store *s, uint64_t dir, const char *name)
{
	struct ns_attr a = { 0 };
	int rc = ns_mkdir(s, dir, name, TEST_NEWDIR, &a);

	CHECK_EQ(rc, 0);
	return rc ? 0 : a.ino;
}

/* The inode a name holds, 0 if none. */
static inline uint64_t ino_of(struct ns_store *s, uint64_t dir, const char *name)
{
	struct ns_attr a;

	return ns_lookup(s, dir, name, &a) ? 0 : a.ino;
}

static inline struct ns_attr attr_of(struct ns_store *s, uint64_t ino)
{
	struct ns_attr a = { 0 };

	CHECK_EQ(ns_getattr(s, ino, &a), 0);
	return a;
}

static inline void say_stderr(void *arg, const char *msg)
{
	fprintf(stderr, "  check: %s\n", msg);
}

/* The store passes ns_check with no problem. */
static inline void check_clean(struct ns_store *s)
{
	struct ns_check_result r;

	CHECK_EQ(ns_check(s, say_stderr, NULL, &r), 0);
	CHECK_EQ(r.problems, 0);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
