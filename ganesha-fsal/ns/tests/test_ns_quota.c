/* The store's quota: creates past its files and writes, truncates and
 * size changes past its bytes fail with -EDQUOT and change nothing;
 * removes and shrinks pass also over a quota lowered below usage; the
 * quota is kept across a reopen, cleared with zeros, and holds exactly
 * under writers racing for the last room. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ns_internal.h"
#include "ns_test.h"

static void quota(struct ns_store *s, uint64_t bytes, uint64_t files)
{
	CHECK_EQ(ns_quota_set(s, &(struct ns_quota){ bytes, files }), 0);
}

static struct ns_statfs usage(struct ns_store *s)
{
	struct ns_statfs st = { 0 };

	CHECK_EQ(ns_statfs(s, &st), 0);
	return st;
}

static int set_size(struct ns_store *s, uint64_t ino, uint64_t size)
{
	struct ns_setattr sa = { .mask = NS_SET_SIZE, .size = size };

	return ns_setattr(s, ino, &sa, NULL);
}

static void test_no_quota_is_zeros_and_set_get_clear_round_trip(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_quota q = { 1, 1 };

	CHECK_EQ(ns_quota_get(s, &q), 0);
	CHECK(q.bytes == 0 && q.files == 0);
	quota(s, 1 << 20, 100);
	CHECK_EQ(ns_quota_get(s, &q), 0);
	CHECK(q.bytes == 1 << 20 && q.files == 100);
	quota(s, 0, 0);
	CHECK_EQ(ns_quota_get(s, &q), 0);
	CHECK(q.bytes == 0 && q.files == 0);
	check_clean(s);
	ns_close(s);
}

static void test_creates_past_the_files_fail_and_leave_nothing(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_attr a;
	uint64_t d = mkdir_(s, NS_ROOT_INO, "d");

	/* root, d, and two more */
	quota(s, 0, 4);
	mkfile(s, d, "f1");
	mkfile(s, d, "f2");
	CHECK_EQ(ns_create(s, d, "f3", TEST_NEW, NS_GUARDED, NULL, &a, NULL), -EDQUOT);
	CHECK_EQ(ns_mkdir(s, d, "sub", TEST_NEWDIR, &a), -EDQUOT);
	CHECK_EQ(ns_symlink(s, d, "l", "f1", TEST_NEW, &a), -EDQUOT);
	CHECK_EQ(ns_lookup(s, d, "f3", &a), -ENOENT);
	CHECK_EQ(usage(s).inodes, 4);
	/* A link is no new inode; a rename no new one either. */
	CHECK_EQ(ns_link(s, ino_of(s, d, "f1"), d, "hard", &a), 0);
	CHECK_EQ(ns_rename(s, d, "f2", NS_ROOT_INO, "f2"), 0);
	CHECK_EQ(ns_unlink(s, d, "hard"), 0);
	CHECK_EQ(ns_unlink(s, d, "f1"), 0);
	mkfile(s, d, "f3");
	check_clean(s);
	ns_close(s);
}

static void test_growth_past_the_bytes_fails_and_shrinking_passes(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t f = mkfile(s, NS_ROOT_INO, "f"), g = mkfile(s, NS_ROOT_INO, "g");
	char buf[1000];

	memset(buf, 'q', sizeof(buf));
	quota(s, 3000, 0);
	CHECK_EQ(ns_write(s, f, 0, buf, 1000, true, NULL, NULL), 0);
	CHECK_EQ(set_size(s, g, 2000), 0);
	CHECK_EQ(ns_write(s, f, 1000, buf, 1, true, NULL, NULL), -EDQUOT);
	CHECK_EQ(set_size(s, g, 2001), -EDQUOT);
	CHECK_EQ(attr_of(s, f).size, 1000);
	CHECK_EQ(attr_of(s, g).size, 2000);
	/* Overwriting within the size adds nothing. */
	CHECK_EQ(ns_write(s, f, 500, buf, 500, true, NULL, NULL), 0);
	/* Lowered below usage: only shrinking passes. */
	quota(s, 1000, 0);
	CHECK_EQ(set_size(s, g, 2500), -EDQUOT);
	CHECK_EQ(set_size(s, g, 100), 0);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "f"), 0);
	CHECK_EQ(usage(s).bytes, 100);
	CHECK_EQ(set_size(s, g, 1000), 0);
	check_clean(s);
	ns_close(s);
}

static void test_the_quota_survives_a_reopen(void)
{
	char path[128];
	struct ns_options o = { .nosync = true };
	struct ns_store *s = test_store(path, sizeof(path), &o);
	struct ns_quota q;
	struct ns_attr a;

	quota(s, 5000, 2);
	mkfile(s, NS_ROOT_INO, "f");
	ns_close(s);
	CHECK_EQ(ns_open(path, &o, &s), 0);
	CHECK_EQ(ns_quota_get(s, &q), 0);
	CHECK(q.bytes == 5000 && q.files == 2);
	CHECK_EQ(ns_create(s, NS_ROOT_INO, "g", TEST_NEW, NS_GUARDED, NULL, &a, NULL), -EDQUOT);
	ns_close(s);
}

/* The size the manager settles from the OSDs after a crash or a fence
 * passes the quota: a layout granted within it let the client write those
 * bytes.  The flag needs a growing size. */
static void test_a_settled_size_passes_the_quota(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t f = mkfile(s, NS_ROOT_INO, "f");
	struct ns_setattr settle = { .mask = NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_PAST_QUOTA,
				     .size = 5000 };
	struct ns_setattr bad = { .mask = NS_SET_SIZE | NS_SET_PAST_QUOTA, .size = 6000 };

	quota(s, 1000, 0);
	CHECK_EQ(set_size(s, f, 5000), -EDQUOT);
	CHECK_EQ(ns_setattr(s, f, &settle, NULL), 0);
	CHECK_EQ(attr_of(s, f).size, 5000);
	CHECK_EQ(ns_setattr(s, f, &bad, NULL), -EINVAL);
	CHECK_EQ(set_size(s, f, 5001), -EDQUOT);
	check_clean(s);
	ns_close(s);
}

/* A record that does not decode fails growth closed (EBADMSG), not open;
 * setting the quota again writes a good one. */
static void test_an_undecodable_record_refuses_growth_until_set_again(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint8_t k = K_QUOTA, bad[5] = { 1, 2, 3, 4, 5 };
	struct ns_quota q;
	struct ns_attr a;

	CHECK_EQ(db_put(s, &k, 1, bad, sizeof(bad)), 0);
	CHECK_EQ(ns_quota_get(s, &q), -EBADMSG);
	CHECK_EQ(ns_create(s, NS_ROOT_INO, "f", TEST_NEW, NS_GUARDED, NULL, &a, NULL), -EBADMSG);
	quota(s, 0, 10);
	mkfile(s, NS_ROOT_INO, "f");
	check_clean(s);
	ns_close(s);
}

#define RACERS 8
#define EACH 40

struct racer {
	struct ns_store *s;
	int id;
	int made;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char name[32];

	for (int i = 0; i < EACH; i++) {
		struct ns_attr a;

		snprintf(name, sizeof(name), "r%d.%d", r->id, i);
		if (ns_create(r->s, NS_ROOT_INO, name, TEST_NEW, NS_GUARDED, NULL, &a, NULL) == 0)
			r->made++;
	}
	return NULL;
}

/* 320 creates race for 100 files: exactly 99 are made (the root is one). */
static void test_racing_creates_never_pass_the_quota(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct racer r[RACERS];
	pthread_t t[RACERS];
	int made = 0;

	quota(s, 0, 100);
	for (int i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ s, i, 0 };
		pthread_create(&t[i], NULL, race, &r[i]);
	}
	for (int i = 0; i < RACERS; i++) {
		pthread_join(t[i], NULL);
		made += r[i].made;
	}
	CHECK_EQ(made, 99);
	CHECK_EQ(usage(s).inodes, 100);
	check_clean(s);
	ns_close(s);
}

int main(void)
{
	test_dir_init("quota");
	test_no_quota_is_zeros_and_set_get_clear_round_trip();
	test_creates_past_the_files_fail_and_leave_nothing();
	test_growth_past_the_bytes_fails_and_shrinking_passes();
	test_the_quota_survives_a_reopen();
	test_an_undecodable_record_refuses_growth_until_set_again();
	test_a_settled_size_passes_the_quota();
	test_racing_creates_never_pass_the_quota();
	test_dir_done();
	CHECK_DONE();
}
