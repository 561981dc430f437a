/* The store as a whole: format and open, the root, file handles and ids
 * across restarts, statfs counters, group commit. */
#include "ns_test.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>

static void test_format_open(void)
{
	char path[128], none[160];
	uint8_t u1[16], u2[16];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_attr a;

	ns_uuid(s, u1);
	CHECK_EQ(u1[6] >> 4, 4);
	CHECK_EQ(ns_inline_max(s), NS_INLINE_MAX_DEFAULT);
	CHECK_EQ(ns_format(path, NULL), -EBUSY);
	ns_close(s);
	CHECK_EQ(ns_format(path, NULL), -EEXIST);
	snprintf(none, sizeof(none), "%s/none", test_root);
	CHECK_EQ(ns_open(none, NULL, &s), -ENOENT);
	CHECK_EQ(mkdir(none, 0700), 0);
	CHECK_EQ(ns_open(none, NULL, &s), -ENOENT);

	CHECK_EQ(ns_open(path, &(struct ns_options){ .inline_max = 4096 }, &s), 0);
	ns_uuid(s, u2);
	CHECK(memcmp(u1, u2, 16) == 0);
	CHECK_EQ(ns_inline_max(s), 4096);
	CHECK_EQ(ns_getattr(s, NS_ROOT_INO, &a), 0);
	CHECK_EQ(a.type, NS_DIR);
	CHECK_EQ(a.mode, 0755);
	CHECK_EQ(a.nlink, 2);
	CHECK_EQ(a.uid, 0);
	CHECK_EQ(a.parent, NS_ROOT_INO);
	CHECK_EQ(a.size, 0);
	CHECK(a.gen != 0);
	CHECK(a.btime.tv_sec > 0);
	check_clean(s);
	ns_close(s);
}

/* A handle (ino, gen) keeps working across restarts while the file lives,
 * and is stale ever after; ids are never handed out twice. */
static void test_handles(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_attr a, b;
	uint64_t gone;

	CHECK_EQ(ns_create(s, NS_ROOT_INO, "keep", TEST_NEW, NS_GUARDED, NULL, &a, NULL), 0);
	gone = mkfile(s, NS_ROOT_INO, "gone");
	CHECK(gone > a.ino);
	CHECK_EQ(ns_getattr_handle(s, a.ino, a.gen, &b), 0);
	CHECK_EQ(ns_getattr_handle(s, a.ino, a.gen + 1, &b), -ESTALE);
	CHECK_EQ(ns_getattr_handle(s, a.ino, 0, &b), -ESTALE);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "gone"), 0);
	CHECK_EQ(ns_getattr(s, gone, &b), -ESTALE);
	ns_close(s);

	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK_EQ(ns_getattr_handle(s, a.ino, a.gen, &b), 0);
	CHECK_EQ(b.ino, a.ino);
	CHECK_EQ(b.gen, a.gen);
	CHECK_EQ(ns_getattr(s, gone, &b), -ESTALE);
	/* The highest id was freed before the restart; it stays unused. */
	CHECK(mkfile(s, NS_ROOT_INO, "new") > gone);
	CHECK_EQ(ns_getattr(s, 0, &b), -ESTALE);
	CHECK_EQ(ns_getattr(s, UINT64_MAX, &b), -ESTALE);
	check_clean(s);
	ns_close(s);
}

/* Reserved ids are never handed out again, to inodes or to a later
 * reservation, across a restart too (the reservation rides on a later
 * durable batch, as the FSAL's intent does). */
static void test_ids_reserve(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	uint64_t first, second, ino;

	CHECK_EQ(ns_ids_reserve(s, 0, &first), -EINVAL);
	CHECK_EQ(ns_ids_reserve(s, (1u << 20) + 1, &first), -EINVAL);
	CHECK_EQ(ns_ids_reserve(s, 10, &first), 0);
	ino = mkfile(s, NS_ROOT_INO, "after");
	CHECK(ino >= first + 10);
	CHECK_EQ(ns_ids_reserve(s, 3, &second), 0);
	CHECK(second > ino);
	ns_close(s);

	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK(mkfile(s, NS_ROOT_INO, "restart") >= second + 3);
	check_clean(s);
	ns_close(s);
}

static void test_statfs(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct ns_statfs st;
	uint64_t f, d;

	CHECK_EQ(ns_statfs(s, &st), 0);
	CHECK_EQ(st.inodes, 1);
	CHECK_EQ(st.bytes, 0);
	f = mkfile(s, NS_ROOT_INO, "f");
	d = mkdir_(s, NS_ROOT_INO, "d");
	CHECK_EQ(ns_symlink(s, d, "l", "f", TEST_NEW, NULL), 0);
	CHECK_EQ(ns_write(s, f, 0, "hello", 5, true, NULL, NULL), 0);
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_SIZE, .size = 100 }, NULL),
		 0);
	CHECK_EQ(ns_statfs(s, &st), 0);
	CHECK_EQ(st.inodes, 4);
	CHECK_EQ(st.bytes, 100);
	CHECK_EQ(st.inline_bytes, 5);
	ns_close(s);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK_EQ(ns_statfs(s, &st), 0);
	CHECK_EQ(st.inodes, 4);
	CHECK_EQ(st.bytes, 100);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "f"), 0);
	CHECK_EQ(ns_unlink(s, d, "l"), 0);
	CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "d"), 0);
	CHECK_EQ(ns_statfs(s, &st), 0);
	CHECK_EQ(st.inodes, 1);
	CHECK_EQ(st.bytes, 0);
	CHECK_EQ(st.inline_bytes, 0);
	check_clean(s);
	ns_close(s);
}

/* Durable creates from several threads: group commit shares the syncs. */
struct sync_arg {
	struct ns_store *s;
	uint64_t dir;
	int id;
	int n;
};

static void *sync_creator(void *p)
{
	struct sync_arg *a = p;
	char name[32];

	for (int i = 0; i < a->n; i++) {
		snprintf(name, sizeof(name), "t%d-%d", a->id, i);
		if (ns_create(a->s, a->dir, name, TEST_NEW, NS_GUARDED, NULL, NULL, NULL))
			return (void *)1;
	}
	return NULL;
}

static void test_synced_threads(void)
{
	enum { THREADS = 4, PER = 100 };
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), &(struct ns_options){ 0 });
	struct sync_arg args[THREADS];
	pthread_t th[THREADS];
	struct ns_attr a;
	double t0 = now_s();

	for (int i = 0; i < THREADS; i++) {
		args[i] = (struct sync_arg){ .s = s, .dir = NS_ROOT_INO, .id = i, .n = PER };
		pthread_create(&th[i], NULL, sync_creator, &args[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		CHECK(ret == NULL);
	}
	printf("synced creates, %d threads, one directory: %.0f/s\n", THREADS,
	       THREADS * PER / (now_s() - t0));
	CHECK_EQ(ns_getattr(s, NS_ROOT_INO, &a), 0);
	CHECK_EQ(a.size, THREADS * PER);
	CHECK_EQ(ns_sync(s), 0);
	check_clean(s);
	ns_close(s);
}

/* The store holds every name and small files' data: nobody but its owner
 * may even list it, whether format made it or an admin made it 0755. */
static void test_store_directory_is_the_owners_alone(void)
{
	char path[128];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0700);
	ns_close(s);
	CHECK_EQ(chmod(path, 0755), 0);
	CHECK_EQ(ns_open(path, NULL, &s), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0700);
	ns_close(s);
}

int main(void)
{
	test_dir_init("store");
	test_format_open();
	test_handles();
	test_ids_reserve();
	test_statfs();
	test_synced_threads();
	test_store_directory_is_the_owners_alone();
	test_dir_done();
	CHECK_DONE();
}
