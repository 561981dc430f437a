/* The JSON of etcd's gateway: request bodies and the fields of answers.
 * No I/O here, so the unit tests can feed it known bytes. */
#include "etcd_internal.h"
#include "etcd_base64.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *b64_string(const void *p, size_t n)
{
	char *s = malloc(base64_encoded_len(n) + 1);
	json_t *j;

	if (!s)
		return NULL;
	base64_encode(p, n, s);
	j = json_string(s);
	free(s);
	return j;
}

/* int64 fields go as strings, as the gateway itself writes them. */
static json_t *int64_string(int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return json_string(buf);
}

static char *dump(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(o);
	return s;
}

char *etcd_body_range(const char *key)
{
	return dump(json_pack("{s:o}", "key", b64_string(key, strlen(key))));
}

static json_t *put_request(const char *key, const void *value, size_t len, int64_t lease)
{
	json_t *o = json_pack("{s:o,s:o}", "key", b64_string(key, strlen(key)), "value",
			      b64_string(value, len));

	if (o && lease && json_object_set_new(o, "lease", int64_string(lease))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *etcd_body_put(const char *key, const void *value, size_t len, int64_t lease)
{
	return dump(put_request(key, value, len, lease));
}

char *etcd_body_delete(const char *key)
{
	return etcd_body_range(key);
}

char *etcd_body_delete_range(const char *key, const char *end)
{
	return dump(json_pack("{s:o,s:o}", "key", b64_string(key, strlen(key)), "range_end",
			      b64_string(end, strlen(end))));
}

/* The end of the range of every key that starts with prefix: the prefix
 * with its last byte below 0xff raised by one ("\0": to the end of the
 * keyspace, when every byte is 0xff). */
static json_t *prefix_end(const char *prefix)
{
	size_t n = strlen(prefix);
	char *end = malloc(n + 1);
	json_t *j;

	if (!end)
		return NULL;
	memcpy(end, prefix, n + 1);
	while (n > 0 && (unsigned char)end[n - 1] == 0xff)
		n--;
	if (n == 0) {
		free(end);
		return b64_string("", 1);
	}
	end[n - 1]++;
	j = b64_string(end, n);
	free(end);
	return j;
}

char *etcd_body_range_prefix(const char *prefix, int64_t limit)
{
	json_t *o = json_pack("{s:o,s:o}", "key", b64_string(prefix, strlen(prefix)), "range_end",
			      prefix_end(prefix));

	if (o && limit > 0 && json_object_set_new(o, "limit", int64_string(limit))) {
		json_decref(o);
		return NULL;
	}
	return dump(o);
}

char *etcd_body_grant(int ttl_s)
{
	return dump(json_pack("{s:o}", "TTL", int64_string(ttl_s)));
}

char *etcd_body_lease(int64_t lease)
{
	return dump(json_pack("{s:o}", "ID", int64_string(lease)));
}

/* s as a JSON string at out, which holds 6 * strlen(s) + 3 bytes; its
 * length.  By hand rather than through jansson, so that the password is
 * copied nowhere but into the body its caller zeroes, and no byte of it
 * (invalid UTF-8 included: etcd then refuses the password) fails it. */
static size_t json_quote(const char *s, char *out)
{
	size_t o = 0;

	out[o++] = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			out[o++] = '\\';
			out[o++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)sprintf(out + o, "\\u%04x", ch);
		} else {
			out[o++] = (char)ch;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
	return o;
}

char *etcd_body_authenticate(const char *user, const char *password)
{
	char *b = malloc(6 * (strlen(user) + strlen(password)) + 32);
	size_t o;

	if (!b)
		return NULL;
	o = (size_t)sprintf(b, "{\"name\":");
	o += json_quote(user, b + o);
	o += (size_t)sprintf(b + o, ",\"password\":");
	o += json_quote(password, b + o);
	strcpy(b + o, "}");
	return b;
}

int etcd_json_int64(const json_t *obj, const char *name, int64_t *out)
{
	const json_t *v = json_object_get(obj, name);
	const char *s;
	char *end;
	long long x;

	*out = 0;
	if (!v)
		return 0;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return -EPROTO;
	s = json_string_value(v);
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -EPROTO;
	*out = x;
	return 0;
}

/* gRPC status codes the gateway passes on (google.golang.org/grpc/codes). */
enum {
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_UNAVAILABLE = 14,
	GRPC_UNAUTHENTICATED = 16
};

/* etcd's message: "message", or "error" when that is the text. */
static const char *error_message(const json_t *err)
{
	const char *m = json_string_value(json_object_get(err, "message"));

	if (!m)
		m = json_string_value(json_object_get(err, "error"));
	return m ? m : "";
}

/* Invalid argument covers some of authentication's refusals: etcd 3.4
 * tells them apart by their words only (api/v3rpc/rpctypes/error.go). */
static int invalid_argument(const char *msg)
{
	if (strstr(msg, "authentication failed"))
		return -EACCES;
	if (strstr(msg, "user name is empty") || strstr(msg, "revision of auth store is old"))
		return ETCD_EREAUTH;
	return -EINVAL;
}

static int error_code(const json_t *err)
{
	int64_t code;

	if (!json_is_object(err) || etcd_json_int64(err, "code", &code) || !code)
		return -EPROTO;
	switch (code) {
	case GRPC_NOT_FOUND:
		return -ENOENT;
	case GRPC_INVALID_ARGUMENT:
		return invalid_argument(error_message(err));
	case GRPC_PERMISSION_DENIED:
		return -EACCES;
	case GRPC_FAILED_PRECONDITION:
		return strstr(error_message(err), "authentication is not enabled") ? ETCD_ENOAUTH
										   : -EPROTO;
	case GRPC_UNAUTHENTICATED:
		return ETCD_EREAUTH;
	case GRPC_DEADLINE_EXCEEDED:
	case GRPC_UNAVAILABLE:
		return -EAGAIN;
	default:
		return -EPROTO;
	}
}

int etcd_parse_answer(const struct http_response *r, json_t **out)
{
	json_t *o = json_loadb(r->body ? r->body : "", r->body_len, 0, NULL);
	json_t *res;
	int rc;

	*out = NULL;
	if (!json_is_object(o)) {
		json_decref(o);
		return -EPROTO;
	}
	/* A streamed answer (keepalive) wraps each message in "result" or
	 * "error"; a unary one is the message, or an error with "code". */
	res = json_object_get(o, "result");
	if (r->status != 200 || json_object_get(o, "error")) {
		const json_t *err = json_object_get(o, "error");
		rc = error_code(json_is_object(err) ? err : o);
		json_decref(o);
		return rc;
	}
	if (res) {
		json_incref(res);
		json_decref(o);
		o = res;
	}
	if (!json_is_object(o) || !json_is_object(json_object_get(o, "header"))) {
		json_decref(o);
		return -EPROTO; /* every etcd answer has a header */
	}
	*out = o;
	return 0;
}

static int decode_b64(const json_t *v, char **out, size_t *len)
{
	const char *s = v ? json_string_value(v) : "";
	size_t n, got;
	char *buf;
	int rc;

	if (!s)
		return -EPROTO;
	n = strlen(s);
	buf = malloc(n / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	rc = base64_decode(s, n, buf, &got);
	if (rc) {
		free(buf);
		return -EPROTO;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

int etcd_parse_range(const json_t *ans, char **value, size_t *len, int64_t *mod_revision)
{
	const json_t *kvs = json_object_get(ans, "kvs"), *kv;
	int64_t rev;
	size_t n;
	int rc;

	if (!kvs)
		return -ENOENT; /* an empty list is left out */
	kv = json_array_get(kvs, 0);
	if (!json_is_object(kv) || etcd_json_int64(kv, "mod_revision", &rev))
		return -EPROTO;
	rc = decode_b64(json_object_get(kv, "value"), value, len ? len : &n);
	if (rc == 0 && mod_revision)
		*mod_revision = rev;
	return rc;
}

int etcd_parse_grant(const json_t *ans, int64_t *lease)
{
	int64_t ttl;

	if (etcd_json_int64(ans, "ID", lease) || etcd_json_int64(ans, "TTL", &ttl))
		return -EPROTO;
	return *lease && ttl > 0 ? 0 : -EPROTO;
}

int etcd_parse_keepalive(const json_t *ans, int64_t *ttl_left)
{
	int64_t ttl, id;

	if (etcd_json_int64(ans, "ID", &id) || etcd_json_int64(ans, "TTL", &ttl))
		return -EPROTO;
	if (ttl_left)
		*ttl_left = ttl;
	return ttl > 0 ? 0 : -ENOENT; /* TTL 0 (left out): the lease expired */
}

int etcd_parse_deleted(const json_t *ans)
{
	int64_t deleted;

	if (etcd_json_int64(ans, "deleted", &deleted))
		return -EPROTO;
	return deleted > 0 ? 0 : -ENOENT;
}

int etcd_parse_deleted_count(const json_t *ans, int64_t *deleted)
{
	return etcd_json_int64(ans, "deleted", deleted) || *deleted < 0 ? -EPROTO : 0;
}

/* A txn that puts key only if it does not exist (its create_revision is
 * 0: etcd's idiom for "absent"). */
char *etcd_body_create(const char *key, const void *value, size_t len, int64_t lease)
{
	json_t *put = put_request(key, value, len, lease);

	if (!put)
		return NULL;
	return dump(json_pack("{s:[{s:o,s:s,s:s,s:s}],s:[{s:o}]}", "compare", "key",
			      b64_string(key, strlen(key)), "target", "CREATE", "result", "EQUAL",
			      "create_revision", "0", "success", "request_put", put));
}

/* A txn that deletes key only if its mod_revision is still rev. */
char *etcd_body_delete_if(const char *key, int64_t rev)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, rev);
	return dump(json_pack("{s:[{s:o,s:s,s:s,s:s}],s:[{s:{s:o}}]}", "compare", "key",
			      b64_string(key, strlen(key)), "target", "MOD", "result", "EQUAL",
			      "mod_revision", buf, "success", "request_delete_range", "key",
			      b64_string(key, strlen(key))));
}

/* A txn that puts key only if its mod_revision is still rev (a key gone
 * has none, 0, so it fails too). */
char *etcd_body_put_if(const char *key, const void *value, size_t len, int64_t rev)
{
	json_t *put = put_request(key, value, len, 0);
	char buf[24];

	if (!put)
		return NULL;
	snprintf(buf, sizeof(buf), "%" PRId64, rev);
	return dump(json_pack("{s:[{s:o,s:s,s:s,s:s}],s:[{s:o}]}", "compare", "key",
			      b64_string(key, strlen(key)), "target", "MOD", "result", "EQUAL",
			      "mod_revision", buf, "success", "request_put", put));
}

int etcd_parse_token(const json_t *ans, char **token)
{
	const char *t = json_string_value(json_object_get(ans, "token"));
	size_t n = t ? strlen(t) : 0;

	/* Simple tokens and JWTs alike are printable ASCII, no spaces. */
	if (n == 0 || n > 4096)
		return -EPROTO;
	for (size_t i = 0; i < n; i++)
		if (t[i] <= ' ' || t[i] > '~')
			return -EPROTO;
	*token = strdup(t);
	return *token ? 0 : -ENOMEM;
}

/* "succeeded" is left out when false (proto3 zero value). */
int etcd_parse_txn(const json_t *ans)
{
	const json_t *ok = json_object_get(ans, "succeeded");

	if (ok && !json_is_boolean(ok))
		return -EPROTO;
	return ok && json_is_true(ok) ? 0 : -EEXIST;
}

int etcd_parse_kvs(const json_t *ans, etcd_kv_fn fn, void *arg)
{
	const json_t *kvs = json_object_get(ans, "kvs");
	size_t i;
	json_t *kv;

	if (kvs && !json_is_array(kvs))
		return -EPROTO;
	json_array_foreach(kvs, i, kv)
	{
		char *key = NULL, *value = NULL;
		size_t klen, vlen;
		int64_t rev = 0;
		int rc = json_is_object(kv) ? 0 : -EPROTO;

		if (!rc)
			rc = decode_b64(json_object_get(kv, "key"), &key, &klen);
		if (!rc)
			rc = decode_b64(json_object_get(kv, "value"), &value, &vlen);
		if (!rc)
			rc = etcd_json_int64(kv, "mod_revision", &rev);
		if (!rc)
			rc = fn(arg, key, value, vlen, rev);
		free(key);
		free(value);
		if (rc)
			return rc;
	}
	return 0;
}
