/* Just enough HTTP/1.1 for etcd's JSON gateway: one POST per connection
 * (Connection: close), the answer framed by Content-Length, by chunks, or
 * by the end of the connection.  The gateway streams some answers (lease
 * keepalive) without ever ending them: a chunked body is complete as soon
 * as it holds one whole JSON value, and the connection is then closed. */
#ifndef PANDO_ETCD_HTTP_H
#define PANDO_ETCD_HTTP_H

#include <stddef.h>

/* No answer of ours is larger (etcd refuses requests over 1.5 MiB, so
 * no value is larger, even base64'd); a length above it is not etcd. */
#define HTTP_MAX_BODY (4u << 20)
#define HTTP_MAX_HEADER (64u << 10)

struct http_response {
	int status;		/* 200, 404, ... */
	char *body;		/* malloc'd, NUL-terminated */
	size_t body_len;	/* without the NUL */
};

void http_response_free(struct http_response *r);

/* Parses buf[len], all that has arrived so far; eof says the peer closed.
 * 0: complete (r filled, the caller frees it); -EAGAIN: need more bytes;
 * -EPROTO: not an HTTP answer we accept (or a body over max_body);
 * -ENOMEM. */
int http_parse_response(const char *buf, size_t len, int eof, size_t max_body,
			struct http_response *r);

/* The length of the first complete JSON object or array at the start of
 * s[n] (after white space), or 0 if it is not complete yet.  Only the
 * nesting is checked: the JSON parser judges the rest. */
size_t json_value_span(const char *s, size_t n);

/* Writes the request for POSTing body[len] to path to out (malloc'd). */
int http_format_post(const char *host, int port, const char *path, const char *body,
		     size_t len, char **out, size_t *outlen);

/* One exchange with host:port, everything within timeout_ms.
 * 0 with *r filled; -EHOSTUNREACH when the peer cannot be reached or does
 * not answer in time; -EPROTO; -ENOMEM. */
int http_post(const char *host, int port, const char *path, const char *body,
	      size_t len, int timeout_ms, struct http_response *r);

#endif
