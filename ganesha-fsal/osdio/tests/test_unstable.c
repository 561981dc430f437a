/* The files with uncommitted UNSTABLE gateway writes (unstable.h), as
 * the FSAL's WRITE and COMMIT use them: a COMMIT learns that an OSD
 * restarted after the file's first unstable write however many handles
 * the file went through in between, since none of this lives on one. */
#include "check.h"

#include <pthread.h>

#include "unstable.h"

static void test_commit_after_a_restart_under_the_writes_is_lost(void)
{
	struct unstable_files *u = unstable_files_new();

	CHECK(u != NULL);
	CHECK_EQ(unstable_files_note(u, 7, 0), 0);
	CHECK_EQ(unstable_files_note(u, 7, 1), 0);      /* the first write's epoch counts */
	CHECK(unstable_files_lost(u, 7, 1));
	CHECK(!unstable_files_lost(u, 7, 1));           /* told once: the client resends */
	unstable_files_free(u);
}

static void test_commit_with_no_restart_or_no_writes_is_not_lost(void)
{
	struct unstable_files *u = unstable_files_new();

	CHECK_EQ(unstable_files_note(u, 7, 3), 0);
	CHECK(!unstable_files_lost(u, 7, 3));
	CHECK(!unstable_files_lost(u, 8, 4));           /* never written unstable */
	CHECK_EQ(unstable_files_note(u, 7, 4), 0);      /* after a COMMIT: a new first write */
	CHECK(!unstable_files_lost(u, 7, 4));
	unstable_files_free(u);
}

/* Inodes sharing a bucket keep their own epochs, and one's COMMIT leaves
 * the others pending. */
static void test_files_are_kept_apart(void)
{
	struct unstable_files *u = unstable_files_new();

	for (uint64_t ino = 1; ino <= 2048; ino++)
		CHECK_EQ(unstable_files_note(u, ino, ino % 2), 0);
	for (uint64_t ino = 2048; ino >= 1; ino -= 2)
		CHECK(!unstable_files_lost(u, ino, 0));
	for (uint64_t ino = 1; ino <= 2047; ino += 2)
		CHECK(!unstable_files_lost(u, ino, 1));
	for (uint64_t ino = 1; ino <= 2048; ino++)
		CHECK(!unstable_files_lost(u, ino, 5));  /* all forgotten */
	unstable_files_free(u);
}

#define WRITERS 4
#define FILES 1000

static struct unstable_files *shared;

static void *writer(void *arg)
{
	for (uint64_t ino = 1; ino <= FILES; ino++)
		CHECK_EQ(unstable_files_note(shared, ino, (uint64_t)(uintptr_t)arg), 0);
	return NULL;
}

/* Writers of one file racing: whichever came first, one entry each. */
static void test_concurrent_writers(void)
{
	pthread_t th[WRITERS];
	int lost = 0;

	shared = unstable_files_new();
	for (uintptr_t i = 0; i < WRITERS; i++)
		pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)(i != 0));
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	for (uint64_t ino = 1; ino <= FILES; ino++)
		lost += unstable_files_lost(shared, ino, 2);
	CHECK_EQ(lost, FILES);
	for (uint64_t ino = 1; ino <= FILES; ino++)
		CHECK(!unstable_files_lost(shared, ino, 2));
	unstable_files_free(shared);
}

int main(void)
{
	test_commit_after_a_restart_under_the_writes_is_lost();
	test_commit_with_no_restart_or_no_writes_is_not_lost();
	test_files_are_kept_apart();
	test_concurrent_writers();
	unstable_files_free(NULL);
	CHECK_DONE();
}
