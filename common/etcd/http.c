/* One POST to etcd's gateway through libcurl, all of it within the
 * timeout: a peer that is away, stopped (SIGSTOP) or silent costs the
 * caller at most timeout_ms, never a hang.  The easy handle lives as long
 * as the client, so its connections are kept from one call to the next. */
#include "etcd_http.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct http_conn {
	CURL *curl;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* Once per process, never undone: a curl_global_cleanup would pull
 * OpenSSL from under whatever else in the process uses it (Ganesha). */
static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	return http_body_take(arg, p, size * nmemb);
}

/* The peer's certificate must chain to ca_file and name the host of the
 * URL.  A CA file given replaces the system's store, CA path included:
 * a certificate any public CA signed for that name is not the etcd the
 * file speaks for. */
static CURLcode setup_tls(CURL *k, const char *ca_file)
{
	CURLcode e = curl_easy_setopt(k, CURLOPT_SSL_VERIFYPEER, 1L);

	if (!e)
		e = curl_easy_setopt(k, CURLOPT_SSL_VERIFYHOST, 2L);
	if (!e && ca_file)
		e = curl_easy_setopt(k, CURLOPT_CAINFO, ca_file);
	if (!e && ca_file)
		e = curl_easy_setopt(k, CURLOPT_CAPATH, NULL);
	return e;
}

/* Threads share the process, whose signals are the daemon's: curl must
 * not touch them (no SIGALRM to bound a lookup, no SIGPIPE handler put in
 * and taken out; its sends use MSG_NOSIGNAL).  The environment's proxy
 * is not etcd's (http_proxy is set for other traffic), a redirect is not
 * an answer, and nothing but http and https is spoken. */
static CURLcode setup(CURL *k, int timeout_ms, const char *ca_file)
{
	CURLcode e = curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);

	if (!e)
		e = curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_PROXY, "");
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)HTTP_MAX_BODY);
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_POST, 1L);
	if (!e)
		e = curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
	if (!e)
		e = setup_tls(k, ca_file);
	return e;
}

int http_conn_new(int timeout_ms, const char *ca_file, struct http_conn **out)
{
	struct http_conn *h;
	CURLcode e;

	*out = NULL;
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc)
		return -ENOMEM;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->curl = curl_easy_init();
	e = h->curl ? setup(h->curl, timeout_ms, ca_file) : CURLE_OUT_OF_MEMORY;
	if (e) {
		http_conn_free(h);
		return e == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
	}
	*out = h;
	return 0;
}

void http_conn_free(struct http_conn *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	free(h);
}

/* What a finished transfer means.  Our sink stopping it (a write error)
 * after one whole JSON value is the answer to a stream. */
static int outcome(CURLcode e, const struct http_body *b)
{
	if (b->nomem || e == CURLE_OUT_OF_MEMORY)
		return -ENOMEM;
	if (b->over)
		return -EPROTO;
	switch (e) {
	case CURLE_OK:
		return 0;
	case CURLE_WRITE_ERROR:
		return b->complete ? 0 : -EPROTO;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return -EHOSTUNREACH;
	default: /* not HTTP, cut short, over the limit */
		return -EPROTO;
	}
}

/* "Expect:" keeps curl from asking for a 100 Continue before a body over
 * 1 MiB (a large value): a round trip for nothing, as the gateway reads
 * every body, and a second's wait on a peer that does not answer it.
 * The gateway hands Authorization to etcd as the call's token. */
static struct curl_slist *headers(const char *token)
{
	struct curl_slist *l = curl_slist_append(NULL, "Content-Type: application/json");
	struct curl_slist *l2 = l ? curl_slist_append(l, "Expect:") : NULL;
	char *auth = NULL;

	if (l2 && token && *token) {
		if (asprintf(&auth, "Authorization: %s", token) < 0)
			auth = NULL;
		l2 = auth ? curl_slist_append(l2, auth) : NULL;
	}
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	if (!l2)
		curl_slist_free_all(l);
	return l2;
}

int http_post(struct http_conn *h, const char *url, const char *token, const char *body, size_t len,
	      struct http_response *r)
{
	struct http_body b = { .max = HTTP_MAX_BODY };
	struct curl_slist *hdr = headers(token);
	CURLcode e = hdr ? CURLE_OK : CURLE_OUT_OF_MEMORY;
	long status = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!e)
		e = curl_easy_setopt(h->curl, CURLOPT_URL, url);
	if (!e)
		e = curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdr);
	if (!e)
		e = curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	if (!e)
		e = curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (!e)
		e = curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &b);
	if (!e)
		e = curl_easy_perform(h->curl);
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	/* Nothing of this call may outlive it in the handle. */
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, NULL);
	curl_slist_free_all(hdr);
	rc = outcome(e, &b);
	if (rc) {
		free(b.buf);
		return rc;
	}
	r->status = (int)status;
	r->body = b.buf;
	r->body_len = b.len;
	return 0;
}
