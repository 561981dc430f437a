#include "etcd_fixture.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd_client.h"

int etcd_fixture_available(void)
{
	return access(ETCD_FIXTURE_BIN, X_OK) == 0;
}

/* A port free on loopback now (bound, then let go); 0 when none. */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int port = 0;

	if (fd < 0)
		return 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void etcd_exec(const struct etcd_fixture *e, int peer_port)
{
	char peer[64], cluster[80], data[96], log[96];

	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", peer_port);
	snprintf(cluster, sizeof(cluster), "t=%s", peer);
	snprintf(data, sizeof(data), "%s/data", e->dir);
	snprintf(log, sizeof(log), "%s/etcd.log", e->dir);
	/* Gone with the test, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (!freopen(log, "a", stdout) || !freopen(log, "a", stderr))
		_exit(127);
	execl(ETCD_FIXTURE_BIN, ETCD_FIXTURE_BIN, "--name", "t", "--data-dir", data,
	      "--listen-client-urls", e->url, "--advertise-client-urls", e->url,
	      "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
	      "--initial-cluster", cluster, (char *)NULL);
	_exit(127);
}

/* Until a read gets an answer (the key missing is one). */
static int wait_ready(const struct etcd_fixture *e)
{
	struct etcd_options o = { .endpoints = e->url, .timeout_ms = 1000 };
	struct timespec pause = { 0, 100 * 1000000L };
	struct etcd_client *c;
	int rc = -EHOSTUNREACH;

	if (etcd_client_new(&o, &c) != 0)
		return -1;
	for (int i = 0; i < 200 && rc != 0 && rc != -ENOENT; i++) {
		char *v = NULL;

		rc = etcd_get(c, "/ready", &v, NULL, NULL);
		free(v);
		if (rc != 0 && rc != -ENOENT)
			nanosleep(&pause, NULL);
	}
	etcd_client_free(c);
	return rc == 0 || rc == -ENOENT ? 0 : -1;
}

int etcd_fixture_start(struct etcd_fixture *e)
{
	int port = free_port(), peer_port = free_port();

	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "/tmp/pando-mds-etcd.XXXXXX");
	if (!port || !peer_port || !mkdtemp(e->dir)) {
		fprintf(stderr, "etcd_fixture: no directory or port\n");
		return -1;
	}
	snprintf(e->url, sizeof(e->url), "http://127.0.0.1:%d", port);
	e->pid = fork();
	if (e->pid == 0)
		etcd_exec(e, peer_port);
	if (e->pid < 0 || wait_ready(e) != 0) {
		fprintf(stderr, "etcd_fixture: etcd did not answer; its log: %s/etcd.log\n",
			e->dir);
		etcd_fixture_stop(e, 1);
		return -1;
	}
	return 0;
}

int etcd_fixture_stop(struct etcd_fixture *e, int keep)
{
	char cmd[128];
	int status = 0, rc = 0;

	if (e->pid > 0) {
		kill(e->pid, SIGTERM);
		if (waitpid(e->pid, &status, 0) != e->pid)
			rc = -1;
		else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
			 !(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM))
			rc = -1;
		e->pid = 0;
	}
	if (rc)
		fprintf(stderr, "etcd_fixture: etcd did not stop cleanly (status 0x%x)\n", status);
	if (!keep && !rc && e->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
		if (system(cmd) != 0)
			rc = -1;
	} else if (e->dir[0]) {
		fprintf(stderr, "etcd_fixture: kept %s\n", e->dir);
	}
	return rc;
}
