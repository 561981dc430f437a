/* The files with uncommitted UNSTABLE gateway writes (unstable.h), as
 * the FSAL's WRITE and COMMIT use them: a COMMIT learns that an OSD
 * restarted after the file's first unstable write however many handles
 * the file went through in between, since none of this lives on one. */
#include "check.h"

#include <errno.h>
#include <pthread.h>

#include "unstable.h"

static void test_commit_after_a_restart_under_the_writes_is_lost(void)
{
	struct unstable_files *u = unstable_files_new(1 << 16);

	CHECK(u != NULL);
	CHECK_EQ(unstable_files_note(u, 7, 0), 0);
	CHECK_EQ(unstable_files_note(u, 7, 1), 0); /* the first write's epoch counts */
	CHECK(unstable_files_lost(u, 7, 1));
	CHECK(!unstable_files_lost(u, 7, 1)); /* told once: the client resends */
	unstable_files_free(u);
}

static void test_commit_with_no_restart_or_no_writes_is_not_lost(void)
{
	struct unstable_files *u = unstable_files_new(1 << 16);

	CHECK_EQ(unstable_files_note(u, 7, 3), 0);
	CHECK(!unstable_files_lost(u, 7, 3));
	CHECK(!unstable_files_lost(u, 8, 4));      /* never written unstable */
	CHECK_EQ(unstable_files_note(u, 7, 4), 0); /* after a COMMIT: a new first write */
	CHECK(!unstable_files_lost(u, 7, 4));
	unstable_files_free(u);
}

/* Inodes sharing a bucket keep their own epochs, and one's COMMIT leaves
 * the others pending. */
static void test_files_are_kept_apart(void)
{
	struct unstable_files *u = unstable_files_new(1 << 16);

	for (uint64_t ino = 1; ino <= 2048; ino++)
		CHECK_EQ(unstable_files_note(u, ino, ino % 2), 0);
	for (uint64_t ino = 2048; ino >= 1; ino -= 2)
		CHECK(!unstable_files_lost(u, ino, 0));
	for (uint64_t ino = 1; ino <= 2047; ino += 2)
		CHECK(!unstable_files_lost(u, ino, 1));
	for (uint64_t ino = 1; ino <= 2048; ino++)
		CHECK(!unstable_files_lost(u, ino, 5)); /* all forgotten */
	unstable_files_free(u);
}

/* A client that writes UNSTABLE to file after file and never commits
 * costs bounded memory: once the table is full, a file not in it gets no
 * room (its write goes stable); a COMMIT makes room again. */
static void test_a_full_table_has_no_room_for_another_file(void)
{
	struct unstable_files *u = unstable_files_new(2);

	CHECK_EQ(unstable_files_reserve(u, 1), 0);
	CHECK_EQ(unstable_files_note(u, 1, 0), 0);
	CHECK_EQ(unstable_files_reserve(u, 2), 0);
	CHECK_EQ(unstable_files_reserve(u, 3), -ENOSPC);
	CHECK_EQ(unstable_files_note(u, 3, 0), -ENOSPC);
	CHECK_EQ(unstable_files_reserve(u, 2), 0); /* already in: costs nothing */
	CHECK(!unstable_files_lost(u, 3, 1));      /* it was never kept */
	CHECK(unstable_files_lost(u, 1, 1));
	CHECK_EQ(unstable_files_reserve(u, 3), 0);
	unstable_files_free(u);
}

/* Room is taken before the write goes out; the epoch is the one the
 * write came back under (an OSD restart it saw is before its bytes), and
 * a reserved entry whose write failed loses nothing. */
static void test_a_reserved_entry_takes_the_epoch_of_the_write(void)
{
	struct unstable_files *u = unstable_files_new(8);

	CHECK_EQ(unstable_files_reserve(u, 5), 0);
	CHECK_EQ(unstable_files_note(u, 5, 4), 0);
	CHECK(!unstable_files_lost(u, 5, 4));
	CHECK_EQ(unstable_files_reserve(u, 6), 0); /* its write failed */
	CHECK(!unstable_files_lost(u, 6, 9));
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

	shared = unstable_files_new(1 << 16);
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
	test_a_full_table_has_no_room_for_another_file();
	test_a_reserved_entry_takes_the_epoch_of_the_write();
	unstable_files_free(NULL);
	CHECK_DONE();
}
