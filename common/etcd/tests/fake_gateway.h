/* A tiny HTTP server in the test's process (loopback), standing in for
 * etcd's gateway: every request gets the same answer, or one a test's
 * respond function makes from the request.  Shared by the units that
 * run the client against it. */
#ifndef PANDO_ETCD_FAKE_GATEWAY_H
#define PANDO_ETCD_FAKE_GATEWAY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct fake;
/* Writes the whole answer (status line, headers, body) to out[cap]. */
typedef void (*fake_respond)(struct fake *f, const char *request, char *out, size_t cap);

struct fake {
	int fd;
	int port;
	const char *answer;   /* sent to every request */
	fake_respond respond; /* or this makes it, under lock */
	int dribble;          /* one byte at a time */
	int hold_ms;          /* keep the connection open this long after */
	int silent;           /* read, answer nothing, hold */
	int keep;             /* serve the next request on the same connection */
	void *arg;            /* respond's, under lock */
	pthread_mutex_t lock; /* the fields below, and respond's state */
	int conns, requests;
	char request[8192]; /* the last request seen, head and body */
	pthread_t thread;
};

void fake_start(struct fake *f);
void fake_stop(struct fake *f);
/* The last request, and how many connections and requests came. */
void fake_seen(struct fake *f, char *request, size_t cap, int *conns, int *requests);
/* A port nobody listens on: bound, then closed. */
int closed_port(void);
/* An answer of status with body, framed by its length. */
void fake_reply(char *out, size_t cap, const char *status, const char *body);

void sleep_ms(int ms);
int64_t now_ms(void);

#endif
