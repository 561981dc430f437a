/* The etcd client's HTTP answer framing (common/etcd/http_parse.c):
 * status line, headers, Content-Length, chunks, the end of the
 * connection, and the first JSON value of a stream.  The first byte says
 * whether the peer has closed and picks a body limit; the rest is what
 * arrived.  The I/O loop parses again after every read, so an answer cut
 * anywhere must parse as "need more" or as the same answer (for a stream,
 * the first JSON value of the whole one), never as an error. */
#include <errno.h>
#include <string.h>

#include "etcd_http.h"
#include "fuzz.h"

static void check_span(const char *s, size_t n)
{
	size_t span = json_value_span(s, n);

	fuzz_check(span <= n && (span == 0 || s[span - 1] == '}' || s[span - 1] == ']'),
		   "json_value_span past its input or not at a closing bracket");
}

static bool same_answer(const struct http_response *part, const struct http_response *whole)
{
	size_t span = json_value_span(whole->body, whole->body_len);

	if (part->status != whole->status)
		return false;
	if (part->body_len == whole->body_len && !memcmp(part->body, whole->body, part->body_len))
		return true;
	return span && part->body_len == span && !memcmp(part->body, whole->body, span);
}

/* The answer as the first cut bytes of it arrived. */
static void check_cut(const char *buf, size_t cut, size_t max_body, int rc_whole,
		      const struct http_response *whole)
{
	struct http_response part;
	int rc = http_parse_response(buf, cut, 0, max_body, &part);

	if (rc_whole == 0)
		fuzz_check(rc == -EAGAIN || (rc == 0 && same_answer(&part, whole)),
			   "a cut of a whole answer is refused or another answer");
	if (rc == 0) {
		fuzz_check(rc_whole != -EAGAIN, "complete when cut, incomplete whole");
		http_response_free(&part);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_response whole = { 0 };
	size_t max_body, n;
	char *buf;
	int eof, rc;

	if (size < 1)
		return 0;
	eof = data[0] & 1;
	max_body = data[0] & 2 ? 64 : HTTP_MAX_BODY;
	n = size - 1;
	buf = malloc(n + 1);
	memcpy(buf, data + 1, n);
	check_span(buf, n);
	rc = http_parse_response(buf, n, eof, max_body, &whole);
	fuzz_check(rc == 0 || rc == -EAGAIN || rc == -EPROTO, "unexpected error");
	fuzz_check(!(rc == -EAGAIN && eof), "waits for more after the end of the connection");
	if (rc == 0)
		fuzz_check(whole.body && whole.body_len <= max_body &&
			   whole.body[whole.body_len] == '\0',
			   "body over the limit or not NUL-terminated");
	if (n > 0) {
		check_cut(buf, n - 1, max_body, rc, &whole);
		check_cut(buf, n / 2, max_body, rc, &whole);
		check_cut(buf, (size_t)(data[0] >> 2) * n / 64, max_body, rc, &whole);
	}
	if (rc == 0)
		http_response_free(&whole);
	free(buf);
	return 0;
}
