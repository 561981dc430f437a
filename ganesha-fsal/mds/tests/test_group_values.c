/* The values a manager group keeps in etcd about its journal: a
 * segment's (journal_segment.h) and the snapshot listing
 * (group_snapshot.h).  Written values read back field for field; every
 * way a value put there by hand, by an older build or by someone who may
 * write the group's keys can be wrong is refused: not JSON, a field
 * missing, negative, fractional or of the wrong type, a map that is not
 * lowercase hex of a map's encoding, a listing of index 0, a value past
 * the bound. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "group_snapshot.h"
#include "journal_segment.h"
#include "pando/storage_map.h"

static struct pando_storage_map *mirror3(void)
{
	struct pando_map_shape shape = {
		.raid = PANDO_RAID1, .copies = 3, .data = 1, .stripe_unit = 1 << 20, .visit_rows = 1
	};
	struct pando_storage_map *map = NULL;

	CHECK_EQ(pando_map_new(&shape, 1, 0, &map), 0);
	for (uint32_t i = 0; i < 3; i++)
		map->comp[i] =
			(struct pando_component){ i + 1, PANDO_JOURNAL_OBJECT_BIT | (7 + i) };
	map->partition_id = 1;
	return map;
}

static void test_a_segment_written_reads_back_field_for_field(void)
{
	struct journal_segment s = { .index = 12, .term = 3, .first_seq = 4096, .map = mirror3() };
	struct journal_segment r;
	char *value = journal_segment_format(&s);

	CHECK(value != NULL);
	CHECK_EQ(journal_segment_parse(value, strlen(value), &r), 0);
	CHECK(r.index == 12 && r.term == 3 && r.first_seq == 4096 &&
	      journal_map_same(s.map, r.map));
	pando_map_free(r.map);
	pando_map_free(s.map);
	free(value);
}

static void test_a_listing_written_reads_back_field_for_field(void)
{
	struct group_snapshot_listing s = {
		.index = 5, .seq = 472, .bytes = 19480, .at = 1796188628, .map = mirror3()
	};
	struct group_snapshot_listing r;
	char *value = group_snapshot_listing_format(&s);

	CHECK(value != NULL);
	CHECK_EQ(group_snapshot_listing_parse(value, strlen(value), &r), 0);
	CHECK(r.index == 5 && r.seq == 472 && r.bytes == 19480 && r.at == 1796188628 &&
	      journal_map_same(s.map, r.map));
	pando_map_free(r.map);
	pando_map_free(s.map);
	free(value);
}

/* value with the first `from` replaced by `to` (one of each). */
static char *edited(const char *value, const char *from, const char *to)
{
	const char *at = strstr(value, from);
	size_t n = strlen(value) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);

	CHECK(at != NULL && out != NULL);
	snprintf(out, n, "%.*s%s%s", (int)(at - value), value, to, at + strlen(from));
	return out;
}

static int parse_segment(const char *value)
{
	struct journal_segment r;
	int rc = journal_segment_parse(value, strlen(value), &r);

	pando_map_free(r.map);
	return rc;
}

static int parse_listing(const char *value)
{
	struct group_snapshot_listing r;
	int rc = group_snapshot_listing_parse(value, strlen(value), &r);

	pando_map_free(r.map);
	return rc;
}

static const char *const wrong_counts[][2] = {
	{ "\"index\":12", "\"index\":-12" },
	{ "\"index\":12", "\"index\":12.5" },
	{ "\"index\":12", "\"index\":\"12\"" },
	{ "\"index\":12", "\"index\":null" },
	{ "\"index\":12", "\"xindex\":12" },
	{ "\"index\":12", "\"index\":1e3" },
	{ "\"index\":12", "\"index\":99999999999999999999" },
};

static void test_a_segment_with_a_field_wrong_is_refused(void)
{
	struct journal_segment s = { .index = 12, .term = 3, .first_seq = 4096, .map = mirror3() };
	char *value = journal_segment_format(&s), *bad;

	for (size_t i = 0; i < sizeof(wrong_counts) / sizeof(wrong_counts[0]); i++) {
		bad = edited(value, wrong_counts[i][0], wrong_counts[i][1]);
		CHECK_EQ(parse_segment(bad), -EINVAL);
		free(bad);
	}
	bad = edited(value, "\"term\":3", "\"term\":-1");
	CHECK_EQ(parse_segment(bad), -EINVAL);
	free(bad);
	bad = edited(value, "\"first_seq\":4096", "\"first_seq\":[4096]");
	CHECK_EQ(parse_segment(bad), -EINVAL);
	free(bad);
	CHECK_EQ(parse_segment("not json"), -EINVAL);
	CHECK_EQ(parse_segment("[]"), -EINVAL);
	CHECK_EQ(parse_segment(""), -EINVAL);
	pando_map_free(s.map);
	free(value);
}

/* The map's hex in value, changed at its first character. */
static void test_a_map_that_is_not_a_maps_lowercase_hex_is_refused(void)
{
	struct journal_segment s = { .index = 1, .term = 1, .first_seq = 1, .map = mirror3() };
	char *value = journal_segment_format(&s), *bad;
	static const char *const maps[] = { "\"map\":\"\"",   "\"map\":\"0\"", "\"map\":\"zz\"",
					    "\"map\":\"00\"", "\"map\":7",     "\"map\":null" };
	char *hex = journal_map_hex(s.map), *upper = strdup(hex), from[1024], to[1024];

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(from, sizeof(from), "\"map\":\"%s\"", hex);
		bad = edited(value, from, maps[i]);
		CHECK_EQ(parse_segment(bad), -EINVAL);
		free(bad);
	}
	/* The same bytes in another spelling: one text per map. */
	for (char *c = upper; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
	CHECK(strcmp(upper, hex) != 0);
	snprintf(from, sizeof(from), "\"map\":\"%s\"", hex);
	snprintf(to, sizeof(to), "\"map\":\"%s\"", upper);
	bad = edited(value, from, to);
	CHECK_EQ(parse_segment(bad), -EINVAL);
	free(bad);
	snprintf(to, sizeof(to), "\"map\":\" %s\"", hex + 1);
	bad = edited(value, from, to);
	CHECK_EQ(parse_segment(bad), -EINVAL);
	free(bad);
	free(upper);
	free(hex);
	pando_map_free(s.map);
	free(value);
}

/* A map of any other shape than the journal's three mirrors in one
 * group: the rebuild and the writer name copies 0 to 2 of group 0. */
static struct pando_storage_map *shaped(enum pando_raid raid, uint32_t copies, uint32_t data,
					uint32_t groups)
{
	struct pando_map_shape shape = { .raid = raid,
					 .copies = copies,
					 .data = data,
					 .parity = raid == PANDO_RS ? 2 : 0,
					 .stripe_unit = 1 << 20,
					 .visit_rows = 1 };
	struct pando_storage_map *map = NULL;

	CHECK_EQ(pando_map_new(&shape, groups, 0, &map), 0);
	for (uint32_t i = 0; map && i < groups * pando_map_width(map); i++)
		map->comp[i] =
			(struct pando_component){ i + 1, PANDO_JOURNAL_OBJECT_BIT | (7 + i) };
	if (map)
		map->partition_id = 1;
	return map;
}

static void test_a_map_not_of_three_mirrors_in_one_group_is_refused(void)
{
	struct pando_storage_map *maps[] = { shaped(PANDO_RAID1, 2, 1, 1),
					     shaped(PANDO_RAID1, 3, 1, 2),
					     shaped(PANDO_RAID1, 3, 2, 1),
					     shaped(PANDO_RAID0, 1, 3, 1),
					     shaped(PANDO_RS, 1, 1, 1) };

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct journal_segment s = { .index = 1, .term = 1, .first_seq = 1, .map = maps[i] };
		char *value = maps[i] ? journal_segment_format(&s) : NULL;

		CHECK(value != NULL);
		if (value)
			CHECK_EQ(parse_segment(value), -EINVAL);
		free(value);
		pando_map_free(maps[i]);
	}
}

static void test_a_listing_with_a_field_wrong_or_index_0_is_refused(void)
{
	struct group_snapshot_listing s = {
		.index = 12, .seq = 9, .bytes = 100, .at = 5, .map = mirror3()
	};
	char *value = group_snapshot_listing_format(&s), *bad;

	for (size_t i = 0; i < sizeof(wrong_counts) / sizeof(wrong_counts[0]); i++) {
		bad = edited(value, wrong_counts[i][0], wrong_counts[i][1]);
		CHECK_EQ(parse_listing(bad), -EINVAL);
		free(bad);
	}
	bad = edited(value, "\"index\":12", "\"index\":0");
	CHECK_EQ(parse_listing(bad), -EINVAL);
	free(bad);
	bad = edited(value, "\"at\":5", "\"at\":-5");
	CHECK_EQ(parse_listing(bad), -EINVAL);
	free(bad);
	bad = edited(value, "\"bytes\":100,", "");
	CHECK_EQ(parse_listing(bad), -EINVAL);
	free(bad);
	pando_map_free(s.map);
	free(value);
}

/* A well-formed value padded with white space past JOURNAL_VALUE_MAX. */
static void test_a_value_past_the_bound_is_refused(void)
{
	struct journal_segment s = { .index = 1, .term = 1, .first_seq = 1, .map = mirror3() };
	struct group_snapshot_listing l = { .index = 1, .map = s.map };
	char *seg = journal_segment_format(&s), *lst = group_snapshot_listing_format(&l);
	char *buf = malloc(JOURNAL_VALUE_MAX + 1);
	struct journal_segment rs;
	struct group_snapshot_listing rl;

	CHECK(buf != NULL && seg != NULL && lst != NULL);
	memset(buf, ' ', JOURNAL_VALUE_MAX + 1);
	memcpy(buf, seg, strlen(seg));
	CHECK_EQ(journal_segment_parse(buf, JOURNAL_VALUE_MAX, &rs), 0);
	pando_map_free(rs.map);
	CHECK_EQ(journal_segment_parse(buf, JOURNAL_VALUE_MAX + 1, &rs), -EINVAL);
	memset(buf, ' ', JOURNAL_VALUE_MAX + 1);
	memcpy(buf, lst, strlen(lst));
	CHECK_EQ(group_snapshot_listing_parse(buf, JOURNAL_VALUE_MAX, &rl), 0);
	pando_map_free(rl.map);
	CHECK_EQ(group_snapshot_listing_parse(buf, JOURNAL_VALUE_MAX + 1, &rl), -EINVAL);
	free(buf);
	free(seg);
	free(lst);
	pando_map_free(s.map);
}

int main(void)
{
	test_a_segment_written_reads_back_field_for_field();
	test_a_listing_written_reads_back_field_for_field();
	test_a_segment_with_a_field_wrong_is_refused();
	test_a_map_that_is_not_a_maps_lowercase_hex_is_refused();
	test_a_map_not_of_three_mirrors_in_one_group_is_refused();
	test_a_listing_with_a_field_wrong_or_index_0_is_refused();
	test_a_value_past_the_bound_is_refused();
	CHECK_DONE();
}
