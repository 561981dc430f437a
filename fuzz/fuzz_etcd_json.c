/* What the etcd client reads out of an answer's JSON (common/etcd/
 * etcd_json.c): the error or result wrapper, then every field reader
 * (range, grant, keepalive, delete, txn, the key-value list, the token
 * of an authenticate answer) on the same answer, and the base64 of keys and values (base64.c), whose canonical
 * form must re-encode to the same text.  The first two bytes are the
 * HTTP status, the rest the body. */
#include <string.h>

#include "etcd_base64.h"
#include "etcd_internal.h"
#include "fuzz.h"

static int count_kv(void *arg, const char *key, const char *value, size_t len, int64_t mod_revision)
{
	fuzz_check(key && value && value[len] == '\0', "a key or value without its NUL");
	++*(int *)arg;
	return 0;
}

/* A token goes into a header: printable, no space, nothing to end it. */
static void read_token(const json_t *ans)
{
	char *token = NULL;

	if (etcd_parse_token(ans, &token) == 0) {
		for (const char *p = token; *p; p++)
			fuzz_check(*p > ' ' && *p <= '~', "a token that cannot go in a header");
		fuzz_check(*token, "an empty token");
	}
	free(token);
}

static void read_fields(const json_t *ans)
{
	char *value = NULL;
	size_t len;
	int64_t n;
	int kvs = 0;

	if (etcd_parse_range(ans, &value, &len, &n) == 0)
		fuzz_check(value[len] == '\0', "a range value without its NUL");
	free(value);
	etcd_parse_grant(ans, &n);
	etcd_parse_keepalive(ans, &n);
	etcd_parse_deleted(ans);
	if (etcd_parse_deleted_count(ans, &n) == 0)
		fuzz_check(n >= 0, "a negative count of deleted keys");
	etcd_parse_txn(ans);
	etcd_parse_kvs(ans, count_kv, &kvs);
	read_token(ans);
}

static void base64_round_trip(const char *s, size_t n)
{
	char *bin = malloc(n / 4 * 3 + 1), *text;
	size_t got;

	if (base64_decode(s, n, bin, &got) == 0) {
		text = malloc(base64_encoded_len(got) + 1);
		fuzz_check(base64_encode(bin, got, text) == n && !memcmp(text, s, n),
			   "base64 re-encodes to other text");
		free(text);
	}
	free(bin);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_response r;
	json_t *ans;

	if (size < 2)
		return 0;
	r.status = data[0] << 8 | data[1];
	r.body_len = size - 2;
	r.body = malloc(r.body_len + 1);
	memcpy(r.body, data + 2, r.body_len);
	r.body[r.body_len] = '\0';
	if (etcd_parse_answer(&r, &ans) == 0) {
		read_fields(ans);
		json_decref(ans);
	}
	base64_round_trip(r.body, r.body_len);
	http_response_free(&r);
	return 0;
}
