/* The journal's segments as etcd lists them (journal.h), for the writer
 * and the reader alike. */
#ifndef PANDO_JOURNAL_SEGMENT_H
#define PANDO_JOURNAL_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct etcd_client;
struct pando_storage_map;

/* The most bytes of a value the journal's keys in etcd may hold. */
#define JOURNAL_VALUE_MAX 65536

struct journal_segment {
	uint64_t index;
	uint64_t term;
	uint64_t first_seq; /* records in it have seq >= this */
	struct pando_storage_map *map;
};

/* "<etcd prefix>journal/<group>/" into buf[cap]; -ENAMETOOLONG. */
int journal_segment_prefix(const char *etcd_prefix, const char *group, char *buf, size_t cap);
/* Lists the segment under prefix (journal_segment_prefix).  0, or
 * -EINVAL with a value that is no segment (named in the log by the
 * caller from *bad, a key), or the etcd client's errors. */
int journal_segments_list(struct etcd_client *c, const char *prefix, struct journal_segment **out,
			  size_t *n);
int journal_segment_put(struct etcd_client *c, const char *prefix, const struct journal_segment *s);
/* A segment's value: JSON {"first_seq", "index", "map", "term"}, the
 * counts non-negative integers, the map in hex (journal_map_hex), at most
 * JOURNAL_VALUE_MAX bytes.  0, or -EINVAL: not a segment's value. */
int journal_segment_parse(const char *value, size_t len, struct journal_segment *s);
/* The value for s; NULL when its map does not encode.  Freed by free(). */
char *journal_segment_format(const struct journal_segment *s);
/* Whether o's member `name` is a non-negative integer, into *v. */
bool journal_json_count(json_t *o, const char *name, uint64_t *v);
/* A storage map as etcd values carry it: its encoding in lowercase hex
 * (NULL: it does not encode), and back (-EINVAL: not lowercase hex of a
 * map's encoding, or not a map of JOURNAL_COPIES mirrors in one group). */
char *journal_map_hex(const struct pando_storage_map *map);
int journal_map_unhex(const char *hex, struct pando_storage_map **map);
/* Whether two maps are carried as the same value (both encode, alike). */
bool journal_map_same(const struct pando_storage_map *a, const struct pando_storage_map *b);
void journal_segments_free(struct journal_segment *s, size_t n);

#endif
