/* libpando_syncfault.so: LD_PRELOADed into pando-osd by the pytest suites
 * (pando_testing/syncfault.py), never built into the target itself.  It
 * stands between the target and the disk's durability for the files under
 * objects/ (object data and extent checksums), with $PANDO_SYNCFAULT_DIR:
 *
 * - a power cut: every fsync or fdatasync that succeeds copies the file to
 *   DIR/<its name>, what the disk is known to hold, and every fsync of a
 *   shard directory writes the names it holds to DIR/dir.<shard>, the
 *   entries the disk is known to hold; after a kill -9 the test puts the
 *   copies back and removes every file never synced or whose name its
 *   directory's last sync did not hold, as a power cut would (a kill -9
 *   alone keeps the page cache);
 * - a failed sync: while DIR/fail exists, the next fsync or fdatasync of
 *   such a file fails with EIO, removes it and copies nothing, as Linux
 *   reports a writeback error once and drops the pages it could not write.
 *
 * Without the variable every call goes straight to libc. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*sync_fn)(int fd);

static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;

/* The path of fd when it is under objects/ (an object file or a shard
 * directory); else false. */
static bool object_path(int fd, char *path, size_t cap)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, cap - 1);
	if (n < 0)
		return false;
	path[n] = 0;
	return strstr(path, "/objects/") != NULL;
}

static int copy_fd(int from, int to)
{
	char buf[65536];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(from, buf, sizeof(buf), off)) > 0) {
		if (write(to, buf, (size_t)n) != n)
			return -1;
		off += n;
	}
	return n < 0 ? -1 : 0;
}

/* The names in directory fd, one per line. */
static int list_fd(int from, int to)
{
	int dup_fd = dup(from);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	int rc = 0;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -1;
	}
	rewinddir(d);
	while (!rc && (e = readdir(d)))
		if (e->d_name[0] != '.' && dprintf(to, "%s\n", e->d_name) < 0)
			rc = -1;
	closedir(d);
	return rc;
}

/* DIR/<name> becomes what fd holds now (or, for a shard directory,
 * DIR/dir.<name> its names), whole or not at all. */
static void keep_copy(const char *dir, int fd, const char *path, bool is_dir)
{
	const char *name = strrchr(path, '/') + 1;
	const char *prefix = is_dir ? "dir." : "";
	char tmp[PATH_MAX], dst[PATH_MAX];
	int out;

	snprintf(tmp, sizeof(tmp), "%s/.%s%s", dir, prefix, name);
	snprintf(dst, sizeof(dst), "%s/%s%s", dir, prefix, name);
	pthread_mutex_lock(&copy_lock);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out >= 0 && (is_dir ? list_fd(fd, out) : copy_fd(fd, out)) == 0 && close(out) == 0)
		rename(tmp, dst);
	else if (out >= 0)
		close(out);
	pthread_mutex_unlock(&copy_lock);
}

static int faulty_sync(int fd, const char *libc_name)
{
	sync_fn real = (sync_fn)dlsym(RTLD_NEXT, libc_name);
	const char *dir = getenv("PANDO_SYNCFAULT_DIR");
	char path[PATH_MAX], fail[PATH_MAX];
	struct stat st;
	int rc;

	if (!dir || fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) ||
	    !object_path(fd, path, sizeof(path)))
		return real(fd);
	snprintf(fail, sizeof(fail), "%s/fail", dir);
	if (S_ISREG(st.st_mode) && unlink(fail) == 0) {
		errno = EIO;
		return -1;
	}
	rc = real(fd);
	if (rc == 0)
		keep_copy(dir, fd, path, S_ISDIR(st.st_mode));
	return rc;
}

int fsync(int fd)
{
	return faulty_sync(fd, "fsync");
}

int fdatasync(int fd)
{
	return faulty_sync(fd, "fdatasync");
}
