/* Reclaim records in etcd (reclaim.h). */
#include "reclaim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd_client.h"

#define PREFIX_MAX 255
#define KEY_MAX (PREFIX_MAX + 34)

struct pando_reclaim {
	struct etcd_client *etcd;
	pthread_mutex_t lock; /* a revoke's read and write of one record */
	uint64_t term;
	char prefix[PREFIX_MAX + 1];
};

/* One record read: its term and its parsed value. */
struct record {
	uint64_t term;
	json_t *value;
};

struct records {
	const struct pando_reclaim *r;
	struct record *v;
	size_t n, cap;
	size_t skipped;
	bool failed; /* out of memory */
};

int pando_reclaim_open(const struct pando_reclaim_options *opt, struct pando_reclaim **out)
{
	struct pando_reclaim *r;
	int rc;

	*out = NULL;
	if (!opt->prefix || strlen(opt->prefix) > PREFIX_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	rc = etcd_client_new(opt->etcd, &r->etcd);
	if (rc) {
		free(r);
		return rc;
	}
	pthread_mutex_init(&r->lock, NULL);
	r->term = opt->term;
	snprintf(r->prefix, sizeof(r->prefix), "%s", opt->prefix);
	*out = r;
	return 0;
}

void pando_reclaim_close(struct pando_reclaim *r)
{
	if (!r)
		return;
	etcd_client_free(r->etcd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static void key_of(const struct pando_reclaim *r, uint64_t term, uint64_t id, char *key)
{
	snprintf(key, KEY_MAX + 1, "%s%016" PRIx64 ".%016" PRIx64, r->prefix, term, id);
}

static bool text_ok(const json_t *s, size_t max)
{
	size_t n = json_is_string(s) ? json_string_length(s) : 0;

	return n >= 1 && n <= max && strlen(json_string_value(s)) == n;
}

/* Whether value is a record: a tag and its revoked handles, in bounds. */
static bool value_ok(const json_t *value)
{
	const json_t *revoked = json_object_get(value, "revoked");

	if (!text_ok(json_object_get(value, "tag"), RECLAIM_TAG_MAX) || !json_is_array(revoked) ||
	    json_array_size(revoked) > RECLAIM_REVOKED_MAX)
		return false;
	for (size_t i = 0; i < json_array_size(revoked); i++) {
		if (!text_ok(json_array_get(revoked, i), RECLAIM_HANDLE_MAX))
			return false;
	}
	return true;
}

static int put_value(struct pando_reclaim *r, const char *key, const json_t *value)
{
	char *text = json_dumps(value, JSON_COMPACT);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = etcd_put(r->etcd, key, text, strlen(text), 0);
	free(text);
	return rc;
}

int pando_reclaim_add(struct pando_reclaim *r, uint64_t id, const char *tag)
{
	char key[KEY_MAX + 1];
	json_t *value;
	int rc;

	if (!tag || !*tag || strlen(tag) > RECLAIM_TAG_MAX)
		return -EINVAL;
	value = json_pack("{ss s[]}", "tag", tag, "revoked");
	if (!value)
		return -ENOMEM;
	key_of(r, r->term, id, key);
	rc = put_value(r, key, value);
	json_decref(value);
	return rc;
}

int pando_reclaim_remove(struct pando_reclaim *r, uint64_t id)
{
	char key[KEY_MAX + 1];
	int rc;

	key_of(r, r->term, id, key);
	rc = etcd_delete(r->etcd, key);
	return rc == -ENOENT ? 0 : rc;
}

/* handle appended to value's revoked, unless there already or full. */
static int add_revoked(json_t *value, const char *handle)
{
	json_t *revoked = json_object_get(value, "revoked");

	for (size_t i = 0; i < json_array_size(revoked); i++) {
		if (!strcmp(json_string_value(json_array_get(revoked, i)), handle))
			return 0;
	}
	if (json_array_size(revoked) >= RECLAIM_REVOKED_MAX)
		return -ENOSPC;
	return json_array_append_new(revoked, json_string(handle)) ? -ENOMEM : 0;
}

int pando_reclaim_revoke(struct pando_reclaim *r, uint64_t id, const char *handle)
{
	char key[KEY_MAX + 1];
	char *text = NULL;
	size_t len = 0;
	json_t *value = NULL;
	int rc;

	if (!handle || !*handle || strlen(handle) > RECLAIM_HANDLE_MAX)
		return -EINVAL;
	key_of(r, r->term, id, key);
	pthread_mutex_lock(&r->lock);
	rc = etcd_get(r->etcd, key, &text, &len, NULL);
	if (!rc) {
		value = json_loadb(text, len, 0, NULL);
		rc = value && value_ok(value) ? add_revoked(value, handle) : -EBADMSG;
	}
	if (!rc)
		rc = put_value(r, key, value);
	pthread_mutex_unlock(&r->lock);
	json_decref(value);
	free(text);
	return rc;
}

/* The term in key <prefix><term>.<id>; false when key is not one. */
static bool term_of(const char *prefix, const char *key, uint64_t *term)
{
	size_t plen = strlen(prefix);
	const char *rest = key + plen;

	if (strncmp(key, prefix, plen) || strlen(rest) != 33 || rest[16] != '.' ||
	    strspn(rest, "0123456789abcdef") != 16 || strspn(rest + 17, "0123456789abcdef") != 16)
		return false;
	*term = strtoull(rest, NULL, 16);
	return true;
}

/* rec from key and value[len]; false (rec empty) when they are none. */
static bool record_parse(const char *prefix, const char *key, const char *value, size_t len,
			 struct record *rec)
{
	rec->value = term_of(prefix, key, &rec->term) ? json_loadb(value, len, 0, NULL) : NULL;
	if (rec->value && value_ok(rec->value))
		return true;
	json_decref(rec->value);
	rec->value = NULL;
	return false;
}

int pando_reclaim_record_check(const char *prefix, const char *key, const char *value, size_t len,
			       uint64_t *term)
{
	struct record rec;

	if (!record_parse(prefix, key, value, len, &rec))
		return -EINVAL;
	*term = rec.term;
	json_decref(rec.value);
	return 0;
}

static int collect(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct records *rs = arg;
	struct record rec;

	(void)rev;
	if (!record_parse(rs->r->prefix, key, value, len, &rec)) {
		rs->skipped++;
		return 0;
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct record *v = realloc(rs->v, cap * sizeof(*v));

		if (!v) {
			json_decref(rec.value);
			rs->failed = true;
			return 1;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = rec;
	return 0;
}

static const char *tag_of(const struct record *rec)
{
	return json_string_value(json_object_get(rec->value, "tag"));
}

/* By tag, and the newest term first within one. */
static int by_tag_newest_first(const void *pa, const void *pb)
{
	const struct record *a = pa, *b = pb;
	int c = strcmp(tag_of(a), tag_of(b));

	if (c)
		return c;
	return a->term < b->term ? 1 : a->term > b->term ? -1 : 0;
}

static int give(const struct record *rec, pando_reclaim_fn fn, void *arg)
{
	const json_t *revoked = json_object_get(rec->value, "revoked");
	size_t n = json_array_size(revoked);
	const char **handles = calloc(n ? n : 1, sizeof(*handles));
	int rc;

	if (!handles)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		handles[i] = json_string_value(json_array_get(revoked, i));
	rc = fn(arg, tag_of(rec), handles, n);
	free(handles);
	return rc;
}

static int list_records(struct pando_reclaim *r, struct records *rs)
{
	int rc;

	*rs = (struct records){ .r = r };
	rc = etcd_list(r->etcd, r->prefix, 0, collect, rs, NULL);
	if (rs->failed)
		rc = -ENOMEM;
	return rc;
}

static void free_records(struct records *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		json_decref(rs->v[i].value);
	free(rs->v);
}

int pando_reclaim_read(struct pando_reclaim *r, pando_reclaim_fn fn, void *arg, size_t *skipped)
{
	struct records rs;
	int rc = list_records(r, &rs);

	if (!rc && rs.n)
		qsort(rs.v, rs.n, sizeof(*rs.v), by_tag_newest_first);
	for (size_t i = 0; !rc && i < rs.n; i++) {
		if (i == 0 || strcmp(tag_of(&rs.v[i - 1]), tag_of(&rs.v[i])))
			rc = give(&rs.v[i], fn, arg);
	}
	if (skipped)
		*skipped = rs.skipped;
	free_records(&rs);
	return rc;
}

/* Keys are <term>.<id> in fixed-width hex: those of earlier terms are
 * exactly the ones below this term's, removed in one request. */
int pando_reclaim_end_grace(struct pando_reclaim *r, size_t *removed)
{
	char end[KEY_MAX + 1];
	int64_t n = 0;
	int rc;

	snprintf(end, sizeof(end), "%s%016" PRIx64, r->prefix, r->term);
	rc = etcd_delete_range(r->etcd, r->prefix, end, &n);
	if (removed)
		*removed = rc ? 0 : (size_t)n;
	return rc;
}

bool pando_reclaim_host_name_ok(const char *name)
{
	size_t n = strnlen(name, RECLAIM_HOST_MAX + 1);

	if (n == 0 || n > RECLAIM_HOST_MAX || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (name[i] <= ' ' || name[i] > '~' || name[i] == '/')
			return false;
	}
	return true;
}

uint64_t pando_reclaim_host_id(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

int pando_reclaim_host_record(const char *name, const char *my_name, char *buf, size_t len)
{
	static const char no_priv[] = "00000000000000000000000000000000";
	int n;

	if (!pando_reclaim_host_name_ok(name) || !pando_reclaim_host_name_ok(my_name))
		return -ENAMETOOLONG;
	/* statd prints the address as the word its bytes make in memory. */
	n = snprintf(buf, len, "%08x %08x %08x %08x %s %s %s\n", (unsigned)htonl(INADDR_LOOPBACK),
		     100021u, 4u, 16u, no_priv, name, my_name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}
