/* Many threads at once on a small shared tree: creates, mkdirs, links,
 * unlinks, rmdirs, renames of files and directories (some of which would
 * close loops), writes and setattrs, all colliding on the same few names.
 * Every call must give an answer POSIX allows, and afterwards the store
 * must pass ns_check: link counts, entry counts, parents, no cycles.
 * Then one race on its own that the mix hit about once in hundreds of
 * runs: an unlink against the removal of its directory. */
#include "ns_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#define THREADS 4
#define OPS 20000
#define NAMES 12
#define POOL 32

static struct ns_store *s;
/* Directories that exist or did: stale ones answer -ESTALE. */
static _Atomic uint64_t pool[POOL];
static atomic_int unexpected;
/* How renames ended, to show the mix covered the interesting cases. */
static atomic_int renamed, rename_loops, rename_notempty;

static uint64_t any_dir(unsigned *seed)
{
	return atomic_load(&pool[rand_r(seed) % POOL]);
}

static void any_name(unsigned *seed, char *buf)
{
	snprintf(buf, 8, "n%d", rand_r(seed) % NAMES);
}

static bool allowed(int rc)
{
	switch (rc) {
	case 0:
	case -ENOENT:
	case -EEXIST:
	case -EISDIR:
	case -ENOTDIR:
	case -ENOTEMPTY:
	case -EINVAL:
	case -ESTALE:
	case -EPERM:
	case -EMLINK:
	case -EREMOTE:
		return true;
	}
	return false;
}

static int rename_counted(uint64_t d, const char *n1, uint64_t e, const char *n2)
{
	int rc = ns_rename(s, d, n1, e, n2);

	if (rc == 0)
		atomic_fetch_add(&renamed, 1);
	if (rc == -EINVAL)
		atomic_fetch_add(&rename_loops, 1);
	if (rc == -ENOTEMPTY)
		atomic_fetch_add(&rename_notempty, 1);
	return rc;
}

static int one_op(unsigned *seed)
{
	uint64_t d = any_dir(seed), e = any_dir(seed);
	char n1[8], n2[8];
	struct ns_attr a;

	any_name(seed, n1);
	any_name(seed, n2);
	switch (rand_r(seed) % 9) {
	case 0:
		return ns_create(s, d, n1, TEST_NEW, NS_UNCHECKED, NULL, NULL, NULL);
	case 1:
		if (ns_mkdir(s, d, n1, TEST_NEWDIR, &a))
			return 0;
		atomic_store(&pool[rand_r(seed) % POOL], a.ino);
		return 0;
	case 2:
		return ns_unlink(s, d, n1);
	case 3:
		return ns_rmdir(s, d, n1);
	case 4:
		if (ns_lookup(s, d, n1, &a))
			return 0;
		return ns_link(s, a.ino, e, n2, NULL);
	case 5:
	case 6:
		return rename_counted(d, n1, e, n2);
	case 7:
		if (ns_lookup(s, d, n1, &a) || a.type != NS_REG)
			return 0;
		return ns_write(s, a.ino, (uint64_t)(rand_r(seed) % 100), "data", 4, false, NULL,
				NULL);
	default:
		if (ns_lookup(s, d, n1, &a))
			return 0;
		return ns_setattr(s, a.ino,
				  &(struct ns_setattr){ .mask = NS_SET_MODE | NS_SET_MTIME_NOW,
							.mode = 0600 },
				  NULL);
	}
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < OPS; i++) {
		int rc = one_op(&seed);

		if (!allowed(rc)) {
			fprintf(stderr, "unexpected %d\n", rc);
			atomic_fetch_add(&unexpected, 1);
		}
	}
	return NULL;
}

static void seed_tree(void)
{
	uint64_t top[3];

	for (int i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		top[i] = mkdir_(s, NS_ROOT_INO, name);
	}
	for (int i = 0; i < POOL; i++)
		atomic_init(&pool[i], i % 4 ? top[i % 4 - 1] : NS_ROOT_INO);
}

/* An unlink whose directory is emptied and removed between its lookup of
 * the name and its locks: the name is gone (-ENOENT) or the directory is
 * (-ESTALE), never -EIO, which says the store is corrupt. */
#define RACE_ROUNDS 5000

static _Atomic uint64_t race_dir = NS_ROOT_INO;
static atomic_bool race_done;

static void *dir_churner(void *arg)
{
	struct ns_attr a;

	for (int i = 0; i < RACE_ROUNDS; i++) {
		if (ns_mkdir(s, NS_ROOT_INO, "race", TEST_NEWDIR, &a))
			continue;
		atomic_store(&race_dir, a.ino);
		ns_create(s, a.ino, "f", TEST_NEW, NS_UNCHECKED, NULL, NULL, NULL);
		ns_unlink(s, a.ino, "f");
		CHECK_EQ(ns_rmdir(s, NS_ROOT_INO, "race"), 0);
	}
	atomic_store(&race_done, true);
	return NULL;
}

static void *racing_unlinker(void *arg)
{
	while (!atomic_load(&race_done)) {
		int rc = ns_unlink(s, atomic_load(&race_dir), "f");

		if (rc && rc != -ENOENT && rc != -ESTALE) {
			fprintf(stderr, "unlink racing rmdir: unexpected %d\n", rc);
			atomic_fetch_add(&unexpected, 1);
		}
	}
	return NULL;
}

static void test_unlink_racing_the_removal_of_its_directory(void)
{
	pthread_t churner, unlinker;

	pthread_create(&churner, NULL, dir_churner, NULL);
	pthread_create(&unlinker, NULL, racing_unlinker, NULL);
	pthread_join(churner, NULL);
	pthread_join(unlinker, NULL);
}

int main(void)
{
	pthread_t th[THREADS];
	struct ns_check_result r;
	struct ns_statfs st;
	char path[128];
	double t0;

	test_dir_init("threads");
	s = test_store(path, sizeof(path), NULL);
	seed_tree();
	t0 = now_s();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i * 7919 + 1));
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	printf("%d threads x %d mixed ops: %.2f s; renames: %d done, %d loops refused, "
	       "%d onto non-empty directories\n",
	       THREADS, OPS, now_s() - t0, atomic_load(&renamed), atomic_load(&rename_loops),
	       atomic_load(&rename_notempty));
	CHECK(atomic_load(&renamed) > 0);
	CHECK(atomic_load(&rename_loops) > 0);
	test_unlink_racing_the_removal_of_its_directory();
	CHECK_EQ(atomic_load(&unexpected), 0);
	CHECK_EQ(ns_check(s, say_stderr, NULL, &r), 0);
	CHECK_EQ(r.problems, 0);
	CHECK_EQ(ns_statfs(s, &st), 0);
	CHECK_EQ(st.inodes, r.inodes);
	printf("after: %llu inodes, %llu names\n", (unsigned long long)r.inodes,
	       (unsigned long long)r.dirents);
	ns_close(s);
	test_dir_done();
	CHECK_DONE();
}
