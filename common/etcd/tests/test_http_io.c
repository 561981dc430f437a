/* The client against a tiny HTTP server in this process (loopback):
 * answers framed every way, dribbled byte by byte, a stream that stays
 * open (keepalive), a silent peer, a refused port, garbage, a body over
 * the limit, connections kept between calls, endpoint lists and failing
 * over to the next endpoint. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "etcd_internal.h"
#include "fake_gateway.h"

static int client_new(const char *eps, int timeout_ms, struct etcd_client **c)
{
	struct etcd_options o = { .endpoints = eps, .timeout_ms = timeout_ms };

	return etcd_client_new(&o, c);
}

static struct etcd_client *client_for(int port, int timeout_ms)
{
	struct etcd_client *c = NULL;
	char eps[64];

	snprintf(eps, sizeof(eps), "127.0.0.1:%d", port);
	CHECK_EQ(client_new(eps, timeout_ms, &c), 0);
	return c;
}

#define OK_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
#define RANGE_BODY \
	"{\"header\":{\"revision\":\"4\"},\"kvs\":[{\"key\":\"aw==\"," \
	"\"mod_revision\":\"4\",\"value\":\"aGVsbG8=\"}],\"count\":\"1\"}"

static void get_over_content_length_and_dribbled(void)
{
	char ans[512], req[8192];
	struct fake f = { .answer = ans };
	struct etcd_client *c;
	char *v;
	size_t len;
	int64_t rev;
	int conns, requests;

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY),
		 RANGE_BODY);
	fake_start(&f);
	c = client_for(f.port, 2000);
	CHECK_EQ(etcd_get(c, "k", &v, &len, &rev), 0);
	CHECK(len == 5 && !strcmp(v, "hello") && rev == 4);
	free(v);
	/* The request as sent: path, framing, body. */
	fake_seen(&f, req, sizeof(req), &conns, &requests);
	CHECK(!strncmp(req, "POST /v3/kv/range HTTP/1.1\r\n", 28));
	CHECK(strstr(req, "\r\nContent-Type: application/json\r\n") != NULL);
	CHECK(strstr(req, "Content-Length: 14\r\n") != NULL);
	CHECK(strstr(req, "\r\n\r\n{\"key\":\"aw==\"}") != NULL);
	f.dribble = 1;
	CHECK_EQ(etcd_get(c, "k", &v, &len, &rev), 0);
	free(v);
	etcd_client_free(c);
	fake_stop(&f);
}

static void a_keepalive_stream_is_read_to_its_first_message(void)
{
	struct fake f = {
		.hold_ms = 1500,
		.answer = OK_HEAD
		"Transfer-Encoding: chunked\r\n\r\n"
		"3b\r\n{\"result\":{\"header\":{\"revision\":\"4\"},\"ID\":\"77\",\"TTL\":\"5\"}}\n\r\n"
	};
	struct etcd_client *c;
	int64_t ttl = 0, t0;

	fake_start(&f);
	c = client_for(f.port, 2000);
	t0 = now_ms();
	CHECK_EQ(etcd_lease_keepalive(c, 77, &ttl), 0);
	CHECK_EQ(ttl, 5);
	CHECK(now_ms() - t0 < 1000); /* did not wait for the stream's end */
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

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY),
		 RANGE_BODY);
	fake_start(&f);
	/* The first is away; the second written with a trailing slash. */
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d,http://127.0.0.1:%d/", closed_port(),
		 f.port);
	CHECK_EQ(client_new(eps, 500, &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	snprintf(want, sizeof(want), "http://127.0.0.1:%d", f.port);
	CHECK(!strcmp(etcd_client_endpoint(c), want));
	etcd_client_free(c);
	fake_stop(&f);
}

/* Two calls, one connection: with TLS, one handshake. */
static void connections_are_kept_between_calls(void)
{
	char ans[512], req[8192];
	struct fake f = { .answer = ans, .keep = 1 };
	struct etcd_client *c;
	int conns, requests;

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY),
		 RANGE_BODY);
	fake_start(&f);
	c = client_for(f.port, 2000);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	fake_seen(&f, req, sizeof(req), &conns, &requests);
	CHECK_EQ(requests, 2);
	CHECK_EQ(conns, 1);
	etcd_client_free(c);
	fake_stop(&f);
}

/* Over 1 MiB, curl would ask for a 100 Continue first, and wait a
 * second on a peer that does not answer it (this one). */
static void a_large_put_goes_at_once(void)
{
	size_t n = 800 << 10;
	char ans[512], req[8192], *value = malloc(n);
	struct fake f = { .answer = ans };
	struct etcd_client *c;
	int conns, requests;
	int64_t t0;

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY),
		 RANGE_BODY);
	memset(value, 'v', n);
	fake_start(&f);
	c = client_for(f.port, 3000);
	t0 = now_ms();
	CHECK_EQ(etcd_put(c, "k", value, n, 0), 0);
	CHECK(now_ms() - t0 < 500);
	fake_seen(&f, req, sizeof(req), &conns, &requests);
	CHECK(strcasestr(req, "\r\nExpect:") == NULL);
	CHECK(strstr(req, "\r\nContent-Length: 1092293\r\n") != NULL);
	etcd_client_free(c);
	fake_stop(&f);
	free(value);
}

/* The proxy of the environment is for other traffic, never etcd's. */
static void the_environment_proxy_is_not_used(void)
{
	char ans[512], proxy[64];
	struct fake f = { .answer = ans };
	struct etcd_client *c;

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY),
		 RANGE_BODY);
	fake_start(&f);
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", closed_port());
	setenv("http_proxy", proxy, 1);
	setenv("ALL_PROXY", proxy, 1);
	c = client_for(f.port, 1000);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	etcd_client_free(c);
	unsetenv("http_proxy");
	unsetenv("ALL_PROXY");
	fake_stop(&f);
}

/* A body past 4 MiB is not etcd's, framed by its length or not, even
 * when it is a grant answer in every other way. */
static void a_body_over_the_limit_is_eproto(void)
{
	static const char pre[] = "{\"header\":{},\"ID\":\"7\",\"TTL\":\"5\",\"x\":\"";
	size_t pad = HTTP_MAX_BODY, n = sizeof(pre) - 1 + pad + 2;
	char *ans = malloc(n + 256);
	struct fake f;
	struct etcd_client *c;
	int64_t lease;
	int head;

	for (int chunked = 0; chunked < 2; chunked++) {
		memset(&f, 0, sizeof(f));
		head = chunked ? sprintf(ans, OK_HEAD "Transfer-Encoding: chunked\r\n\r\n%zx\r\n",
					 n)
			       : sprintf(ans, OK_HEAD "Content-Length: %zu\r\n\r\n", n);
		memcpy(ans + head, pre, sizeof(pre) - 1);
		memset(ans + head + sizeof(pre) - 1, 'x', pad);
		strcpy(ans + head + n - 2, chunked ? "\"}\r\n0\r\n\r\n" : "\"}");
		f.answer = ans;
		fake_start(&f);
		c = client_for(f.port, 5000);
		CHECK_EQ(etcd_lease_grant(c, 5, &lease), -EPROTO);
		etcd_client_free(c);
		fake_stop(&f);
	}
	free(ans);
}

/* etcd refusing is etcd's answer: the next endpoint is not asked. */
static void a_refusal_is_eacces_from_the_first_endpoint(void)
{
	static const char *const refusals[] = {
		"HTTP/1.1 403 Forbidden\r\nContent-Length: 92\r\n\r\n"
		"{\"error\":\"etcdserver: permission denied\",\"code\":7,"
		"\"message\":\"etcdserver: permission denied\"}",
		/* no credentials to send: a new token would not help */
		"HTTP/1.1 401 Unauthorized\r\nContent-Length: 52\r\n\r\n"
		"{\"error\":\"etcdserver: invalid auth token\",\"code\":16}",
	};
	char ans[512], req[8192], eps[128];
	struct fake deny = { 0 }, ok = { .answer = ans };
	struct etcd_client *c;
	int conns, requests;

	snprintf(ans, sizeof(ans), OK_HEAD "Content-Length: %zu\r\n\r\n%s", strlen(RANGE_BODY),
		 RANGE_BODY);
	fake_start(&ok);
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		deny.answer = refusals[i];
		fake_start(&deny);
		snprintf(eps, sizeof(eps), "127.0.0.1:%d,127.0.0.1:%d", deny.port, ok.port);
		CHECK_EQ(client_new(eps, 1000, &c), 0);
		CHECK_EQ(etcd_put(c, "k", "v", 1, 0), -EACCES);
		etcd_client_free(c);
		fake_stop(&deny);
	}
	fake_seen(&ok, req, sizeof(req), &conns, &requests);
	CHECK_EQ(requests, 0);
	fake_stop(&ok);
}

static void bad_endpoint_lists_are_einval(void)
{
	const char *bad[] = { "", "ftp://127.0.0.1:2379", "https:/127.0.0.1:2379", "127.0.0.1",
			      "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:2379,,127.0.0.1:2380",
			      ":2379", "http://127.0.0.1:2379/v3", "127.0.0.1:23x9",
			      "127.0.0.1:2379,", "https://", "https://:2379",
			      "127.0.0.1:0000000000002379",
			      /* curl would read these as something else than a host */
			      "user@127.0.0.1:2379", "evil#127.0.0.1:2379", "h?x=1:2379",
			      "h%41:2379", "127.0.0.1: 2379", "127.0.0.1:+2379", "::1:2379",
			      "[::1%25lo]:2379", "[]:2379" };
	struct etcd_options none = { 0 };
	struct etcd_client *c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(client_new(bad[i], 0, &c), -EINVAL);
		CHECK(c == NULL);
	}
	CHECK_EQ(etcd_client_new(&none, &c), -EINVAL);
	CHECK_EQ(client_new("localhost:2379,http://[::1]:2381", 0, &c), 0);
	CHECK(!strcmp(etcd_client_endpoint(c), "http://localhost:2379"));
	etcd_client_free(c);
}

/* https:// endpoints keep their scheme; a CA file must be there. */
static void https_endpoints_and_their_ca(void)
{
	struct etcd_options o = { .endpoints = "https://127.0.0.1:2379,https://[::1]:2381/" };
	struct etcd_client *c;

	CHECK_EQ(etcd_client_new(&o, &c), 0);
	CHECK(!strcmp(etcd_client_endpoint(c), "https://127.0.0.1:2379"));
	etcd_client_free(c);
	o.ca_file = ""; /* the system's store */
	CHECK_EQ(etcd_client_new(&o, &c), 0);
	etcd_client_free(c);
	o.ca_file = "/nonexistent/ca.crt";
	CHECK_EQ(etcd_client_new(&o, &c), -ENOENT);
	CHECK(c == NULL);
}

int main(void)
{
	get_over_content_length_and_dribbled();
	a_keepalive_stream_is_read_to_its_first_message();
	silent_and_absent_peers_cost_one_timeout();
	garbage_is_eproto();
	the_next_endpoint_answers_when_one_is_away();
	bad_endpoint_lists_are_einval();
	https_endpoints_and_their_ca();
	connections_are_kept_between_calls();
	a_large_put_goes_at_once();
	the_environment_proxy_is_not_used();
	a_body_over_the_limit_is_eproto();
	a_refusal_is_eacces_from_the_first_endpoint();
	CHECK_DONE();
}
