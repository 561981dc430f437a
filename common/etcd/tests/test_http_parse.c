/* HTTP answer framing on known bytes: Content-Length, chunks, a stream
 * that never ends (keepalive), the end of the connection; and everything
 * that is not an answer we accept refused with -EPROTO, never a crash. */
#include <errno.h>

#include "check.h"
#include "etcd_http.h"

static int parse(const char *s, int eof, struct http_response *r)
{
	return http_parse_response(s, strlen(s), eof, HTTP_MAX_BODY, r);
}

static void check_body(const char *s, int eof, int status, const char *body)
{
	struct http_response r;

	CHECK_EQ(parse(s, eof, &r), 0);
	CHECK_EQ(r.status, status);
	CHECK_EQ(r.body_len, strlen(body));
	CHECK(r.body && strcmp(r.body, body) == 0);
	http_response_free(&r);
}

static void content_length_frames_the_body(void)
{
	check_body("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 0, 200, "{}");
	check_body("HTTP/1.1 404 Not Found\r\ncontent-length:  5 \r\n\r\nhello", 0, 404, "hello");
	/* Bytes past the length are not the body. */
	check_body("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}junk", 0, 200, "{}");
	check_body("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 200, "");
}

static void chunks_are_joined(void)
{
	check_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		   "3\r\n{\"a\r\n5;ext=1\r\n\":12}\r\n0\r\n\r\n", 0, 200, "{\"a\":12}");
	/* The keepalive stream: one whole value, more may never come. */
	check_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		   "a\r\n{\"r\":\"}\"}\n\r\n", 0, 200, "{\"r\":\"}\"}");
	check_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		   "4\r\n{\"a\"\r\n4\r\n:[1]\r\n1\r\n}\r\n", 0, 200, "{\"a\":[1]}");
}

static void the_end_of_the_connection_ends_an_unframed_body(void)
{
	struct http_response r;

	CHECK_EQ(parse("HTTP/1.1 200 OK\r\n\r\n{\"x\":1}", 0, &r), -EAGAIN);
	check_body("HTTP/1.1 200 OK\r\n\r\n{\"x\":1}", 1, 200, "{\"x\":1}");
}

static void incomplete_answers_ask_for_more(void)
{
	const char *partial[] = {
		"", "HTT", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\"",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1",
	};
	struct http_response r;

	for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++) {
		CHECK_EQ(parse(partial[i], 0, &r), -EAGAIN);
		/* ... and the same cut short by the peer is not an answer. */
		CHECK_EQ(parse(partial[i], 1, &r), -EPROTO);
	}
}

static void malformed_answers_are_refused(void)
{
	const char *bad[] = {
		"garbage\r\n\r\n",
		"SSH-2.0-OpenSSH_9.2\r\n",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
	};
	struct http_response r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r.body = NULL;
		CHECK_EQ(parse(bad[i], 0, &r), -EPROTO);
		CHECK(r.body == NULL);
	}
}

static void huge_lengths_are_refused_before_any_allocation(void)
{
	struct http_response r;

	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", 0, &r),
		 -EPROTO);
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n", 0, &r),
		 -EPROTO);
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 4194305\r\n\r\n", 0, &r), -EPROTO);
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		       "ffffffffffffffffffff\r\n", 0, &r), -EPROTO);
	CHECK_EQ(http_parse_response("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", 39, 0, 10, &r),
		 -EPROTO);
	/* Framed by the end of the connection: over the limit once closed too. */
	CHECK_EQ(http_parse_response("HTTP/1.0 200 OK\r\n\r\n0123456789a", 30, 1, 10, &r), -EPROTO);
}

static void a_header_without_end_is_refused(void)
{
	size_t n = HTTP_MAX_HEADER + 100;
	char *big = malloc(n + 1);
	struct http_response r;

	memset(big, 'x', n);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	big[n] = '\0';
	CHECK_EQ(parse(big, 0, &r), -EPROTO);
	free(big);
}

/* A chunk-size line over 1024 bytes is refused however it arrives: whole,
 * or cut before its CRLF (the framing must not depend on the reads). */
static void a_long_chunk_size_line_is_refused(void)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0;";
	size_t ext = 1100, n = sizeof(head) - 1 + ext + 4;
	char *big = malloc(n + 1);
	struct http_response r;

	memcpy(big, head, sizeof(head) - 1);
	memset(big + sizeof(head) - 1, 'x', ext);
	memcpy(big + n - 4, "\r\n\r\n", 5);
	CHECK_EQ(http_parse_response(big, n, 0, HTTP_MAX_BODY, &r), -EPROTO);
	CHECK_EQ(http_parse_response(big, n - 10, 0, HTTP_MAX_BODY, &r), -EPROTO);
	free(big);
}

static void json_spans(void)
{
	CHECK_EQ(json_value_span("{}", 2), 2);
	CHECK_EQ(json_value_span("  {\"a\":\"}\\\"}\"} {", 16), 14);
	CHECK_EQ(json_value_span("[1,[2]]x", 8), 7);
	CHECK_EQ(json_value_span("{\"a\":[}", 7), 0);
	CHECK_EQ(json_value_span("{\"a", 3), 0);
	CHECK_EQ(json_value_span("\"str\"", 5), 0);
	CHECK_EQ(json_value_span("", 0), 0);
}

static void a_post_is_formatted_as_known_bytes(void)
{
	const char *want = "POST /v3/kv/range HTTP/1.1\r\n"
			   "Host: 127.0.0.1:2379\r\n"
			   "Content-Type: application/json\r\n"
			   "Content-Length: 7\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "{\"k\":1}";
	char *req;
	size_t len;

	CHECK_EQ(http_format_post("127.0.0.1", 2379, "/v3/kv/range", "{\"k\":1}", 7, &req, &len), 0);
	CHECK_EQ(len, strlen(want));
	CHECK(strcmp(req, want) == 0);
	free(req);
	CHECK_EQ(http_format_post("::1", 2379, "/", "", 0, &req, &len), 0);
	CHECK(strstr(req, "\r\nHost: [::1]:2379\r\n") != NULL);
	free(req);
}

/* Every cut and every single-byte change of real answers parses to an
 * answer, a wait, or a refusal: nothing else, and no crash (ASan). */
static void mutated_answers_never_crash(void)
{
	const char *real[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 37\r\n"
		"Connection: close\r\n\r\n{\"header\":{\"revision\":\"1\"},\"TTL\":\"5\"}",
		"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1e\r\n{\"error\":\"not found\",\"code\":5}\r\n0\r\nGrpc-Trailer: x\r\n\r\n",
	};
	const char subst[] = { 0, '\r', '\n', ':', '0', 'f', '{', '"', ' ', (char)0xff };
	struct http_response r;
	char buf[512];

	for (size_t k = 0; k < 2; k++) {
		size_t n = strlen(real[k]);
		CHECK_EQ(http_parse_response(real[k], n, 0, HTTP_MAX_BODY, &r), 0);
		http_response_free(&r);
		for (size_t cut = 0; cut <= n; cut++)
			for (int eof = 0; eof < 2; eof++) {
				int rc = http_parse_response(real[k], cut, eof, HTTP_MAX_BODY, &r);
				CHECK(rc == 0 || rc == -EAGAIN || rc == -EPROTO);
				if (rc == 0)
					http_response_free(&r);
			}
		for (size_t at = 0; at < n; at++)
			for (size_t j = 0; j < sizeof(subst); j++) {
				memcpy(buf, real[k], n);
				buf[at] = subst[j];
				int rc = http_parse_response(buf, n, 1, HTTP_MAX_BODY, &r);
				CHECK(rc == 0 || rc == -EPROTO);
				if (rc == 0)
					http_response_free(&r);
			}
	}
}

int main(void)
{
	mutated_answers_never_crash();
	content_length_frames_the_body();
	chunks_are_joined();
	the_end_of_the_connection_ends_an_unframed_body();
	incomplete_answers_ask_for_more();
	malformed_answers_are_refused();
	huge_lengths_are_refused_before_any_allocation();
	a_header_without_end_is_refused();
	a_long_chunk_size_line_is_refused();
	json_spans();
	a_post_is_formatted_as_known_bytes();
	CHECK_DONE();
}
