/* Service_Address_Command (service_address.h).  posix_spawn, not fork:
 * the manager is threaded, and the child must run nothing of it. */
#include "service_address.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define POLL_MS 20

static int wait_bounded(pid_t pid, int timeout_ms, int *status)
{
	struct timespec step = { 0, POLL_MS * 1000000L };
	int waited = 0;
	pid_t r;

	while ((r = waitpid(pid, status, WNOHANG)) == 0 && waited < timeout_ms) {
		nanosleep(&step, NULL);
		waited += POLL_MS;
	}
	if (r == pid)
		return 0;
	if (r < 0)
		return -errno;
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return -ETIMEDOUT;
}

int pando_service_address(const char *command, const char *verb, int timeout_ms, char *why,
			  size_t why_len)
{
	char line[1200];
	char *argv[] = { "/bin/sh", "-c", line, NULL };
	int n = snprintf(line, sizeof(line), "%s %s", command, verb);
	int status = 0, rc;
	pid_t pid;

	if (n < 0 || (size_t)n >= sizeof(line)) {
		snprintf(why, why_len, "the command is too long");
		return -ENAMETOOLONG;
	}
	rc = -posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	if (!rc)
		rc = wait_bounded(pid, timeout_ms, &status);
	if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		rc = -EIO;
		if (WIFEXITED(status))
			snprintf(why, why_len, "exit status %d", WEXITSTATUS(status));
		else
			snprintf(why, why_len, "killed by signal %d", WTERMSIG(status));
	} else if (rc == -ETIMEDOUT) {
		snprintf(why, why_len, "still running after %d ms: killed", timeout_ms);
	} else if (rc) {
		snprintf(why, why_len, "%s", strerror(-rc));
	}
	return rc;
}
