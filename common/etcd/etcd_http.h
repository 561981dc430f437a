/* HTTP/1.1 to etcd's gateway through libcurl (http.c), and the sink the
 * answer's body goes into (http_body.c).  The gateway streams some answers
 * (lease keepalive) without ever ending them: a body is complete as soon
 * as it holds one whole JSON value, and the transfer is then stopped.
 * Private to the etcd client. */
#ifndef PANDO_ETCD_HTTP_H
#define PANDO_ETCD_HTTP_H

#include <stddef.h>

/* No answer of ours is larger (etcd refuses requests over 1.5 MiB, so
 * no value is larger, even base64'd); a body above it is not etcd. */
#define HTTP_MAX_BODY (4u << 20)

struct http_response {
	int status;      /* 200, 404, ... */
	char *body;      /* malloc'd, NUL-terminated; NULL when empty */
	size_t body_len; /* without the NUL */
};

void http_response_free(struct http_response *r);

/* Where a scan for the end of a JSON value stopped; zeroed to start. */
struct json_span {
	size_t off; /* bytes scanned */
	size_t depth;
	size_t end; /* the value's length, once found */
	int in_str, esc;
	int bad; /* it starts with something else than { or [ */
};

/* The length of the first complete JSON object or array at the start of
 * s[n] (after white space), or 0 if it is not complete yet.  st carries
 * the scan over from a call on a shorter prefix of the same bytes, so a
 * body that grows is scanned once.  Only the nesting is checked: the
 * JSON parser judges the rest. */
size_t json_value_span(struct json_span *st, const char *s, size_t n);

/* A body as it arrives, piece by piece: the write callback's sink. */
struct http_body {
	char *buf; /* malloc'd, NUL-terminated; the caller frees */
	size_t len, cap;
	size_t max; /* bytes past it make the body over */
	struct json_span span;
	int complete; /* it holds one whole JSON value, and only it */
	int over;     /* more than max bytes came */
	int nomem;
};

/* Takes p[n] into b and returns how many bytes it took: fewer than n
 * once the body holds one whole JSON value (the bytes after it are not
 * the answer), or when it goes over max or out of memory. */
size_t http_body_take(struct http_body *b, const char *p, size_t n);

/* One curl easy handle: the connections and TLS sessions it keeps live
 * from one exchange to the next.  One exchange at a time. */
struct http_conn;

/* timeout_ms bounds each exchange, connecting included; ca_file (NULL:
 * the system's store) is the only CA an https peer is checked against. */
int http_conn_new(int timeout_ms, const char *ca_file, struct http_conn **out);
void http_conn_free(struct http_conn *h);

/* POSTs body[len] (JSON) to url, with "Authorization: token" unless
 * token is NULL or "".  0 with *r filled (the caller frees it);
 * -EHOSTUNREACH when the peer cannot be reached or does not answer in
 * time; -EPROTO for an answer that is not HTTP, cut short, or over
 * HTTP_MAX_BODY, or for a TLS peer that fails verification; -ENOMEM. */
int http_post(struct http_conn *h, const char *url, const char *token, const char *body, size_t len,
	      struct http_response *r);

#endif
