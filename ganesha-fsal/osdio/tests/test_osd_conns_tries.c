/* How many tries a call makes (osd_conns_call, osd_conns_call_tries).
 * The policy retries only a call whose connection was lost under it:
 * against an OSD that drops every connection mid-call, the normal call
 * goes through each pooled connection and then a fresh one, while a
 * caller that asked for N tries (pando-fsck: one, as it reports an OSD
 * that does not answer) gets exactly N.  A pando-osd that is down,
 * connections open or not, refuses the reconnect: one try either way,
 * then the back-off answers without one. */
#include "check.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "osd_fixture.h"

#define CONNS 3

static int counted_null(struct osd_ctl_client *c, void *arg)
{
	int *tries = arg;

	(*tries)++;
	return osd_ctl_null(c);
}

/* Results the pool recorded for its first OSD: one per try. */
static uint64_t recorded(struct osd_conns *p)
{
	struct osd_health h;

	osd_conns_health(p, 0, &h);
	return h.calls;
}

/* As tries: osd_conns_call itself. */
#define POLICY (-1)

/* A NULL call on OSD 1 with at most `tries` tries: checks how many times
 * fn ran and how many results the pool recorded. */
static int call_counted(struct osd_conns *p, int tries, int runs, uint64_t results)
{
	uint64_t before = recorded(p);
	int n = 0;
	int rc = tries == POLICY ? osd_conns_call(p, 1, counted_null, &n)
				 : osd_conns_call_tries(p, 1, tries, counted_null, &n);

	CHECK_EQ(n, runs);
	CHECK_EQ(recorded(p) - before, results);
	return rc;
}

/* An OSD that dies on every call: it accepts, reads the call and closes
 * without an answer, so each try loses its connection mid-call. */
struct dropper {
	int listen_fd;
	struct cluster_map_osd osd;
	atomic_int dropped;
	pthread_t thread;
};

static void *drop_calls(void *arg)
{
	struct dropper *d = arg;
	char buf[64];
	int fd;

	while ((fd = accept(d->listen_fd, NULL, NULL)) >= 0) {
		if (read(fd, buf, sizeof(buf)) > 0)
			d->dropped++;
		close(fd);
	}
	return NULL;
}

static int dropper_start(struct dropper *d)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*d = (struct dropper){ .osd = { .id = 1 } };
	d->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (d->listen_fd < 0 || bind(d->listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(d->listen_fd, 16) || getsockname(d->listen_fd, (struct sockaddr *)&a, &len))
		return -errno;
	snprintf(d->osd.ctl, sizeof(d->osd.ctl), "127.0.0.1:%u", ntohs(a.sin_port));
	return -pthread_create(&d->thread, NULL, drop_calls, d);
}

static void dropper_stop(struct dropper *d)
{
	shutdown(d->listen_fd, SHUT_RDWR); /* wakes the accept */
	pthread_join(d->thread, NULL);
	close(d->listen_fd);
}

static void test_tries_when_calls_lose_their_connection(void)
{
	struct osd_conns_options opt = { .conns_per_osd = CONNS, .timeout_ms = 5000 };
	struct cluster_map map = { .partition = 1, .nosds = 1 };
	struct cluster_key key;
	struct dropper d;
	struct osd_conns *p = NULL;

	CHECK_EQ(dropper_start(&d), 0);
	CHECK_EQ(cluster_key_generate(1, &key), 0);
	map.osds = &d.osd;
	CHECK_EQ(osd_conns_new(&key, &map, &opt, &p), 0);

	CHECK_EQ(call_counted(p, POLICY, CONNS + 1, CONNS + 1), -ECONNRESET);
	CHECK_EQ(call_counted(p, 1, 1, 1), -ECONNRESET);
	CHECK_EQ(call_counted(p, 2, 2, 2), -ECONNRESET);
	CHECK_EQ(call_counted(p, CONNS + 3, CONNS + 3, CONNS + 3), -ECONNRESET);
	/* Zero tries is a caller's mistake, not a call. */
	CHECK_EQ(call_counted(p, 0, 0, 0), -EINVAL);
	CHECK_EQ(d.dropped, 2 * CONNS + 7);
	osd_conns_free(p);
	dropper_stop(&d);
}

static void test_one_try_on_a_down_osd(void)
{
	struct osd_conns_options opt = { .conns_per_osd = CONNS,
					 .timeout_ms = 5000,
					 .backoff_ms = 60000 };
	struct osd_fixture f;
	struct cluster_map map;
	struct osd_conns *open = NULL, *fresh = NULL;

	CHECK_EQ(osd_fixture_start(&f, 1, 1), 0);
	map = osd_fixture_cluster_map(&f);
	CHECK_EQ(osd_conns_new(&f.key, &map, &opt, &open), 0);
	for (int i = 0; i < CONNS; i++)
		CHECK_EQ(osd_conns_ping(open, 1), 0);
	CHECK_EQ(osd_fixture_stop(&f, 0), 0);
	CHECK_EQ(osd_conns_new(&f.key, &map, &opt, &fresh), 0);

	/* The pooled connection's call reconnects, and is refused. */
	CHECK_EQ(call_counted(open, 1, 1, 1), -ECONNREFUSED);
	CHECK_EQ(call_counted(open, 1, 0, 0), -EHOSTDOWN);
	/* No connection to call on: the one try is the connect. */
	CHECK_EQ(call_counted(fresh, 1, 0, 1), -ECONNREFUSED);
	CHECK_EQ(call_counted(fresh, POLICY, 0, 0), -EHOSTDOWN);
	osd_conns_free(open);
	osd_conns_free(fresh);
	CHECK_EQ(osd_fixture_finish(&f, check_failures > 0), 0);
}

int main(void)
{
	test_tries_when_calls_lose_their_connection();
	test_one_try_on_a_down_osd();
	CHECK_DONE();
}
