/* The sink of an answer's body, on known bytes cut every way: it keeps
 * the first whole JSON value and stops there (a keepalive stream never
 * ends), takes a unary answer whole, and refuses a body over its limit. */
#include <errno.h>

#include "check.h"
#include "etcd_http.h"

static size_t span_of(const char *s)
{
	struct json_span st = { 0 };

	return json_value_span(&st, s, strlen(s));
}

static void json_spans(void)
{
	CHECK_EQ(span_of("{}"), 2);
	CHECK_EQ(span_of("  {\"a\":\"}\\\"}\"} {"), 14);
	CHECK_EQ(span_of("[1,[2]]x"), 7);
	CHECK_EQ(span_of("{\"a\":[}"), 0);
	CHECK_EQ(span_of("{\"a"), 0);
	CHECK_EQ(span_of("\"str\""), 0);
	CHECK_EQ(span_of(""), 0);
}

/* The same value found however the bytes grow, each scanned once. */
static void a_span_resumes_where_it_stopped(void)
{
	const char *s = " {\"a\":\"}\\\"\",\"b\":[{}]}\n{";
	size_t want = span_of(s), n = strlen(s);

	for (size_t step = 1; step <= 4; step++) {
		struct json_span st = { 0 };
		size_t got = 0;

		for (size_t len = 0; !got && len < n + step; len += step)
			got = json_value_span(&st, s, len < n ? len : n);
		CHECK_EQ(got, want);
		CHECK_EQ(st.off, want);
	}
}

/* Feeds s in pieces of step bytes, as curl would; returns the bytes
 * taken, and stops where the sink does. */
static size_t feed(struct http_body *b, const char *s, size_t step)
{
	size_t n = strlen(s), taken = 0;

	for (size_t off = 0; off < n; off += step) {
		size_t piece = n - off < step ? n - off : step;
		size_t got = http_body_take(b, s + off, piece);

		taken += got;
		if (got < piece)
			break;
	}
	return taken;
}

static void a_stream_stops_after_its_first_value(void)
{
	const char *stream = "{\"result\":{\"TTL\":\"5\"}}\n{\"result\":{\"TTL\":\"5\"}}\n";

	for (size_t step = 1; step < 50; step++) {
		struct http_body b = { .max = HTTP_MAX_BODY };

		CHECK_EQ(feed(&b, stream, step), 22);
		CHECK(b.complete && !b.over && b.len == 22);
		CHECK(!strcmp(b.buf, "{\"result\":{\"TTL\":\"5\"}}"));
		/* Once complete, it takes nothing more. */
		CHECK_EQ(http_body_take(&b, "\n", 1), 0);
		free(b.buf);
	}
}

/* A value that ends a piece is taken whole: curl goes on and sees the
 * answer end (no transfer stopped, so the connection is kept). */
static void a_unary_answer_is_taken_whole(void)
{
	const char *ans = "{\"header\":{\"revision\":\"4\"}}";
	struct http_body b = { .max = HTTP_MAX_BODY };

	CHECK_EQ(http_body_take(&b, ans, 10), 10);
	CHECK_EQ(http_body_take(&b, ans + 10, strlen(ans) - 10), strlen(ans) - 10);
	CHECK(b.complete && b.len == strlen(ans) && !strcmp(b.buf, ans));
	free(b.buf);
	/* Not JSON: kept whole for the parser to refuse. */
	memset(&b, 0, sizeof(b));
	b.max = HTTP_MAX_BODY;
	CHECK_EQ(feed(&b, "hello", 2), 5);
	CHECK(!b.complete && b.len == 5 && !strcmp(b.buf, "hello"));
	free(b.buf);
}

static void a_body_over_the_limit_is_refused(void)
{
	struct http_body b = { .max = 8 };

	CHECK_EQ(http_body_take(&b, "[[[[", 4), 4);
	CHECK_EQ(http_body_take(&b, "[[[[[", 5), 0);
	CHECK(b.over && !b.complete && b.len == 8);
	free(b.buf);
	/* A value that ends within the limit is the answer, whatever follows. */
	memset(&b, 0, sizeof(b));
	b.max = 8;
	CHECK_EQ(http_body_take(&b, "{}xxxxxxxxxxxxxx", 16), 2);
	CHECK(b.complete && !b.over && !strcmp(b.buf, "{}"));
	free(b.buf);
}

int main(void)
{
	json_spans();
	a_span_resumes_where_it_stopped();
	a_stream_stops_after_its_first_value();
	a_unary_answer_is_taken_whole();
	a_body_over_the_limit_is_refused();
	CHECK_DONE();
}
