/* Room on the store's disk, and what a full disk does to the store.
 *
 * RocksDB cannot be allowed to run out of space: a failed WAL append
 * leaves its log writer unusable, and Debian's build then aborts the
 * process on the next sync (an assertion in WritableFileWriter), and
 * flushes and compactions need room of their own.  So operations that
 * make the namespace bigger (new names, inline data) are refused with
 * -ENOSPC while less than the reserve is free; removals, renames,
 * attribute changes and moves to objects may still use the reserve, so a
 * full file system can always be cleaned up.  Free space is sampled with
 * fstatvfs at most every SAMPLE_NS, so the check costs a clock read.
 *
 * If RocksDB still refuses a write, the store is marked failed: every
 * later write and sync fails at once, without touching RocksDB again,
 * and reads go on.  Only a restart (after making room) clears it. */
#include "ns_internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_NS 50000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Until the first sample (or if fstatvfs ever fails) the disk counts as
 * roomy: a broken statfs must not stop the file system. */
int space_open(struct ns_store *s, const char *dir)
{
	atomic_store(&s->space_free, UINT64_MAX);
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return s->dir_fd < 0 ? -errno : 0;
}

void space_close(struct ns_store *s)
{
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	s->dir_fd = -1;
}

static uint64_t free_bytes(struct ns_store *s)
{
	uint64_t t = now_ns(), last = atomic_load(&s->space_sampled);
	struct statvfs v;

	if (t - last < SAMPLE_NS || !atomic_compare_exchange_strong(&s->space_sampled, &last, t))
		return atomic_load(&s->space_free);
	if (fstatvfs(s->dir_fd, &v) == 0)
		atomic_store(&s->space_free, (uint64_t)v.f_bavail * v.f_frsize);
	return atomic_load(&s->space_free);
}

int space_for_growth(struct ns_store *s)
{
	int failed = atomic_load(&s->failed);

	if (failed)
		return failed;
	if (s->reserve && free_bytes(s) < s->reserve) {
		if (!atomic_exchange(&s->space_low, true))
			db_say(s,
			       "less than %llu MiB free on the store's disk: refusing new names "
			       "and inline data (NOSPC) until there is room",
			       (unsigned long long)(s->reserve >> 20));
		return -ENOSPC;
	}
	if (atomic_exchange(&s->space_low, false))
		db_say(s, "room on the store's disk again: new names and inline data accepted");
	return 0;
}

int space_write_failed(struct ns_store *s, const char *err)
{
	bool nospc = strstr(err, "No space left") || strstr(err, "NoSpace");
	int none = 0;

	if (atomic_compare_exchange_strong(&s->failed, &none, -EIO))
		db_say(s,
		       "RocksDB refused a write (%s): the store takes no more changes until "
		       "ganesha.nfsd is restarted%s",
		       err, nospc ? " with room on its disk" : "");
	return nospc ? -ENOSPC : -EIO;
}

int space_failed(struct ns_store *s)
{
	return atomic_load(&s->failed);
}

bool ns_failed(struct ns_store *s)
{
	return space_failed(s) != 0;
}
