/* Shared by the etcd client's files and its unit tests; not for callers. */
#ifndef PANDO_ETCD_INTERNAL_H
#define PANDO_ETCD_INTERNAL_H

#include <errno.h>
#include <jansson.h>
#include <stdint.h>

#include "etcd_client.h"
#include "etcd_http.h"

/* Request bodies, exactly as sent (json_dumps, compact, keys sorted);
 * malloc'd strings, NULL on ENOMEM. */
char *etcd_body_range(const char *key);
char *etcd_body_put(const char *key, const void *value, size_t len, int64_t lease);
char *etcd_body_delete(const char *key);
char *etcd_body_delete_range(const char *key, const char *end);
char *etcd_body_range_prefix(const char *prefix, int64_t limit);
char *etcd_body_create(const char *key, const void *value, size_t len, int64_t lease);
char *etcd_body_delete_if(const char *key, int64_t rev);
char *etcd_body_put_if(const char *key, const void *value, size_t len, int64_t rev);
char *etcd_body_grant(int ttl_s);
char *etcd_body_lease(int64_t lease); /* keepalive and revoke */
/* The caller zeroes it once sent: it holds the password. */
char *etcd_body_authenticate(const char *user, const char *password);

/* What etcd_parse_answer says of answers about authentication, never
 * returned to callers.  ETCD_EREAUTH: a new token may change it (the
 * token expired, its member restarted, none was sent, or the roles
 * changed since it was given).  ETCD_ENOAUTH: etcd's authentication is
 * not enabled, so there is no token to get. */
enum { ETCD_EREAUTH = -EKEYEXPIRED, ETCD_ENOAUTH = -ENOTSUP };

/* A client's credentials (etcd_auth.c). */
struct etcd_auth {
	char *user;     /* NULL: no authentication */
	char *password; /* zeroed before it is freed */
	char *token;    /* NULL: none yet; "": none needed (authentication off) */
};

/* Reads the password file: -EINVAL for a user without one or the other
 * way round, -EPERM, -EBADMSG, -errno (etcd_client_new's). */
int etcd_auth_init(struct etcd_auth *a, const char *user, const char *password_file);
/* Replaces the token (token malloc'd or NULL; the old one is zeroed). */
void etcd_auth_set_token(struct etcd_auth *a, char *token);
void etcd_auth_free(struct etcd_auth *a);

/* The answer to one call as etcd meant it: the JSON object of a 200
 * answer (*out, the caller json_decref's it), -ENOENT / -EINVAL for
 * etcd's own errors, -EACCES for credentials or a permission refused,
 * ETCD_EREAUTH, -EAGAIN for an etcd that cannot serve now (no leader,
 * timed out: try another member), -EPROTO for anything else. */
int etcd_parse_answer(const struct http_response *r, json_t **out);

/* An int64 field that the gateway writes as a string (or a number);
 * an absent field is 0 (proto3 leaves zero values out).  -EPROTO when
 * present but not an integer. */
int etcd_json_int64(const json_t *obj, const char *name, int64_t *out);

/* The fields of each answer; -EPROTO when they are not there. */
int etcd_parse_range(const json_t *ans, char **value, size_t *len, int64_t *mod_revision);
int etcd_parse_grant(const json_t *ans, int64_t *lease);
int etcd_parse_keepalive(const json_t *ans, int64_t *ttl_left);
int etcd_parse_deleted(const json_t *ans);
/* How many keys a deleterange deleted. */
int etcd_parse_deleted_count(const json_t *ans, int64_t *deleted);
/* 0 when the txn's compare held (the put was done), -EEXIST when not. */
int etcd_parse_txn(const json_t *ans);
/* The token of an authenticate answer (malloc'd): -EPROTO when absent,
 * or when it holds what cannot go in a header (controls, spaces). */
int etcd_parse_token(const json_t *ans, char **token);
/* Calls fn for each key and value of a range answer, in order. */
int etcd_parse_kvs(const json_t *ans, etcd_kv_fn fn, void *arg);

#endif
