/* Framing of an HTTP/1.1 answer, done on whatever bytes have arrived:
 * the I/O loop (http.c) calls it after each read until it says complete.
 * Answers are small, so parsing again from the start is cheap and keeps
 * this free of state. */
#include "etcd_http.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void http_response_free(struct http_response *r)
{
	free(r->body);
	r->body = NULL;
	r->body_len = 0;
}

size_t json_value_span(const char *s, size_t n)
{
	size_t i = 0, depth = 0;
	int in_str = 0, esc = 0;

	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i == n || (s[i] != '{' && s[i] != '['))
		return 0;
	for (; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return 0;
}

/* "HTTP/1.x NNN ...": the status, or -EPROTO. */
static int parse_status_line(const char *line, size_t n)
{
	if (n < 12 || memcmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ')
		return -EPROTO;
	if (!isdigit((unsigned char)line[9]) || !isdigit((unsigned char)line[10]) ||
	    !isdigit((unsigned char)line[11]) || (n > 12 && line[12] != ' '))
		return -EPROTO;
	return (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
}

struct framing {
	int chunked;
	int has_length;
	uint64_t length;
};

/* Decimal digits only: a sign, spaces inside or an overflow is -EPROTO. */
static int parse_length(const char *v, size_t n, size_t max_body, uint64_t *out)
{
	uint64_t x = 0;

	if (n == 0)
		return -EPROTO;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)v[i]))
			return -EPROTO;
		x = x * 10 + (uint64_t)(v[i] - '0');
		if (x > max_body)
			return -EPROTO;
	}
	*out = x;
	return 0;
}

static int parse_header(const char *line, size_t n, size_t max_body, struct framing *f)
{
	const char *colon = memchr(line, ':', n);
	size_t name_len, vlen;
	const char *v;

	if (!colon || colon == line)
		return -EPROTO;
	name_len = (size_t)(colon - line);
	v = colon + 1;
	vlen = n - name_len - 1;
	while (vlen && (*v == ' ' || *v == '\t'))
		v++, vlen--;
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (name_len == 14 && !strncasecmp(line, "Content-Length", 14)) {
		if (f->has_length)
			return -EPROTO;
		f->has_length = 1;
		return parse_length(v, vlen, max_body, &f->length);
	}
	if (name_len == 17 && !strncasecmp(line, "Transfer-Encoding", 17))
		f->chunked = memmem(v, vlen, "chunked", 7) != NULL;
	return 0;
}

/* The status line and headers; *body_off gets where the body starts. */
static int parse_head(const char *buf, size_t len, size_t max_body, int *status,
		      struct framing *f, size_t *body_off)
{
	size_t limit = len < HTTP_MAX_HEADER ? len : HTTP_MAX_HEADER;
	const char *end = memmem(buf, limit, "\r\n\r\n", 4);
	const char *p = buf, *eol;

	if (memcmp(buf, "HTTP/1.", len < 7 ? len : 7) != 0)
		return -EPROTO;	/* not HTTP at all: no need to wait for more */
	if (!end)
		return len >= HTTP_MAX_HEADER ? -EPROTO : -EAGAIN;
	eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
	*status = parse_status_line(p, (size_t)(eol - p));
	if (*status < 0)
		return *status;
	memset(f, 0, sizeof(*f));
	for (p = eol + 2; p < end + 2; p = eol + 2) {
		eol = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
		int rc = parse_header(p, (size_t)(eol - p), max_body, f);
		if (rc)
			return rc;
	}
	*body_off = (size_t)(end + 4 - buf);
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* No chunk-size line of etcd's comes near this (extensions included). */
#define CHUNK_LINE_MAX 1024

/* One chunk-size line ("1a;ext\r\n"): its size and where the data starts.
 * The CRLF is looked for within the longest line only, so a longer line
 * is refused whether it arrived whole or not. */
static int parse_chunk_size(const char *p, size_t n, size_t max_body, uint64_t *size, size_t *used)
{
	size_t window = n < CHUNK_LINE_MAX + 2 ? n : CHUNK_LINE_MAX + 2;
	const char *eol = memmem(p, window, "\r\n", 2);
	uint64_t x = 0;
	size_t i = 0;

	if (!eol)
		return n >= CHUNK_LINE_MAX + 2 ? -EPROTO : -EAGAIN;
	for (; p + i < eol && hexval(p[i]) >= 0; i++) {
		x = x * 16 + (uint64_t)hexval(p[i]);
		if (x > max_body)
			return -EPROTO;
	}
	if (i == 0 || (p + i < eol && p[i] != ';' && p[i] != ' '))
		return -EPROTO;
	*size = x;
	*used = (size_t)(eol + 2 - p);
	return 0;
}

/* Decodes the chunks that have arrived into out (at least n bytes);
 * *done when the last chunk came. */
static int dechunk(const char *p, size_t n, size_t max_body, char *out, size_t *outlen, int *done)
{
	size_t off = 0, o = 0, used;
	uint64_t size;
	int rc;

	*done = 0;
	for (;;) {
		rc = parse_chunk_size(p + off, n - off, max_body, &size, &used);
		if (rc == -EAGAIN)
			break;
		if (rc)
			return rc;
		if (size == 0) {
			*done = 1;	/* trailers, if any, are not ours to read */
			break;
		}
		if (o + size > max_body)
			return -EPROTO;
		if (n - off - used < size + 2) {
			size_t have = n - off - used < size ? n - off - used : size;
			memcpy(out + o, p + off + used, have);
			o += have;
			break;
		}
		if (memcmp(p + off + used + size, "\r\n", 2) != 0)
			return -EPROTO;
		memcpy(out + o, p + off + used, size);
		o += size;
		off += used + size + 2;
	}
	*outlen = o;
	return 0;
}

static int take_body(const char *p, size_t n, struct http_response *r)
{
	r->body = malloc(n + 1);
	if (!r->body)
		return -ENOMEM;
	memcpy(r->body, p, n);
	r->body[n] = '\0';
	r->body_len = n;
	return 0;
}

static int chunked_body(const char *p, size_t n, int eof, size_t max_body, struct http_response *r)
{
	char *tmp = malloc(n + 1);
	size_t len = 0;
	int done, rc;

	if (!tmp)
		return -ENOMEM;
	rc = dechunk(p, n, max_body, tmp, &len, &done);
	if (rc == 0 && !done) {
		/* A stream (keepalive): one whole JSON value is the answer. */
		size_t span = json_value_span(tmp, len);
		if (span)
			len = span;
		else
			rc = eof ? -EPROTO : -EAGAIN;
	}
	if (rc == 0)
		rc = take_body(tmp, len, r);
	free(tmp);
	return rc;
}

int http_parse_response(const char *buf, size_t len, int eof, size_t max_body,
			struct http_response *r)
{
	struct framing f;
	size_t off;
	int status, rc;

	memset(r, 0, sizeof(*r));
	rc = parse_head(buf, len, max_body, &status, &f, &off);
	if (rc == -EAGAIN && eof)
		return -EPROTO;
	if (rc)
		return rc;
	r->status = status;
	if (f.chunked)
		return chunked_body(buf + off, len - off, eof, max_body, r);
	if (f.has_length) {
		if (len - off < f.length)
			return eof ? -EPROTO : -EAGAIN;
		return take_body(buf + off, (size_t)f.length, r);
	}
	if (len - off > max_body)
		return -EPROTO;
	return eof ? take_body(buf + off, len - off, r) : -EAGAIN;
}
