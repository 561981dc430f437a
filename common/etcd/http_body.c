/* The body of an answer as the transfer hands it over, in pieces of any
 * size: kept up to the first whole JSON value, which is the answer even
 * when the gateway goes on streaming after it (lease keepalive).  No I/O
 * here, so the unit tests and the fuzz target feed it known bytes. */
#include "etcd_http.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

void http_response_free(struct http_response *r)
{
	free(r->body);
	r->body = NULL;
	r->body_len = 0;
}

/* One byte inside the value; 1 when it closes the value. */
static int scan_byte(struct json_span *st, char c)
{
	if (st->in_str) {
		if (st->esc)
			st->esc = 0;
		else if (c == '\\')
			st->esc = 1;
		else if (c == '"')
			st->in_str = 0;
	} else if (c == '"') {
		st->in_str = 1;
	} else if (c == '{' || c == '[') {
		st->depth++;
	} else if (c == '}' || c == ']') {
		return --st->depth == 0;
	}
	return 0;
}

size_t json_value_span(struct json_span *st, const char *s, size_t n)
{
	for (; !st->end && !st->bad && st->off < n; st->off++) {
		char c = s[st->off];

		if (st->depth == 0 && isspace((unsigned char)c))
			continue;
		if (st->depth == 0 && c != '{' && c != '[')
			st->bad = 1;
		else if (scan_byte(st, c))
			st->end = st->off + 1;
	}
	return st->end;
}

size_t http_body_take(struct http_body *b, const char *p, size_t n)
{
	size_t take = n < b->max - b->len ? n : b->max - b->len;
	size_t span;

	if (b->complete)
		return 0;
	if (pando_grow((void **)&b->buf, &b->cap, b->len + take + 1, 1)) {
		b->nomem = 1;
		return 0;
	}
	memcpy(b->buf + b->len, p, take);
	b->len += take;
	b->buf[b->len] = '\0';
	span = json_value_span(&b->span, b->buf, b->len);
	if (span) {
		/* The value ends in this piece: what follows it is dropped. */
		take -= b->len - span;
		b->len = span;
		b->buf[span] = '\0';
		b->complete = 1;
		return take;
	}
	if (take < n)
		b->over = 1;
	return take < n ? 0 : n;
}
