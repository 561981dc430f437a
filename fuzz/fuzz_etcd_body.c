/* The sink of an etcd answer's body (common/etcd/http_body.c), which the
 * transfer hands the bytes to in pieces of any size, and the scan for the
 * end of its first JSON value.  The first byte picks the size of the
 * pieces and a body limit (the real one, or 64 bytes); the rest is the
 * body as it arrives, a stream that may never end.  However the bytes are
 * cut, the sink must keep the same body: the first whole JSON value and
 * nothing after it, or every byte when none ends, within the limit. */
#include <string.h>

#include "etcd_http.h"
#include "fuzz.h"

/* Feeds s[n] in pieces of step bytes until the sink stops taking. */
static size_t feed(struct http_body *b, const char *s, size_t n, size_t step)
{
	size_t taken = 0;

	for (size_t off = 0; off < n; off += step) {
		size_t piece = n - off < step ? n - off : step;
		size_t got = http_body_take(b, s + off, piece);

		fuzz_check(got <= piece, "took more than it was given");
		taken += got;
		if (got < piece)
			break;
	}
	return taken;
}

static void check_body(const struct http_body *b, const char *s, size_t n, size_t taken)
{
	struct json_span st = { 0 };
	size_t span = json_value_span(&st, s, n < b->max ? n : b->max);

	fuzz_check(b->len <= b->max && (!b->buf || b->buf[b->len] == '\0'),
		   "body over the limit or not NUL-terminated");
	fuzz_check(!b->buf || !memcmp(b->buf, s, b->len), "body is not the bytes given");
	fuzz_check(span == 0 || s[span - 1] == '}' || s[span - 1] == ']',
		   "json_value_span not at a closing bracket");
	if (b->complete)
		fuzz_check(span && b->len == span && taken == span && !b->over,
			   "complete, but not with the first JSON value");
	else if (b->over)
		fuzz_check(!span && n > b->max, "over the limit, but the value ended within");
	else
		fuzz_check(!span && taken == n && b->len == n, "a whole body cut short");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_body whole = { 0 }, cut = { 0 };
	const char *s = (const char *)data + 1;
	size_t n, step, got;

	if (size < 1)
		return 0;
	n = size - 1;
	step = (size_t)(data[0] >> 1) + 1;
	whole.max = cut.max = data[0] & 1 ? 64 : HTTP_MAX_BODY;
	got = feed(&whole, s, n, n ? n : 1);
	check_body(&whole, s, n, got);
	got = feed(&cut, s, n, step);
	check_body(&cut, s, n, got);
	fuzz_check(whole.complete == cut.complete && whole.over == cut.over && whole.len == cut.len,
		   "the same bytes cut otherwise give another body");
	free(whole.buf);
	free(cut.buf);
	return 0;
}
