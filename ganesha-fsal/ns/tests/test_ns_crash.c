/* kill -9 in the middle of a create/write/rename/unlink storm: after the
 * restart every acknowledged operation is there, and the store is
 * consistent.  Several rounds on the same store.
 *
 * The storm runs in a child process (two threads, durable store) that
 * reports each operation on a pipe once it returns; the parent collects
 * the reports, kills the child at a random moment, and has another child
 * reopen the store and verify.  The parent itself never opens RocksDB, so
 * every fork starts from a process without RocksDB's threads. */
#include "ns_test.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 5
#define THREADS 2
#define MAX_OPS 20000
#define DIRS 4
#define KILL_AFTER 400 /* acknowledgements, plus a random bit */

enum { ACK_CREATE = 1, ACK_WRITE = 2, ACK_RENAME = 4, ACK_UNLINK = 8 };

struct ack {
	uint8_t what;
	uint8_t thread;
	uint32_t i;
};

static char path[128];
static uint8_t acked[ROUNDS][THREADS][MAX_OPS];

static void name_of(char *buf, size_t len, int round, int t, uint32_t i, bool renamed)
{
	snprintf(buf, len, "%sr%dt%di%u", renamed ? "moved-" : "", round, t, i);
}

/* Where index i lives, before and after its rename. */
static int home_dir(uint32_t i)
{
	return i % DIRS;
}

static int moved_dir(uint32_t i)
{
	return (i + 1) % DIRS;
}

/* ---- the storm (child) ----------------------------------------------- */

struct storm {
	struct ns_store *s;
	uint64_t dirs[DIRS];
	int round;
	int thread;
	int fd;
};

static int report(const struct storm *st, uint8_t what, uint32_t i)
{
	struct ack a = { .what = what, .thread = (uint8_t)st->thread, .i = i };

	return write(st->fd, &a, sizeof(a)) == sizeof(a) ? 0 : -EIO;
}

/* Renames or removes what the previous iteration made. */
static int follow_up(const struct storm *st, uint32_t j)
{
	char from[64], to[64];
	int rc = 0;

	name_of(from, sizeof(from), st->round, st->thread, j, false);
	if (j % 3 == 1) {
		name_of(to, sizeof(to), st->round, st->thread, j, true);
		rc = ns_rename(st->s, st->dirs[home_dir(j)], from, st->dirs[moved_dir(j)], to);
		return rc ? rc : report(st, ACK_RENAME, j);
	}
	if (j % 5 == 3) {
		rc = ns_unlink(st->s, st->dirs[home_dir(j)], from);
		return rc ? rc : report(st, ACK_UNLINK, j);
	}
	return 0;
}

static void *storm_thread(void *arg)
{
	const struct storm *st = arg;
	struct ns_attr a;
	char name[64];

	for (uint32_t i = 0; i < MAX_OPS; i++) {
		name_of(name, sizeof(name), st->round, st->thread, i, false);
		if (ns_create(st->s, st->dirs[home_dir(i)], name, TEST_NEW, NS_GUARDED, NULL, &a,
			      NULL) ||
		    report(st, ACK_CREATE, i))
			break;
		if (ns_write(st->s, a.ino, 0, name, strlen(name), true, NULL, NULL) ||
		    report(st, ACK_WRITE, i))
			break;
		if (i && follow_up(st, i - 1))
			break;
	}
	return NULL;
}

static void storm_child(int round, int fd)
{
	struct storm st[THREADS];
	pthread_t th[THREADS];
	struct ns_store *s;
	char name[8];

	if (round == 0 && ns_format(path, NULL))
		_exit(2);
	if (ns_open(path, NULL, &s))
		_exit(2);
	for (int t = 0; t < THREADS; t++) {
		st[t] = (struct storm){ .s = s, .round = round, .thread = t, .fd = fd };
		for (int d = 0; d < DIRS; d++) {
			snprintf(name, sizeof(name), "d%d", d);
			if (round == 0 && t == 0 &&
			    ns_mkdir(s, NS_ROOT_INO, name, TEST_NEWDIR, NULL))
				_exit(2);
			st[t].dirs[d] = ino_of(s, NS_ROOT_INO, name);
		}
	}
	for (int t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, storm_thread, &st[t]);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	_exit(3); /* the storm should have been killed first */
}

/* ---- the parent ------------------------------------------------------ */

static int record(int round, const struct ack *a)
{
	if (a->thread >= THREADS || a->i >= MAX_OPS)
		return -1;
	acked[round][a->thread][a->i] |= a->what;
	return 0;
}

/* Collects acknowledgements, kills the storm after enough of them, and
 * returns how many it saw. */
static int run_storm(int round)
{
	int fds[2], status = 0, n = 0, kill_at = KILL_AFTER + rand() % KILL_AFTER;
	struct ack a;
	pid_t pid;

	CHECK_EQ(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		storm_child(round, fds[1]);
	}
	close(fds[1]);
	while (read(fds[0], &a, sizeof(a)) == sizeof(a)) {
		CHECK_EQ(record(round, &a), 0);
		if (++n == kill_at)
			kill(pid, SIGKILL);
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	return n;
}

/* ---- verification (another child) ------------------------------------ */

static void verify_one(struct ns_store *s, const uint64_t *dirs, int round, int t, uint32_t i)
{
	uint8_t what = acked[round][t][i];
	char name[64], moved[64], buf[64];
	uint64_t at_home, at_moved;
	size_t n = 0;
	bool eof;

	name_of(name, sizeof(name), round, t, i, false);
	name_of(moved, sizeof(moved), round, t, i, true);
	at_home = ino_of(s, dirs[home_dir(i)], name);
	at_moved = ino_of(s, dirs[moved_dir(i)], moved);
	if (what & ACK_RENAME) {
		CHECK(at_home == 0 && at_moved != 0);
	} else if (what & ACK_UNLINK) {
		CHECK(at_home == 0 && at_moved == 0);
	} else if (i % 3 == 1 || i % 5 == 3) {
		/* Maybe done, maybe not: it was not acknowledged. */
		CHECK((at_home == 0) + (at_moved == 0) >= 1);
	} else {
		CHECK(at_home != 0);
	}
	if ((what & ACK_WRITE) && (at_home || at_moved)) {
		CHECK_EQ(ns_read(s, at_home ? at_home : at_moved, 0, sizeof(buf), buf, &n, &eof),
			 0);
		CHECK(n == strlen(name) && memcmp(buf, name, n) == 0);
	}
}

static void verify_child(int upto)
{
	uint64_t dirs[DIRS];
	struct ns_store *s;
	char name[8];

	if (ns_open(path, NULL, &s))
		_exit(100);
	for (int d = 0; d < DIRS; d++) {
		snprintf(name, sizeof(name), "d%d", d);
		dirs[d] = ino_of(s, NS_ROOT_INO, name);
		CHECK(dirs[d] != 0);
	}
	for (int r = 0; r <= upto; r++)
		for (int t = 0; t < THREADS; t++)
			for (uint32_t i = 0; i < MAX_OPS && (acked[r][t][i] & ACK_CREATE); i++)
				verify_one(s, dirs, r, t, i);
	check_clean(s);
	ns_close(s);
	_exit(check_failures ? 1 : 0);
}

static void verify(int upto)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		verify_child(upto);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	test_dir_init("crash");
	test_path(path, sizeof(path));
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int r = 0; r < ROUNDS; r++) {
		int n = run_storm(r);

		printf("round %d: killed after %d acknowledged operations\n", r, n);
		CHECK(n >= KILL_AFTER);
		verify(r);
	}
	test_dir_done();
	CHECK_DONE();
}
