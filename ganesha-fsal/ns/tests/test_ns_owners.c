/* Each user's and group's usage and quota: the counters follow creates,
 * writes, links, chown and removes; a quota refuses what would pass it,
 * for that owner only, and a chown onto an owner past it; the quotas are
 * listed; a store from before the counters has them counted at open;
 * ns_check finds a wrong counter and ns_repair sets it right; root reads
 * any quota, anyone else their own and their groups'. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "byteorder.h"
#include "ns_internal.h"
#include "ns_test.h"

#define USER(n) (&(const struct ns_owner){ NS_OWNER_USER, (n) })
#define GROUP(n) (&(const struct ns_owner){ NS_OWNER_GROUP, (n) })

static struct ns_quota used(struct ns_store *s, const struct ns_owner *o)
{
	struct ns_quota q, u = { 0 };

	CHECK_EQ(ns_owner_quota_get(s, o, &q, &u), 0);
	return u;
}

static void limit(struct ns_store *s, const struct ns_owner *o, uint64_t bytes, uint64_t files)
{
	CHECK_EQ(ns_owner_quota_set(s, o, &(struct ns_quota){ bytes, files }), 0);
}

static int create_as(struct ns_store *s, const char *name, uint32_t uid, uint32_t gid)
{
	struct ns_new in = { .mode = 0644, .uid = uid, .gid = gid };
	struct ns_attr a;

	return ns_create(s, NS_ROOT_INO, name, &in, NS_GUARDED, NULL, &a, NULL);
}

static int chown_(struct ns_store *s, uint64_t ino, uint32_t uid, uint32_t gid)
{
	struct ns_setattr sa = { .mask = NS_SET_UID | NS_SET_GID, .uid = uid, .gid = gid };

	return ns_setattr(s, ino, &sa, NULL);
}

static int grow(struct ns_store *s, uint64_t ino, uint64_t size)
{
	struct ns_setattr sa = { .mask = NS_SET_SIZE, .size = size };

	return ns_setattr(s, ino, &sa, NULL);
}

static bool is(struct ns_quota u, uint64_t files, uint64_t bytes)
{
	if (u.files == files && u.bytes == bytes)
		return true;
	printf("  used %llu files, %llu bytes; want %llu, %llu\n", (unsigned long long)u.files,
	       (unsigned long long)u.bytes, (unsigned long long)files, (unsigned long long)bytes);
	return false;
}

static void test_usage_follows_creates_writes_links_chown_and_removes(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_attr a;
	uint64_t f;

	CHECK(is(used(s, USER(0)), 1, 0)); /* the root */
	CHECK_EQ(create_as(s, "f", 1000, 100), 0);
	f = ino_of(s, NS_ROOT_INO, "f");
	CHECK_EQ(ns_write(s, f, 0, "hello", 5, true, NULL, NULL), 0);
	CHECK_EQ(grow(s, f, 4096), 0);
	CHECK(is(used(s, USER(1000)), 1, 4096));
	CHECK(is(used(s, GROUP(100)), 1, 4096));
	CHECK_EQ(ns_link(s, f, NS_ROOT_INO, "g", &a), 0); /* one inode, counted once */
	CHECK(is(used(s, USER(1000)), 1, 4096));
	CHECK_EQ(chown_(s, f, 2000, 200), 0);
	CHECK(is(used(s, USER(1000)), 0, 0) && is(used(s, GROUP(100)), 0, 0));
	CHECK(is(used(s, USER(2000)), 1, 4096) && is(used(s, GROUP(200)), 1, 4096));
	mkdir_(s, NS_ROOT_INO, "d"); /* a directory counts as a file, no bytes */
	CHECK(is(used(s, USER(1000)), 1, 0));
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "f"), 0);
	CHECK(is(used(s, USER(2000)), 1, 4096));
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "g"), 0);
	CHECK(is(used(s, USER(2000)), 0, 0) && is(used(s, GROUP(200)), 0, 0));
	check_clean(s);
	ns_close(s);
}

static void test_a_users_files_quota_stops_that_user_alone(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);

	limit(s, USER(1000), 0, 2);
	CHECK_EQ(create_as(s, "a", 1000, 100), 0);
	CHECK_EQ(create_as(s, "b", 1000, 100), 0);
	CHECK_EQ(create_as(s, "c", 1000, 100), -EDQUOT);
	CHECK_EQ(create_as(s, "c", 1001, 100), 0); /* another user, the same group */
	CHECK(is(used(s, USER(1000)), 2, 0) && is(used(s, GROUP(100)), 3, 0));
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "a"), 0);
	CHECK_EQ(create_as(s, "d", 1000, 100), 0);
	check_clean(s);
	ns_close(s);
}

static void test_a_groups_bytes_quota_refuses_growth_and_passes_shrinking(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t f;

	CHECK_EQ(create_as(s, "f", 1000, 100), 0);
	f = ino_of(s, NS_ROOT_INO, "f");
	CHECK_EQ(grow(s, f, 8192), 0);
	limit(s, GROUP(100), 4096, 0); /* below what the group uses */
	CHECK_EQ(grow(s, f, 8193), -EDQUOT);
	CHECK_EQ(grow(s, f, 6000), 0);
	CHECK_EQ(grow(s, f, 4096), 0);
	CHECK_EQ(grow(s, f, 4097), -EDQUOT);
	CHECK(is(used(s, GROUP(100)), 1, 4096));
	CHECK_EQ(create_as(s, "empty", 1000, 100), 0); /* no bytes: within */
	limit(s, GROUP(100), 0, 0);
	CHECK_EQ(grow(s, f, 10000), 0);
	check_clean(s);
	ns_close(s);
}

static void test_a_chown_onto_an_owner_past_its_quota_fails_and_changes_nothing(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_attr a;
	uint64_t f;

	CHECK_EQ(create_as(s, "f", 1000, 100), 0);
	f = ino_of(s, NS_ROOT_INO, "f");
	CHECK_EQ(grow(s, f, 10000), 0);
	limit(s, USER(2000), 5000, 0);
	CHECK_EQ(chown_(s, f, 2000, 100), -EDQUOT);
	CHECK_EQ(ns_getattr(s, f, &a), 0);
	CHECK_EQ(a.uid, 1000);
	CHECK(is(used(s, USER(2000)), 0, 0) && is(used(s, USER(1000)), 1, 10000));
	limit(s, USER(2000), 20000, 0);
	CHECK_EQ(chown_(s, f, 2000, 100), 0);
	CHECK(is(used(s, USER(2000)), 1, 10000));
	check_clean(s);
	ns_close(s);
}

static void test_the_room_left_is_the_least_the_store_user_and_group_leave(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t room;

	CHECK_EQ(ns_quota_room(s, 1000, 100, &room), 0);
	CHECK(room == UINT64_MAX);
	CHECK_EQ(create_as(s, "f", 1000, 100), 0);
	CHECK_EQ(grow(s, ino_of(s, NS_ROOT_INO, "f"), 1000), 0);
	CHECK_EQ(ns_quota_set(s, &(struct ns_quota){ 10000, 0 }), 0);
	CHECK_EQ(ns_quota_room(s, 1000, 100, &room), 0);
	CHECK_EQ(room, 9000);
	limit(s, USER(1000), 3000, 0);
	CHECK_EQ(ns_quota_room(s, 1000, 100, &room), 0);
	CHECK_EQ(room, 2000);
	CHECK_EQ(ns_quota_room(s, 1001, 100, &room), 0); /* another user */
	CHECK_EQ(room, 9000);
	limit(s, GROUP(100), 1500, 0);
	CHECK_EQ(ns_quota_room(s, 1000, 100, &room), 0);
	CHECK_EQ(room, 500);
	limit(s, GROUP(100), 500, 0); /* below what it uses */
	CHECK_EQ(ns_quota_room(s, 1000, 100, &room), 0);
	CHECK_EQ(room, 0);
	ns_close(s);
}

struct listed {
	char text[256];
};

static int list_one(void *arg, const struct ns_owner *o, const struct ns_quota *q,
		    const struct ns_quota *u)
{
	struct listed *l = arg;
	size_t n = strlen(l->text);

	snprintf(l->text + n, sizeof(l->text) - n, "%c%u:%llu/%llu,%llu/%llu ", (char)o->kind,
		 o->id, (unsigned long long)u->files, (unsigned long long)q->files,
		 (unsigned long long)u->bytes, (unsigned long long)q->bytes);
	return 0;
}

static void test_the_quotas_are_listed_groups_then_users_by_id(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct listed l = { "" };

	limit(s, USER(1000), 0, 5);
	limit(s, USER(7), 100, 0);
	limit(s, GROUP(100), 1 << 20, 9);
	limit(s, USER(9), 1, 1);
	limit(s, USER(9), 0, 0); /* cleared: not listed */
	CHECK_EQ(create_as(s, "f", 1000, 100), 0);
	CHECK_EQ(ns_owner_quota_list(s, list_one, &l), 0);
	CHECK(strcmp(l.text, "g100:1/9,0/1048576 u7:0/0,0/100 u1000:1/5,0/0 ") == 0);
	printf("listed: %s\n", l.text);
	CHECK_EQ(ns_owner_quota_set(s, &(struct ns_owner){ 'x', 1 }, &(struct ns_quota){ 1, 1 }),
		 -EINVAL);
	ns_close(s);
}

/* As a store formatted before owner counters: none, and no mark. */
static void forget_owner_counters(struct ns_store *s)
{
	uint8_t from[3] = { K_COUNTER, C_OWNERS, 0 }, to[2] = { K_COUNTER, C_OWNERS + 1 };
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint8_t mark[2];
	uint64_t seq;

	rocksdb_writebatch_delete_range(b, (const char *)from, sizeof(from), (const char *)to,
					sizeof(to));
	rocksdb_writebatch_delete(b, (const char *)mark, key_counter(mark, C_OWNERS));
	CHECK_EQ(db_write(s, b, &seq), 0);
	rocksdb_writebatch_destroy(b);
}

static void test_a_store_without_owner_counters_has_them_counted_at_open(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_check_result r;
	struct ns_options o = { 0 };

	CHECK_EQ(create_as(s, "a", 1000, 100), 0);
	CHECK_EQ(grow(s, ino_of(s, NS_ROOT_INO, "a"), 300), 0);
	CHECK_EQ(create_as(s, "b", 1001, 100), 0);
	forget_owner_counters(s);
	CHECK(is(used(s, USER(1000)), 0, 0));
	CHECK_EQ(ns_check(s, NULL, NULL, &r), 0);
	CHECK_EQ(r.bad_counters, 6); /* no mark; root's, a's, b's users; their groups */
	ns_close(s);
	CHECK_EQ(ns_open(path, &o, &s), 0);
	CHECK(is(used(s, USER(1000)), 1, 300) && is(used(s, USER(1001)), 1, 0));
	CHECK(is(used(s, GROUP(100)), 2, 300) && is(used(s, USER(0)), 1, 0));
	check_clean(s);
	ns_close(s);
}

static void test_check_finds_a_wrong_owner_counter_and_repair_sets_it(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint8_t k[OWNER_COUNTER_KEY_LEN], v[8];
	struct ns_check_result r;

	CHECK_EQ(create_as(s, "a", 1000, 100), 0);
	put_be64(v, 7);
	CHECK_EQ(db_put(s, k, key_owner_counter(k, USER(1000), C_INODES), v, 8), 0);
	CHECK_EQ(db_put(s, k, key_owner_counter(k, USER(4242), C_BYTES), v, 8), 0);
	CHECK_EQ(ns_check(s, NULL, NULL, &r), 0);
	CHECK_EQ(r.bad_counters, 2);
	CHECK_EQ(r.problems, 2);
	CHECK_EQ(ns_repair(s, NULL, NULL, &r), 0);
	CHECK_EQ(r.bad_counters, 1);
	CHECK(is(used(s, USER(1000)), 1, 0) && is(used(s, USER(4242)), 0, 0));
	check_clean(s);
	ns_close(s);
}

static void test_root_reads_any_quota_others_their_own_and_their_groups(void)
{
	const uint32_t groups[] = { 200, 300 };
	struct ns_cred root = { 0 },
		       user = { .uid = 1000, .gid = 100, .groups = groups, .ngroups = 2 };
	struct ns_owner self = { NS_OWNER_USER, 1000 }, other = { NS_OWNER_USER, 1001 };
	struct ns_owner primary = { NS_OWNER_GROUP, 100 }, supplementary = { NS_OWNER_GROUP, 300 };
	struct ns_owner foreign = { NS_OWNER_GROUP, 1000 };

	CHECK_EQ(ns_owner_quota_may_read(&other, &root), 0);
	CHECK_EQ(ns_owner_quota_may_read(&foreign, &root), 0);
	CHECK_EQ(ns_owner_quota_may_read(&self, &user), 0);
	CHECK_EQ(ns_owner_quota_may_read(&other, &user), -EPERM);
	CHECK_EQ(ns_owner_quota_may_read(&primary, &user), 0);
	CHECK_EQ(ns_owner_quota_may_read(&supplementary, &user), 0);
	/* A group whose id is the user's uid is still another group. */
	CHECK_EQ(ns_owner_quota_may_read(&foreign, &user), -EPERM);
}

int main(void)
{
	test_dir_init("owners");
	test_usage_follows_creates_writes_links_chown_and_removes();
	test_a_users_files_quota_stops_that_user_alone();
	test_a_groups_bytes_quota_refuses_growth_and_passes_shrinking();
	test_a_chown_onto_an_owner_past_its_quota_fails_and_changes_nothing();
	test_the_room_left_is_the_least_the_store_user_and_group_leave();
	test_the_quotas_are_listed_groups_then_users_by_id();
	test_a_store_without_owner_counters_has_them_counted_at_open();
	test_check_finds_a_wrong_owner_counter_and_repair_sets_it();
	test_root_reads_any_quota_others_their_own_and_their_groups();
	test_dir_done();
	CHECK_DONE();
}
