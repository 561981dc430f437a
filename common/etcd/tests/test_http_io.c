/* The client against a tiny HTTP server in this process (loopback):
 * answers framed every way, dribbled byte by byte, a stream that stays
 * open (keepalive), a silent peer, a refused port, garbage, endpoint
 * lists and failing over to the next endpoint. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "etcd_internal.h"

struct fake {
	int fd;
	int port;
	const char *answer;	/* sent to every request */
	int dribble;		/* one byte at a time */
	int hold_ms;		/* keep the connection open this long after */
	int silent;		/* read, answer nothing, hold */
	char request[4096];	/* the last request seen */
	pthread_t thread;
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void serve_one(struct fake *f, int c)
{
	ssize_t n = recv(c, f->request, sizeof(f->request) - 1, 0);
	size_t len = strlen(f->answer);

	f->request[n > 0 ? n : 0] = '\0';
	if (!f->silent && f->dribble) {
		for (size_t i = 0; i < len; i++) {
			send(c, f->answer + i, 1, MSG_NOSIGNAL);
			sleep_ms(1);
		}
	} else if (!f->silent) {
		send(c, f->answer, len, MSG_NOSIGNAL);
	}
	if (f->hold_ms)
		sleep_ms(f->hold_ms);
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;
	int c;

	while ((c = accept(f->fd, NULL, NULL)) >= 0) {
		serve_one(f, c);
		close(c);
	}
	return NULL;
}

static void fake_start(struct fake *f)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);

	f->fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(f->fd >= 0);
	CHECK_EQ(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(f->fd, 8), 0);
	getsockname(f->fd, (struct sockaddr *)&sa, &len);
	f->port = ntohs(sa.sin_port);
	pthread_create(&f->thread, NULL, fake_thread, f);
}

static void fake_stop(struct fake *f)
{
	shutdown(f->fd, SHUT_RDWR);	/* ends the accept */
	pthread_join(f->thread, NULL);
	close(f->fd);
}

/* A port nobody listens on: bound, then closed. */
static int closed_port(void)
{
	struct fake f = { .answer = "" };

	fake_start(&f);
	fake_stop(&f);
	return f.port;
}

static struct etcd_client *client_for(int port, int timeout_ms)
{
	struct etcd_client *c = NULL;
	char eps[64];

	snprintf(eps, sizeof(eps), "127.0.0.1:%d", port);
	CHECK_EQ(etcd_client_new(eps, timeout_ms, &c), 0);
	return c;
}

#define OK_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
#define RANGE_BODY "{\"header\":{\"revision\":\"4\"},\"kvs\":[{\"key\":\"aw==\"," \
	"\"mod_revision\":\"4\",\"value\":\"aGVsbG8=\"}],\"count\":\"1\"}"

static void get_over_content_length_and_dribbled(void)
{
	char ans[512];
	struct fake f = { .answer = ans };
	struct etcd_client *c;
	char *v;
	size_t len;
	int64_t rev;

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY), RANGE_BODY);
	fake_start(&f);
	c = client_for(f.port, 2000);
	CHECK_EQ(etcd_get(c, "k", &v, &len, &rev), 0);
	CHECK(len == 5 && !strcmp(v, "hello") && rev == 4);
	free(v);
	/* The request as sent: path, framing, body. */
	CHECK(!strncmp(f.request, "POST /v3/kv/range HTTP/1.1\r\n", 28));
	CHECK(strstr(f.request, "Content-Length: 14\r\n") != NULL);
	CHECK(strstr(f.request, "\r\n\r\n{\"key\":\"aw==\"}") != NULL);
	f.dribble = 1;
	CHECK_EQ(etcd_get(c, "k", &v, &len, &rev), 0);
	free(v);
	etcd_client_free(c);
	fake_stop(&f);
}

static void a_keepalive_stream_is_read_to_its_first_message(void)
{
	struct fake f = { .hold_ms = 1500, .answer =
		OK_HEAD "Transfer-Encoding: chunked\r\n\r\n"
		"3b\r\n{\"result\":{\"header\":{\"revision\":\"4\"},\"ID\":\"77\",\"TTL\":\"5\"}}\n\r\n" };
	struct etcd_client *c;
	int64_t ttl = 0, t0;

	fake_start(&f);
	c = client_for(f.port, 2000);
	t0 = now_ms();
	CHECK_EQ(etcd_lease_keepalive(c, 77, &ttl), 0);
	CHECK_EQ(ttl, 5);
	CHECK(now_ms() - t0 < 1000);	/* did not wait for the stream's end */
	etcd_client_free(c);
	fake_stop(&f);
}

static void silent_and_absent_peers_cost_one_timeout(void)
{
	struct fake f = { .silent = 1, .hold_ms = 1500, .answer = "" };
	struct etcd_client *c;
	int64_t lease, t0;

	fake_start(&f);
	c = client_for(f.port, 300);
	t0 = now_ms();
	CHECK_EQ(etcd_lease_grant(c, 5, &lease), -EHOSTUNREACH);
	CHECK(now_ms() - t0 >= 250 && now_ms() - t0 < 1000);
	etcd_client_free(c);
	fake_stop(&f);
	c = client_for(closed_port(), 300);
	CHECK_EQ(etcd_lease_grant(c, 5, &lease), -EHOSTUNREACH);
	etcd_client_free(c);
}

static void garbage_is_eproto(void)
{
	const char *answers[] = {
		"not http at all\r\n\r\n",
		OK_HEAD "Content-Length: 99999999999999\r\n\r\n{}",
		OK_HEAD "Content-Length: 5\r\n\r\nhello",
		OK_HEAD "Content-Length: 2\r\n\r\n{}",
		OK_HEAD "Content-Length: 50\r\n\r\n{\"header\":{}",
	};
	struct fake f;
	struct etcd_client *c;
	int64_t lease;

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		memset(&f, 0, sizeof(f));
		f.answer = answers[i];
		fake_start(&f);
		c = client_for(f.port, 1000);
		CHECK_EQ(etcd_lease_grant(c, 5, &lease), -EPROTO);
		etcd_client_free(c);
		fake_stop(&f);
	}
}

static void the_next_endpoint_answers_when_one_is_away(void)
{
	char ans[512];
	struct fake f = { .answer = ans };
	struct etcd_client *c;
	char want[64], eps[128];

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY), RANGE_BODY);
	fake_start(&f);
	/* The first is away; the second written with a trailing slash. */
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d,http://127.0.0.1:%d/", closed_port(), f.port);
	CHECK_EQ(etcd_client_new(eps, 500, &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	snprintf(want, sizeof(want), "http://127.0.0.1:%d", f.port);
	CHECK(!strcmp(etcd_client_endpoint(c), want));
	etcd_client_free(c);
	fake_stop(&f);
}

static void bad_endpoint_lists_are_einval(void)
{
	const char *bad[] = { "", "https://127.0.0.1:2379", "127.0.0.1", "127.0.0.1:0",
			      "127.0.0.1:65536", "127.0.0.1:2379,,127.0.0.1:2380", ":2379",
			      "http://127.0.0.1:2379/v3", "127.0.0.1:23x9", "127.0.0.1:2379," };
	struct etcd_client *c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(etcd_client_new(bad[i], 0, &c), -EINVAL);
		CHECK(c == NULL);
	}
	CHECK_EQ(etcd_client_new("localhost:2379,http://[::1]:2381", 0, &c), 0);
	CHECK(!strcmp(etcd_client_endpoint(c), "http://localhost:2379"));
	etcd_client_free(c);
}

int main(void)
{
	get_over_content_length_and_dribbled();
	a_keepalive_stream_is_read_to_its_first_message();
	silent_and_absent_peers_cost_one_timeout();
	garbage_is_eproto();
	the_next_endpoint_answers_when_one_is_away();
	bad_endpoint_lists_are_einval();
	CHECK_DONE();
}
