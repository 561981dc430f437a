/* The JSON etcd's gateway is sent and answers, on known bytes: request
 * bodies exactly, answers with and without their fields, etcd's errors
 * mapped to errnos, and anything else -EPROTO. */
#include <errno.h>

#include "check.h"
#include "etcd_internal.h"

static void check_str(char *got, const char *want)
{
	CHECK(got && strcmp(got, want) == 0);
	if (got && strcmp(got, want))
		fprintf(stderr, "  got  %s\n  want %s\n", got, want);
	free(got);
}

static void request_bodies_are_known_bytes(void)
{
	check_str(etcd_body_range("/pando/map"), "{\"key\":\"L3BhbmRvL21hcA==\"}");
	check_str(etcd_body_put("/pando/osd/1", "{}", 2, 0),
		  "{\"key\":\"L3BhbmRvL29zZC8x\",\"value\":\"e30=\"}");
	check_str(etcd_body_put("k", "", 0, 2324035609875523847LL),
		  "{\"key\":\"aw==\",\"lease\":\"2324035609875523847\",\"value\":\"\"}");
	check_str(etcd_body_delete("k"), "{\"key\":\"aw==\"}");
	check_str(etcd_body_grant(5), "{\"TTL\":\"5\"}");
	check_str(etcd_body_lease(2324035609875523847LL), "{\"ID\":\"2324035609875523847\"}");
}

static void the_authenticate_body_escapes_what_json_must(void)
{
	char *b = etcd_body_authenticate("osd.1", "p\"w\\\n\x01\xc3\xa9");

	check_str(b, "{\"name\":\"osd.1\",\"password\":\"p\\\"w\\\\\\u000a\\u0001\xc3\xa9\"}");
}

/* The answer to body with status, through etcd_parse_answer. */
static int answer(int status, const char *body, json_t **out)
{
	struct http_response r = { .status = status,
				   .body = (char *)body,
				   .body_len = strlen(body) };

	return etcd_parse_answer(&r, out);
}

#define HEADER "\"header\":{\"cluster_id\":\"14841639068965178418\",\"revision\":\"7\"}"

static void a_range_answer_gives_the_value(void)
{
	json_t *a;
	char *v;
	size_t len;
	int64_t rev = 0;

	CHECK_EQ(answer(200,
			"{" HEADER ",\"kvs\":[{\"key\":\"aw==\",\"create_revision\":\"2\","
			"\"mod_revision\":\"7\",\"version\":\"3\",\"value\":\"aGVsbG8=\"}],"
			"\"count\":\"1\"}",
			&a),
		 0);
	CHECK_EQ(etcd_parse_range(a, &v, &len, &rev), 0);
	CHECK_EQ(len, 5);
	CHECK(strcmp(v, "hello") == 0);
	CHECK_EQ(rev, 7);
	free(v);
	json_decref(a);
	/* An empty value is left out of the JSON. */
	CHECK_EQ(answer(200, "{" HEADER ",\"kvs\":[{\"key\":\"aw==\",\"mod_revision\":\"9\"}]}",
			&a),
		 0);
	CHECK_EQ(etcd_parse_range(a, &v, &len, NULL), 0);
	CHECK_EQ(len, 0);
	free(v);
	json_decref(a);
	/* No key: no kvs at all. */
	CHECK_EQ(answer(200, "{" HEADER "}", &a), 0);
	CHECK_EQ(etcd_parse_range(a, &v, &len, &rev), -ENOENT);
	json_decref(a);
}

static void range_answers_without_their_fields_are_refused(void)
{
	const char *bad[] = {
		"{" HEADER ",\"kvs\":[{\"value\":\"!!!\",\"mod_revision\":\"1\"}]}",
		"{" HEADER ",\"kvs\":[{\"value\":7}]}",
		"{" HEADER ",\"kvs\":[\"x\"]}",
		"{" HEADER ",\"kvs\":[]}",
		"{" HEADER ",\"kvs\":{}}",
		"{" HEADER ",\"kvs\":[{\"value\":\"aw==\",\"mod_revision\":\"x7\"}]}",
		"{" HEADER ",\"kvs\":[{\"value\":\"aw==\",\"mod_revision\":[]}]}",
	};
	json_t *a;
	char *v = NULL;
	size_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(answer(200, bad[i], &a), 0);
		CHECK_EQ(etcd_parse_range(a, &v, &len, NULL), -EPROTO);
		json_decref(a);
	}
}

static void lease_answers(void)
{
	json_t *a;
	int64_t lease = 0, ttl = 0, n = -1;

	CHECK_EQ(answer(200, "{" HEADER ",\"ID\":\"2324035609875523847\",\"TTL\":\"5\"}", &a), 0);
	CHECK_EQ(etcd_parse_grant(a, &lease), 0);
	CHECK_EQ(lease, 2324035609875523847LL);
	json_decref(a);
	CHECK_EQ(answer(200, "{" HEADER ",\"TTL\":\"5\"}", &a), 0);
	CHECK_EQ(etcd_parse_grant(a, &lease), -EPROTO);
	json_decref(a);
	/* The keepalive stream wraps its message in "result". */
	CHECK_EQ(answer(200, "{\"result\":{" HEADER ",\"ID\":\"12\",\"TTL\":\"5\"}}", &a), 0);
	CHECK_EQ(etcd_parse_keepalive(a, &ttl), 0);
	CHECK_EQ(ttl, 5);
	json_decref(a);
	/* An expired lease: TTL 0, left out. */
	CHECK_EQ(answer(200, "{\"result\":{" HEADER ",\"ID\":\"12\"}}", &a), 0);
	CHECK_EQ(etcd_parse_keepalive(a, &ttl), -ENOENT);
	json_decref(a);
	CHECK_EQ(answer(200, "{" HEADER ",\"deleted\":\"1\"}", &a), 0);
	CHECK_EQ(etcd_parse_deleted(a), 0);
	json_decref(a);
	CHECK_EQ(answer(200, "{" HEADER "}", &a), 0);
	CHECK_EQ(etcd_parse_deleted(a), -ENOENT);
	CHECK_EQ(etcd_parse_deleted_count(a, &n), 0); /* a range that held none */
	CHECK_EQ(n, 0);
	json_decref(a);
	CHECK_EQ(answer(200, "{" HEADER ",\"deleted\":\"7\"}", &a), 0);
	CHECK_EQ(etcd_parse_deleted_count(a, &n), 0);
	CHECK_EQ(n, 7);
	json_decref(a);
	CHECK_EQ(answer(200, "{" HEADER ",\"deleted\":\"-1\"}", &a), 0);
	CHECK_EQ(etcd_parse_deleted_count(a, &n), -EPROTO);
	json_decref(a);
}

static void etcd_errors_map_to_errnos(void)
{
	json_t *a;

	CHECK_EQ(answer(404,
			"{\"error\":\"etcdserver: requested lease not found\","
			"\"message\":\"etcdserver: requested lease not found\",\"code\":5}",
			&a),
		 -ENOENT);
	CHECK_EQ(answer(400, "{\"error\":\"bad\",\"code\":3}", &a), -EINVAL);
	CHECK_EQ(answer(503, "{\"error\":\"etcdserver: no leader\",\"code\":14}", &a), -EAGAIN);
	CHECK_EQ(answer(200,
			"{\"error\":{\"grpc_code\":5,\"http_code\":404,\"code\":5,"
			"\"message\":\"lease not found\"}}",
			&a),
		 -ENOENT);
	CHECK_EQ(answer(500, "{\"error\":\"?\",\"code\":13}", &a), -EPROTO);
	CHECK_EQ(answer(500, "{}", &a), -EPROTO);
	CHECK(a == NULL);
}

/* etcd 3.4's words for what its codes do not tell apart (rpctypes). */
static void auth_errors_map_to_eacces_or_a_new_token(void)
{
	json_t *a;

	CHECK_EQ(answer(403,
			"{\"error\":\"etcdserver: permission denied\",\"code\":7,"
			"\"message\":\"etcdserver: permission denied\"}",
			&a),
		 -EACCES);
	CHECK_EQ(answer(400,
			"{\"error\":\"etcdserver: authentication failed, invalid user ID "
			"or password\",\"code\":3}",
			&a),
		 -EACCES);
	/* Worth one new token: it expired or its member restarted, none was
	 * sent, or roles changed since it was given. */
	CHECK_EQ(answer(401, "{\"error\":\"etcdserver: invalid auth token\",\"code\":16}", &a),
		 ETCD_EREAUTH);
	CHECK_EQ(answer(400,
			"{\"error\":\"etcdserver: user name is empty\",\"code\":3,"
			"\"message\":\"etcdserver: user name is empty\"}",
			&a),
		 ETCD_EREAUTH);
	CHECK_EQ(answer(400,
			"{\"message\":\"etcdserver: revision of auth store is old\","
			"\"code\":3}",
			&a),
		 ETCD_EREAUTH);
	/* The keepalive stream wraps the same in "error". */
	CHECK_EQ(answer(200,
			"{\"error\":{\"grpc_code\":7,\"http_code\":403,\"code\":7,"
			"\"message\":\"etcdserver: permission denied\"}}",
			&a),
		 -EACCES);
	CHECK_EQ(answer(200,
			"{\"error\":{\"grpc_code\":16,\"http_code\":401,\"code\":16,"
			"\"message\":\"etcdserver: invalid auth token\"}}",
			&a),
		 ETCD_EREAUTH);
	/* Another invalid argument is still one. */
	CHECK_EQ(answer(400, "{\"error\":\"etcdserver: key is not provided\",\"code\":3}", &a),
		 -EINVAL);
	CHECK(a == NULL);
}

/* A token goes into a header: nothing that could end or split it. */
static void tokens_are_printable_and_whole(void)
{
	const char *bad[] = { "{" HEADER "}",
			      "{" HEADER ",\"token\":\"\"}",
			      "{" HEADER ",\"token\":7}",
			      "{" HEADER ",\"token\":\"a b\"}",
			      "{" HEADER ",\"token\":\"a\\r\\nX-Evil: 1\"}",
			      "{" HEADER ",\"token\":\"caf\\u00e9\"}" };
	char *token = NULL;
	json_t *a;

	CHECK_EQ(answer(200, "{" HEADER ",\"token\":\"KGvRkmrlGZkKkoVj.42\"}", &a), 0);
	CHECK_EQ(etcd_parse_token(a, &token), 0);
	check_str(token, "KGvRkmrlGZkKkoVj.42");
	json_decref(a);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(answer(200, bad[i], &a), 0);
		CHECK_EQ(etcd_parse_token(a, &token), -EPROTO);
		json_decref(a);
	}
	/* Authentication off: no token to get, every call goes without. */
	CHECK_EQ(answer(412,
			"{\"error\":\"etcdserver: authentication is not enabled\","
			"\"code\":9}",
			&a),
		 ETCD_ENOAUTH);
	CHECK_EQ(answer(412, "{\"error\":\"etcdserver: role name not found\",\"code\":9}", &a),
		 -EPROTO);
}

static void answers_that_are_not_etcd_are_refused(void)
{
	const char *bad[] = { "",
			      "hello",
			      "[1,2]",
			      "\"str\"",
			      "{}",
			      "{\"header\":1}",
			      "{\"result\":7}",
			      "{\"kvs\":[]}",
			      "{" HEADER "} trailing" };
	json_t *a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(answer(200, bad[i], &a), -EPROTO);
		CHECK(a == NULL);
	}
}

static void int64_fields(void)
{
	json_t *o = json_loads(
		"{\"s\":\"-42\",\"n\":7,\"bad\":\"12a\",\"big\":\"99999999999999999999\","
		"\"f\":1.5,\"e\":\"\"}",
		0, NULL);
	int64_t v;

	CHECK_EQ(etcd_json_int64(o, "s", &v), 0);
	CHECK_EQ(v, -42);
	CHECK_EQ(etcd_json_int64(o, "n", &v), 0);
	CHECK_EQ(v, 7);
	CHECK_EQ(etcd_json_int64(o, "absent", &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(etcd_json_int64(o, "bad", &v), -EPROTO);
	CHECK_EQ(etcd_json_int64(o, "big", &v), -EPROTO);
	CHECK_EQ(etcd_json_int64(o, "f", &v), -EPROTO);
	CHECK_EQ(etcd_json_int64(o, "e", &v), -EPROTO);
	json_decref(o);
}

static void prefix_ranges_end_past_the_last_key_with_the_prefix(void)
{
	/* "/pando/rebuild/tasks/" ends at "/pando/rebuild/tasks0" ('/' + 1) */
	check_str(
		etcd_body_range_prefix("/pando/rebuild/tasks/", 0),
		"{\"key\":\"L3BhbmRvL3JlYnVpbGQvdGFza3Mv\",\"range_end\":\"L3BhbmRvL3JlYnVpbGQvdGFza3Mw\"}");
	check_str(etcd_body_range_prefix("a", 64),
		  "{\"key\":\"YQ==\",\"limit\":\"64\",\"range_end\":\"Yg==\"}");
	/* trailing 0xff bytes are dropped before the increment */
	check_str(etcd_body_range_prefix("a\xff", 0), "{\"key\":\"Yf8=\",\"range_end\":\"Yg==\"}");
	/* a range deleted: [key, end) as given */
	check_str(etcd_body_delete_range("a", "b"), "{\"key\":\"YQ==\",\"range_end\":\"Yg==\"}");
}

static void a_create_is_a_txn_on_create_revision_zero(void)
{
	check_str(etcd_body_create("k", "v", 1, 7),
		  "{\"compare\":[{\"create_revision\":\"0\",\"key\":\"aw==\",\"result\":\"EQUAL\","
		  "\"target\":\"CREATE\"}],\"success\":[{\"request_put\":{\"key\":\"aw==\","
		  "\"lease\":\"7\",\"value\":\"dg==\"}}]}");
}

static void a_delete_if_is_a_txn_on_the_mod_revision(void)
{
	check_str(etcd_body_delete_if("k", 42),
		  "{\"compare\":[{\"key\":\"aw==\",\"mod_revision\":\"42\",\"result\":\"EQUAL\","
		  "\"target\":\"MOD\"}],\"success\":[{\"request_delete_range\":{\"key\":"
		  "\"aw==\"}}]}");
}

static void a_put_if_is_a_txn_on_the_mod_revision(void)
{
	check_str(etcd_body_put_if("k", "v", 1, 42),
		  "{\"compare\":[{\"key\":\"aw==\",\"mod_revision\":\"42\",\"result\":\"EQUAL\","
		  "\"target\":\"MOD\"}],\"success\":[{\"request_put\":{\"key\":\"aw==\","
		  "\"value\":\"dg==\"}}]}");
}

static void txn_answers_say_whether_the_compare_held(void)
{
	json_t *a;

	CHECK(answer(200, "{" HEADER ",\"succeeded\":true,\"responses\":[{}]}", &a) == 0);
	CHECK(etcd_parse_txn(a) == 0);
	json_decref(a);
	CHECK(answer(200, "{" HEADER "}", &a) == 0);
	CHECK(etcd_parse_txn(a) == -EEXIST);
	json_decref(a);
	CHECK(answer(200, "{" HEADER ",\"succeeded\":\"yes\"}", &a) == 0);
	CHECK(etcd_parse_txn(a) == -EPROTO);
	json_decref(a);
}

struct seen {
	int n;
	char keys[4][32];
	char values[4][32];
	int64_t rev[4];
};

static int collect(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct seen *s = arg;

	s->rev[s->n & 3] = rev;

	if (s->n >= 4)
		return 1;
	snprintf(s->keys[s->n], 32, "%s", key);
	snprintf(s->values[s->n], 32, "%.*s", (int)len, value);
	s->n++;
	return 0;
}

static void range_answers_list_every_key_in_order(void)
{
	struct seen s = { 0 };
	json_t *a;

	CHECK(answer(200,
		     "{" HEADER ",\"kvs\":[{\"key\":\"YQ==\",\"value\":\"MQ==\","
		     "\"mod_revision\":\"5\"},{\"key\":\"Yg==\",\"value\":\"Mg==\","
		     "\"mod_revision\":\"7\"}],\"count\":\"2\"}",
		     &a) == 0);
	CHECK(etcd_parse_kvs(a, collect, &s) == 0);
	CHECK(s.n == 2 && !strcmp(s.keys[0], "a") && !strcmp(s.values[1], "2"));
	CHECK(s.rev[0] == 5 && s.rev[1] == 7);
	json_decref(a);
	s.n = 0;
	CHECK(answer(200, "{" HEADER "}", &a) == 0); /* nothing: kvs left out */
	CHECK(etcd_parse_kvs(a, collect, &s) == 0 && s.n == 0);
	json_decref(a);
	CHECK(answer(200, "{" HEADER ",\"kvs\":{}}", &a) == 0);
	CHECK(etcd_parse_kvs(a, collect, &s) == -EPROTO);
	json_decref(a);
	CHECK(answer(200, "{" HEADER ",\"kvs\":[{\"key\":\"!!\",\"value\":\"\"}]}", &a) == 0);
	CHECK(etcd_parse_kvs(a, collect, &s) == -EPROTO);
	json_decref(a);
}

int main(void)
{
	request_bodies_are_known_bytes();
	a_range_answer_gives_the_value();
	range_answers_without_their_fields_are_refused();
	lease_answers();
	etcd_errors_map_to_errnos();
	auth_errors_map_to_eacces_or_a_new_token();
	the_authenticate_body_escapes_what_json_must();
	tokens_are_printable_and_whole();
	answers_that_are_not_etcd_are_refused();
	int64_fields();
	prefix_ranges_end_past_the_last_key_with_the_prefix();
	a_create_is_a_txn_on_create_revision_zero();
	txn_answers_say_whether_the_compare_held();
	a_delete_if_is_a_txn_on_the_mod_revision();
	a_put_if_is_a_txn_on_the_mod_revision();
	range_answers_list_every_key_in_order();
	CHECK_DONE();
}
