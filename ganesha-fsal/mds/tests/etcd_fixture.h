/* A real etcd (/usr/bin/etcd, v3.4) for a test: one member on loopback
 * ports the kernel picks, plain http, its data in a temporary directory
 * of its own; stopped by its pid.  The engine's etcd clients and the
 * test's own reach it at url. */
#ifndef PANDO_ETCD_FIXTURE_H
#define PANDO_ETCD_FIXTURE_H

#include <sys/types.h>

#define ETCD_FIXTURE_BIN "/usr/bin/etcd"

struct etcd_fixture {
	char dir[64];
	char url[64]; /* http://127.0.0.1:PORT */
	pid_t pid;
};

/* Whether the etcd binary is there to run (a test skips without it). */
int etcd_fixture_available(void);
/* Starts etcd and waits until it answers (up to 20 s); 0, or -1 with the
 * reason on stderr, and then nothing is left running. */
int etcd_fixture_start(struct etcd_fixture *e);
/* Stops it with SIGTERM and waits: 0 when it ended as asked (exit 0, or
 * killed by that SIGTERM, which etcd raises again once it has shut down);
 * removes the directory unless keep. */
int etcd_fixture_stop(struct etcd_fixture *e, int keep);

#endif
