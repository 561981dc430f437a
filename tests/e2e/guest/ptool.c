/* ptool: the system calls a kernel-client scenario needs and busybox does
 * not offer (no flock applet, no `ls -f`, and its mv checks file types
 * itself instead of letting rename(2) answer).  Built static by the
 * harness (pando_testing.vm.guest_tool) and put in the guest as /bin/ptool.
 *
 *   ptool lock [-s|-x] [-n] [-k posix|ofd|flock] [-r START:LEN] [-t SECS] FILE [CMD [ARG...]]
 *   ptool lock -g [-s|-x] [-k posix|ofd] [-r START:LEN] FILE
 *   ptool rename OLD NEW     rename(2), nothing else
 *   ptool ls DIR             every name readdir(3) returns, unsorted, `.` and `..` too (ls -f)
 *   ptool as UID GID CMD [ARG...]   run CMD with these ids and no supplementary
 *                            groups (busybox's setpriv cannot change ids)
 *   ptool churn N FILE       N times: open FILE read-write, lock it whole,
 *                            unlock, close (each unlock ends a lock
 *                            stateid: NFSv4.1 clients free it with
 *                            FREE_STATEID while the CLOSE is on its way)
 *   ptool io [-r] [-d] FILE OP...   system calls on ONE descriptor of FILE
 *                            (opened O_RDWR|O_CREAT; -r O_RDONLY, -d with
 *                            O_DIRECT), in order, one line each:
 *       w:OFF[:LEN]  pwrite LEN (1) bytes at OFF, each byte (OFF + i) & 0xff
 *       r:OFF:LEN    pread, printed in hex ("-" past the end)
 *       t:LEN        ftruncate
 *       s            fstat: "s SIZE"
 *       f            fsync
 *       D:OFF / H:OFF  lseek SEEK_DATA / SEEK_HOLE: "D OFF RESULT"
 *       a:OFF:LEN    fallocate(0) (NFSv4.2 ALLOCATE)
 *       p:OFF:LEN    fallocate(PUNCH_HOLE|KEEP_SIZE) (NFSv4.2 DEALLOCATE)
 *     a failed call prints "OP: strerror" and ends it with exit 1
 *
 * lock: opens FILE (created if missing; read-only for -s, read-write for -x),
 * takes a shared (-s) or exclusive (-x, the default) lock on START:LEN
 * (default 0:0, the whole file; LEN 0 means "to the end") and, with CMD,
 * runs it while holding the lock (the lock goes when CMD exits); without
 * CMD it exits at once, which releases the lock.
 *   -k posix  fcntl F_SETLK/F_SETLKW (default), the lock of the process
 *   -k ofd    fcntl F_OFD_SETLK/F_OFD_SETLKW, the lock of the open file
 *   -k flock  flock(2) (NFS clients turn it into a whole-file POSIX lock)
 *   -n        do not wait: a conflicting lock is an error (exit 1)
 *   -t SECS   wait at most SECS seconds (exit 2 when they pass)
 *   -g        F_GETLK / F_OFD_GETLK: print "free" or the conflicting lock
 *             ("conflict W 0:0 pid 123"), exit 0 either way
 * On success it prints one line to stdout before running CMD:
 *   locked posix W 0:0 waited 0.000
 * Exit status: 0, or CMD's; 1 conflict with -n, or a failed rename (the
 * error is printed, strerror's words); 2 timed out; 3 usage or another error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: ptool lock [-g] [-s|-x] [-n] [-k posix|ofd|flock] "
		"[-r START:LEN] [-t SECS] FILE [CMD [ARG...]]\n"
		"       ptool rename OLD NEW\n"
		"       ptool ls DIR\n"
		"       ptool as UID GID CMD [ARG...]\n"
		"       ptool churn N FILE\n"
		"       ptool io [-r] [-d] FILE w:OFF[:LEN]|r:OFF:LEN|t:LEN|s|f|D:OFF|H:OFF|a:OFF:LEN|p:OFF:LEN...\n");
	return 3;
}

static int do_churn(int argc, char **argv)
{
	struct flock fl = { .l_whence = SEEK_SET };
	long n;

	if (argc != 3 || (n = strtol(argv[1], NULL, 10)) <= 0)
		return usage();
	for (long i = 0; i < n; i++) {
		int fd = open(argv[2], O_RDWR | O_CREAT, 0644);

		if (fd < 0) {
			fprintf(stderr, "churn %ld: open %s: %s\n", i, argv[2], strerror(errno));
			return 1;
		}
		fl.l_type = F_WRLCK;
		if (fcntl(fd, F_SETLKW, &fl) < 0) {
			fprintf(stderr, "churn %ld: lock %s: %s\n", i, argv[2], strerror(errno));
			return 1;
		}
		fl.l_type = F_UNLCK;
		if (fcntl(fd, F_SETLK, &fl) < 0) {
			fprintf(stderr, "churn %ld: unlock %s: %s\n", i, argv[2], strerror(errno));
			return 1;
		}
		if (close(fd) < 0) {
			fprintf(stderr, "churn %ld: close %s: %s\n", i, argv[2], strerror(errno));
			return 1;
		}
	}
	return 0;
}

static int do_rename(int argc, char **argv)
{
	if (argc != 3)
		return usage();
	if (rename(argv[1], argv[2]) < 0) {
		fprintf(stderr, "rename %s %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	return 0;
}

static int do_ls(int argc, char **argv)
{
	if (argc != 2)
		return usage();
	DIR *d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "opendir %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		puts(e->d_name);
		errno = 0;
	}
	if (errno) {
		fprintf(stderr, "readdir %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	closedir(d);
	return 0;
}

static int do_as(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	uid_t uid = (uid_t)strtoul(argv[1], NULL, 10);
	gid_t gid = (gid_t)strtoul(argv[2], NULL, 10);
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		fprintf(stderr, "ptool as %s %s: %s\n", argv[1], argv[2], strerror(errno));
		return 3;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "ptool as: exec %s: %s\n", argv[3], strerror(errno));
	return 127;
}

/* The NFSv4.2 space operations: SEEK, ALLOCATE, DEALLOCATE. */
static ssize_t space_op(int fd, char kind, unsigned long long off, unsigned long long len)
{
	off_t at;

	switch (kind) {
	case 'D':
	case 'H':
		at = lseek(fd, (off_t)off, kind == 'D' ? SEEK_DATA : SEEK_HOLE);
		if (at >= 0)
			printf("%c %llu %lld\n", kind, off, (long long)at);
		return at < 0 ? -1 : 0;
	case 'a':
	case 'p':
		if (fallocate(fd, kind == 'a' ? 0 : FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)off, (off_t)len) < 0)
			return -1;
		printf("%c %llu %llu\n", kind, off, len);
		return 0;
	}
	return -1;
}

/* One step of `ptool io`; 0, 1 for a failed call, 3 for a malformed op. */
static int io_op(int fd, const char *op)
{
	unsigned long long off = 0, len = 1;
	static unsigned char buf[4096] __attribute__((aligned(4096))); /* O_DIRECT */
	struct stat st;
	ssize_t r = 0;
	char kind = op[0];

	if (!kind || (kind == 'w' && sscanf(op, "w:%llu:%llu", &off, &len) < 1) ||
	    (kind == 'r' && sscanf(op, "r:%llu:%llu", &off, &len) != 2) ||
	    (kind == 't' && sscanf(op, "t:%llu", &off) != 1) ||
	    (strchr("DH", kind) && sscanf(op + 1, ":%llu", &off) != 1) ||
	    (strchr("ap", kind) && sscanf(op + 1, ":%llu:%llu", &off, &len) != 2) ||
	    !strchr("wrtsfDHap", kind) || (strchr("wr", kind) && len > sizeof(buf)))
		return usage();
	switch (kind) {
	case 'w':
		for (unsigned long long i = 0; i < len; i++)
			buf[i] = (unsigned char)(off + i);
		r = pwrite(fd, buf, len, (off_t)off);
		if (r >= 0)
			printf("w %llu %zd\n", off, r);
		break;
	case 'r':
		r = pread(fd, buf, len, (off_t)off);
		if (r >= 0) {
			printf("r %llu ", off);
			for (ssize_t i = 0; i < r; i++)
				printf("%02x", buf[i]);
			printf("%s\n", r ? "" : "-");
		}
		break;
	case 't':
		r = ftruncate(fd, (off_t)off);
		if (!r)
			printf("t %llu\n", off);
		break;
	case 's':
		r = fstat(fd, &st);
		if (!r)
			printf("s %lld\n", (long long)st.st_size);
		break;
	case 'f':
		r = fsync(fd);
		if (!r)
			printf("f\n");
		break;
	default:
		r = space_op(fd, kind, off, len);
		break;
	}
	if (r < 0) {
		printf("%s: %s\n", op, strerror(errno));
		return 1;
	}
	return 0;
}

static int do_io(int argc, char **argv)
{
	int flags = O_RDWR | O_CREAT, fd, rc = 0, opt;

	while ((opt = getopt(argc, argv, "+rd")) != -1) {
		if (opt == 'r')
			flags = (flags & ~(O_RDWR | O_CREAT)) | O_RDONLY;
		else if (opt == 'd')
			flags |= O_DIRECT;
		else
			return usage();
	}
	if (argc - optind < 2)
		return usage();
	fd = open(argv[optind], flags, 0644);
	if (fd < 0) {
		printf("open %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	for (int i = optind + 1; !rc && i < argc; i++) {
		rc = io_op(fd, argv[i]);
		fflush(stdout);
	}
	if (close(fd) < 0 && !rc) {
		printf("close: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

/* One `ptool lock` request, from its command line. */
struct lock_req {
	int shared, nowait, getlk, timeout;
	int is_flock, is_ofd;
	const char *kind, *path;
	long long start, len;
	char range[64]; /* "START:LEN", for messages */
};

/* Fills REQ from the options; 0, or usage()'s status. */
static int lock_parse(int argc, char **argv, struct lock_req *req)
{
	int opt;

	*req = (struct lock_req){ .kind = "posix" };
	while ((opt = getopt(argc, argv, "+sxngk:r:t:")) != -1) {
		switch (opt) {
		case 's':
			req->shared = 1;
			break;
		case 'x':
			req->shared = 0;
			break;
		case 'n':
			req->nowait = 1;
			break;
		case 'g':
			req->getlk = 1;
			break;
		case 'k':
			req->kind = optarg;
			break;
		case 'r':
			if (sscanf(optarg, "%lld:%lld", &req->start, &req->len) != 2)
				return usage();
			break;
		case 't':
			req->timeout = atoi(optarg);
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	req->path = argv[optind];
	req->is_flock = !strcmp(req->kind, "flock");
	req->is_ofd = !strcmp(req->kind, "ofd");
	if (!req->is_flock && !req->is_ofd && strcmp(req->kind, "posix"))
		return usage();
	snprintf(req->range, sizeof(req->range), "%lld:%lld", req->start, req->len);
	return 0;
}

/* -g: print "free" or the lock that conflicts with FL. */
static int lock_query(int fd, const struct lock_req *req, struct flock *fl)
{
	if (req->is_flock)
		return usage();
	if (fcntl(fd, req->is_ofd ? F_OFD_GETLK : F_GETLK, fl) < 0) {
		fprintf(stderr, "ptool lock: F_GETLK %s: %s\n", req->path, strerror(errno));
		return 3;
	}
	if (fl->l_type == F_UNLCK)
		printf("free\n");
	else
		printf("conflict %s %lld:%lld pid %d\n", fl->l_type == F_RDLCK ? "R" : "W",
		       (long long)fl->l_start, (long long)fl->l_len, (int)fl->l_pid);
	return 0;
}

/* Takes the lock, waiting (at most -t SECS) unless -n; 0, or the exit status. */
static int lock_take(int fd, const struct lock_req *req, struct flock *fl)
{
	const char *mode = req->shared ? "R" : "W";
	int nowait = req->nowait, rc, err;

	if (req->timeout > 0) {
		struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
		sigaction(SIGALRM, &sa, NULL);
		alarm(req->timeout);
	}
	double t0 = now();
	if (req->is_flock)
		rc = flock(fd, (req->shared ? LOCK_SH : LOCK_EX) | (nowait ? LOCK_NB : 0));
	else
		rc = fcntl(fd,
			   req->is_ofd ? (nowait ? F_OFD_SETLK : F_OFD_SETLKW)
				       : (nowait ? F_SETLK : F_SETLKW),
			   fl);
	err = errno;
	alarm(0);
	if (rc < 0 && err == EINTR) {
		fprintf(stderr, "ptool lock: %s %s %s %s: still waiting after %d s\n", req->kind,
			mode, req->range, req->path, req->timeout);
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "ptool lock: %s %s %s %s: %s\n", req->kind, mode, req->range,
			req->path, strerror(err));
		return (err == EAGAIN || err == EACCES || err == EWOULDBLOCK) ? 1 : 3;
	}
	printf("locked %s %s %s waited %.3f\n", req->kind, mode, req->range, now() - t0);
	fflush(stdout);
	return 0;
}

/* Runs ARGV while this process holds the lock on FD; CMD's exit status. */
static int run_holding(int fd, char **argv)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("ptool lock: fork");
		return 3;
	}
	if (pid == 0) {
		close(fd); /* the child must not hold an OFD or flock reference */
		execvp(argv[0], argv);
		fprintf(stderr, "ptool lock: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int do_lock(int argc, char **argv)
{
	struct lock_req req;
	int rc = lock_parse(argc, argv, &req);
	if (rc)
		return rc;

	int fd = open(req.path, (req.shared ? O_RDONLY : O_RDWR) | O_CREAT, 0644);
	if (fd < 0) {
		fprintf(stderr, "ptool lock: open %s: %s\n", req.path, strerror(errno));
		return 3;
	}
	struct flock fl = { .l_type = req.shared ? F_RDLCK : F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = req.start,
			    .l_len = req.len };
	if (req.getlk)
		return lock_query(fd, &req, &fl);
	rc = lock_take(fd, &req, &fl);
	if (rc || optind + 1 >= argc)
		return rc;
	return run_holding(fd, argv + optind + 1);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "lock"))
		return do_lock(argc - 1, argv + 1);
	if (!strcmp(argv[1], "rename"))
		return do_rename(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ls"))
		return do_ls(argc - 1, argv + 1);
	if (!strcmp(argv[1], "as"))
		return do_as(argc - 1, argv + 1);
	if (!strcmp(argv[1], "churn"))
		return do_churn(argc - 1, argv + 1);
	if (!strcmp(argv[1], "io"))
		return do_io(argc - 1, argv + 1);
	return usage();
}
