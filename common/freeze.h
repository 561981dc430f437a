/* Freezing a process in a test as a hung peer would be: SIGSTOP, then
 * wait until every thread of it has stopped.  kill() only queues the
 * stop; on a busy machine a thread other than the one woken to take it
 * can still answer a request for tens of milliseconds, and a test that
 * counts on silence would then see an answer. */
#ifndef PANDO_FREEZE_H
#define PANDO_FREEZE_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

/* Whether the thread's state in /proc/PID/task/TID/stat is stopped. */
static inline bool freeze_thread_stopped(pid_t pid, const char *tid)
{
	char path[320], line[512];
	const char *paren;
	FILE *fp;
	bool stopped = false;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	fp = fopen(path, "r");
	if (!fp)
		return true; /* a thread that exited answers nothing either */
	if (fgets(line, sizeof(line), fp) && (paren = strrchr(line, ')')) && paren[1] == ' ')
		stopped = paren[2] == 'T' || paren[2] == 't';
	fclose(fp);
	return stopped;
}

static inline bool freeze_all_stopped(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	bool all = true;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	while (all && (e = readdir(d)))
		if (e->d_name[0] != '.')
			all = freeze_thread_stopped(pid, e->d_name);
	closedir(d);
	return all;
}

/* SIGSTOP, and 0 once every thread stopped; -errno from kill, or
 * -ETIMEDOUT after five seconds. */
static inline int freeze_process(pid_t pid)
{
	const struct timespec tick = { .tv_nsec = 5 * 1000 * 1000 };

	if (kill(pid, SIGSTOP))
		return -errno;
	for (int i = 0; i < 1000; i++) {
		if (freeze_all_stopped(pid))
			return 0;
		nanosleep(&tick, NULL);
	}
	return -ETIMEDOUT;
}

#endif
