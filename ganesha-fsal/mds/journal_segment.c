/* The journal's segments in etcd (journal_segment.h). */
#include "journal_segment.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_client.h"
#include "journal.h"
#include "mds_alloc.h"
#include "pando/storage_map.h"

#define SEGMENTS_MAX 4096

int journal_segment_prefix(const char *etcd_prefix, const char *group, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%sjournal/%s/", etcd_prefix, group);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Lowercase only, as journal_map_hex writes it: one text per map. */
static int hex_decode(const char *hex, uint8_t **out, size_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n == 0)
		return -EINVAL;
	*out = mds_malloc(n / 2);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(*out);
			*out = NULL;
			return -EINVAL;
		}
		(*out)[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

int journal_map_unhex(const char *hex, struct pando_storage_map **map)
{
	uint8_t *blob = NULL;
	size_t blen = 0;
	int rc = hex ? hex_decode(hex, &blob, &blen) : -EINVAL;

	if (!rc)
		rc = pando_map_decode(blob, blen, map) ? -EINVAL : 0;
	/* Every journal map is placed as pando_journal_place places it. */
	if (!rc && ((*map)->groups != 1 || (*map)->shape.raid != PANDO_RAID1 ||
		    pando_map_width(*map) != JOURNAL_COPIES)) {
		pando_map_free(*map);
		*map = NULL;
		rc = -EINVAL;
	}
	free(blob);
	return rc;
}

bool journal_map_same(const struct pando_storage_map *a, const struct pando_storage_map *b)
{
	char *x = journal_map_hex(a), *y = journal_map_hex(b);
	bool same = x && y && !strcmp(x, y);

	free(x);
	free(y);
	return same;
}

bool journal_json_count(json_t *o, const char *name, uint64_t *v)
{
	json_t *n = json_object_get(o, name);

	if (!json_is_integer(n) || json_integer_value(n) < 0)
		return false;
	*v = (uint64_t)json_integer_value(n);
	return true;
}

int journal_segment_parse(const char *value, size_t len, struct journal_segment *s)
{
	json_t *o = len <= JOURNAL_VALUE_MAX ? json_loadb(value, len, 0, NULL) : NULL;
	int rc = -EINVAL;

	memset(s, 0, sizeof(*s));
	if (journal_json_count(o, "index", &s->index) && journal_json_count(o, "term", &s->term) &&
	    journal_json_count(o, "first_seq", &s->first_seq))
		rc = journal_map_unhex(json_string_value(json_object_get(o, "map")), &s->map);
	json_decref(o);
	return rc;
}

struct list {
	struct journal_segment *s;
	size_t n;
	int rc;
};

static int one(void *arg, const char *key, const char *value, size_t len, int64_t rev)
{
	struct list *l = arg;

	(void)key;
	(void)rev;
	if (l->n == SEGMENTS_MAX) {
		l->rc = -E2BIG;
		return 1;
	}
	l->s = mds_realloc(l->s, (l->n + 1) * sizeof(*l->s));
	memset(&l->s[l->n], 0, sizeof(*l->s));
	l->rc = journal_segment_parse(value, len, &l->s[l->n]);
	if (l->rc)
		return 1;
	l->n++;
	return 0;
}

/* Keys are the index in fixed-width hex, so etcd's key order is the
 * segments' order. */
int journal_segments_list(struct etcd_client *c, const char *prefix, struct journal_segment **out,
			  size_t *n)
{
	struct list l = { 0 };
	int rc = etcd_list(c, prefix, 0, one, &l, NULL);

	if (rc == -ENOENT)
		rc = 0;
	if (!rc || rc == 1)
		rc = l.rc;
	if (rc) {
		journal_segments_free(l.s, l.n);
		return rc;
	}
	*out = l.s;
	*n = l.n;
	return 0;
}

static char *hex_encode(const uint8_t *b, size_t len)
{
	char *hex = mds_malloc(2 * len + 1);

	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	hex[2 * len] = 0;
	return hex;
}

char *journal_map_hex(const struct pando_storage_map *map)
{
	uint8_t *blob = NULL;
	size_t blen = 0;
	char *hex = NULL;
	int rc = pando_map_encode(map, NULL, 0, &blen);

	if (rc && rc != -ENOSPC)
		return NULL;
	blob = mds_malloc(blen);
	if (pando_map_encode(map, blob, blen, &blen) == 0)
		hex = hex_encode(blob, blen);
	free(blob);
	return hex;
}

char *journal_segment_format(const struct journal_segment *s)
{
	char *hex = journal_map_hex(s->map), *value;
	json_t *o = hex ? json_pack("{sI sI sI ss}", "index", (json_int_t)s->index, "term",
				    (json_int_t)s->term, "first_seq", (json_int_t)s->first_seq,
				    "map", hex)
			: NULL;

	value = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	free(hex);
	return value;
}

int journal_segment_put(struct etcd_client *c, const char *prefix, const struct journal_segment *s)
{
	char key[512], *value = journal_segment_format(s);
	int rc;

	snprintf(key, sizeof(key), "%s%016" PRIx64, prefix, s->index);
	rc = value ? etcd_put(c, key, value, strlen(value), 0) : -EINVAL;
	free(value);
	return rc;
}

void journal_segments_free(struct journal_segment *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pando_map_free(s[i].map);
	free(s);
}
