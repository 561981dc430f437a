/* The calls of etcd_client.h: each posts one JSON body to the gateway,
 * trying the endpoints in turn from the one that answered last. */
#include "etcd_internal.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct etcd_endpoint {
	char url[300]; /* "https://HOST:PORT", as given */
};

struct etcd_client {
	pthread_mutex_t lock;
	struct http_conn *http;
	struct etcd_auth auth;
	int n;
	int last; /* the endpoint that answered last */
	struct etcd_endpoint ep[];
};

/* A host that curl reads as a host and nothing else: a name, an IPv4
 * address, or an IPv6 one in brackets; no user@, ?, # or %. */
static int host_ok(const char *h, size_t n)
{
	int v6 = n > 2 && h[0] == '[' && h[n - 1] == ']';

	if (v6) {
		h++;
		n -= 2;
	}
	if (n == 0 || n > 255)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)h[i];
		if (v6 ? !isxdigit(c) && c != ':' && c != '.'
		       : !isalnum(c) && c != '.' && c != '-' && c != '_')
			return 0;
	}
	return 1;
}

/* "https://HOST:PORT", "http://HOST:PORT" or "HOST:PORT" (http), maybe
 * with a trailing slash; no path. */
static int parse_endpoint(const char *s, size_t n, struct etcd_endpoint *e)
{
	const char *colon, *end = s + n, *scheme = "http";
	char *pend;
	long port;

	if (n >= 8 && !strncmp(s, "https://", 8)) {
		scheme = "https";
		s += 8;
	} else if (n >= 7 && !strncmp(s, "http://", 7)) {
		s += 7;
	} else if (memchr(s, '/', n)) {
		return -EINVAL; /* another scheme */
	}
	if (end > s && end[-1] == '/')
		end--;
	colon = memrchr(s, ':', (size_t)(end - s));
	if (!colon || !host_ok(s, (size_t)(colon - s)) || !isdigit((unsigned char)colon[1]) ||
	    end - colon > 6)
		return -EINVAL;
	port = strtol(colon + 1, &pend, 10);
	if (pend != end || port <= 0 || port > 65535)
		return -EINVAL;
	snprintf(e->url, sizeof(e->url), "%s://%.*s", scheme, (int)(end - s), s);
	return 0;
}

static int parse_endpoints(struct etcd_client *c, const char *endpoints, int n)
{
	const char *p = endpoints;

	while (c->n < n) {
		size_t len = strcspn(p, ",");
		int rc = parse_endpoint(p, len, &c->ep[c->n++]);
		if (rc)
			return rc;
		p += len + 1;
	}
	return 0;
}

int etcd_client_new(const struct etcd_options *opt, struct etcd_client **out)
{
	const char *ca = opt->ca_file && *opt->ca_file ? opt->ca_file : NULL;
	struct etcd_client *c;
	int n = 1, rc;

	*out = NULL;
	if (!opt->endpoints || !*opt->endpoints)
		return -EINVAL;
	/* Not read here, but a CA file that is not there is a mistake worth
	 * saying at start rather than as a failed handshake at each call. */
	if (ca && access(ca, R_OK))
		return -errno;
	for (const char *p = opt->endpoints; *p; p++)
		n += *p == ',';
	c = calloc(1, sizeof(*c) + (size_t)n * sizeof(c->ep[0]));
	if (!c)
		return -ENOMEM;
	rc = parse_endpoints(c, opt->endpoints, n);
	if (!rc)
		rc = etcd_auth_init(&c->auth, opt->user, opt->password_file);
	if (!rc)
		rc = http_conn_new(opt->timeout_ms > 0 ? opt->timeout_ms : 2000, ca, &c->http);
	if (rc) {
		etcd_auth_free(&c->auth);
		free(c);
		return rc;
	}
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void etcd_client_free(struct etcd_client *c)
{
	if (!c)
		return;
	http_conn_free(c->http);
	etcd_auth_free(&c->auth);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *etcd_client_endpoint(const struct etcd_client *c)
{
	return c->ep[c->last].url;
}

const char *etcd_strerror(int err)
{
	switch (err) {
	case -EHOSTUNREACH:
		return "no endpoint answered";
	case -EPROTO:
		return "the endpoint does not answer as etcd, or its TLS certificate is not "
		       "trusted";
	case -EACCES:
		return "etcd refused it (permission denied, or credentials)";
	case -EINVAL:
		return "not a list of [http[s]://]HOST:PORT endpoints";
	case -EPERM:
		return "the password file must be a regular file (no symlink) owned by this user "
		       "that group and others cannot read or write: mode 0600 or stricter";
	case -EBADMSG:
		return "the password file is empty, or more than one line";
	default:
		return strerror(-err);
	}
}

/* One exchange with endpoint i: 0 with the answer, -ENOENT/-EINVAL/
 * -EACCES/ETCD_EREAUTH/ETCD_ENOAUTH (etcd said so), -EHOSTUNREACH/-EAGAIN
 * (try the next), -EPROTO, -ENOMEM. */
static int exchange(struct etcd_client *c, int i, const char *path, const char *body, json_t **ans)
{
	struct http_response r;
	char url[sizeof(c->ep[i].url) + 32];
	int rc;

	snprintf(url, sizeof(url), "%s%s", c->ep[i].url, path);
	rc = http_post(c->http, url, c->auth.token, body, strlen(body), &r);
	if (rc)
		return rc;
	rc = etcd_parse_answer(&r, ans);
	http_response_free(&r);
	return rc;
}

/* A new token from endpoint i: -EACCES when etcd refuses the password.
 * Simple tokens hold cluster-wide: any member's does for every member. */
static int authenticate(struct etcd_client *c, int i)
{
	char *body = etcd_body_authenticate(c->auth.user, c->auth.password);
	char *token = NULL;
	json_t *ans = NULL;
	int rc;

	if (!body)
		return -ENOMEM;
	etcd_auth_set_token(&c->auth, NULL);
	rc = exchange(c, i, "/v3/auth/authenticate", body, &ans);
	explicit_bzero(body, strlen(body));
	free(body);
	if (rc == ETCD_ENOAUTH) /* every call goes without a token */
		rc = (token = strdup("")) ? 0 : -ENOMEM;
	else if (rc == 0)
		rc = etcd_parse_token(ans, &token);
	json_decref(ans);
	etcd_auth_set_token(&c->auth, token);
	return rc;
}

/* One call to endpoint i, with a token when there is a user: got on the
 * first call, and once more when etcd no longer takes it (expired, or
 * forgotten by a member that restarted), the call then tried again once. */
static int call_one(struct etcd_client *c, int i, const char *path, const char *body, json_t **ans)
{
	int rc = c->auth.user && !c->auth.token ? authenticate(c, i) : 0;

	if (rc == 0)
		rc = exchange(c, i, path, body, ans);
	if (rc == ETCD_EREAUTH && c->auth.user) {
		rc = authenticate(c, i);
		if (rc == 0)
			rc = exchange(c, i, path, body, ans);
	}
	return rc;
}

/* Posts body (freed here) to each endpoint until one answers as etcd. */
static int call(struct etcd_client *c, const char *path, char *body, json_t **ans)
{
	int rc = -EHOSTUNREACH, proto = 0;

	*ans = NULL;
	if (!body)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	for (int k = 0; k < c->n; k++) {
		int i = (c->last + k) % c->n;
		rc = call_one(c, i, path, body, ans);
		if (rc != -EHOSTUNREACH && rc != -EAGAIN && rc != -EPROTO) {
			c->last = i;
			break;
		}
		proto |= rc == -EPROTO;
	}
	pthread_mutex_unlock(&c->lock);
	free(body);
	if (rc == -EAGAIN || rc == -EHOSTUNREACH || rc == -EPROTO)
		rc = proto ? -EPROTO : -EHOSTUNREACH;
	/* No credentials of ours would change etcd's mind. */
	if (rc == ETCD_EREAUTH)
		rc = -EACCES;
	if (rc == ETCD_ENOAUTH) /* not an answer to this call */
		rc = -EPROTO;
	return rc;
}

int etcd_get(struct etcd_client *c, const char *key, char **value, size_t *len,
	     int64_t *mod_revision)
{
	json_t *ans;
	int rc = call(c, "/v3/kv/range", etcd_body_range(key), &ans);

	if (rc == 0)
		rc = etcd_parse_range(ans, value, len, mod_revision);
	json_decref(ans);
	return rc;
}

int etcd_put(struct etcd_client *c, const char *key, const void *value, size_t len, int64_t lease)
{
	json_t *ans;
	int rc = call(c, "/v3/kv/put", etcd_body_put(key, value, len, lease), &ans);

	json_decref(ans);
	return rc;
}

int etcd_delete(struct etcd_client *c, const char *key)
{
	json_t *ans;
	int rc = call(c, "/v3/kv/deleterange", etcd_body_delete(key), &ans);

	if (rc == 0)
		rc = etcd_parse_deleted(ans);
	json_decref(ans);
	return rc;
}

int etcd_delete_range(struct etcd_client *c, const char *key, const char *end, int64_t *deleted)
{
	json_t *ans;
	int64_t n = 0;
	int rc = call(c, "/v3/kv/deleterange", etcd_body_delete_range(key, end), &ans);

	if (rc == 0)
		rc = etcd_parse_deleted_count(ans, &n);
	if (deleted)
		*deleted = rc ? 0 : n;
	json_decref(ans);
	return rc;
}

int etcd_list(struct etcd_client *c, const char *prefix, int64_t limit, etcd_kv_fn fn, void *arg,
	      int64_t *count)
{
	json_t *ans;
	int rc = call(c, "/v3/kv/range", etcd_body_range_prefix(prefix, limit), &ans);

	if (rc == 0 && count)
		rc = etcd_json_int64(ans, "count", count);
	if (rc == 0)
		rc = etcd_parse_kvs(ans, fn, arg);
	json_decref(ans);
	return rc;
}

/* A txn (body, which call frees): 0 when its compare held, -EEXIST when
 * not, -EPROTO for an answer that says neither, or the call's error. */
static int txn(struct etcd_client *c, char *body)
{
	json_t *ans;
	int rc = call(c, "/v3/kv/txn", body, &ans);

	if (rc == 0)
		rc = etcd_parse_txn(ans);
	json_decref(ans);
	return rc;
}

int etcd_create(struct etcd_client *c, const char *key, const void *value, size_t len,
		int64_t lease)
{
	return txn(c, etcd_body_create(key, value, len, lease));
}

int etcd_delete_if(struct etcd_client *c, const char *key, int64_t mod_revision)
{
	return txn(c, etcd_body_delete_if(key, mod_revision));
}

int etcd_put_if(struct etcd_client *c, const char *key, const void *value, size_t len,
		int64_t mod_revision)
{
	return txn(c, etcd_body_put_if(key, value, len, mod_revision));
}

int etcd_lease_grant(struct etcd_client *c, int ttl_s, int64_t *lease)
{
	json_t *ans;
	int rc = call(c, "/v3/lease/grant", etcd_body_grant(ttl_s), &ans);

	if (rc == 0)
		rc = etcd_parse_grant(ans, lease);
	json_decref(ans);
	return rc;
}

int etcd_lease_keepalive(struct etcd_client *c, int64_t lease, int64_t *ttl_left)
{
	json_t *ans;
	int rc = call(c, "/v3/lease/keepalive", etcd_body_lease(lease), &ans);

	if (rc == 0)
		rc = etcd_parse_keepalive(ans, ttl_left);
	json_decref(ans);
	return rc;
}

int etcd_lease_revoke(struct etcd_client *c, int64_t lease)
{
	json_t *ans;
	int rc = call(c, "/v3/lease/revoke", etcd_body_lease(lease), &ans);

	json_decref(ans);
	return rc;
}

int etcd_lease_keep(struct etcd_client *c, int ttl_s, int64_t *lease)
{
	int rc = *lease ? etcd_lease_keepalive(c, *lease, NULL) : -ENOENT;

	if (rc != -ENOENT)
		return rc;
	*lease = 0;
	return etcd_lease_grant(c, ttl_s, lease);
}
