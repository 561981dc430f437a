/* The values a manager group keeps in etcd about its journal, as its
 * members read them: the first byte picks a segment's
 * (journal_segment_parse) or the snapshot listing
 * (group_snapshot_listing_parse), the rest is the value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "group_snapshot.h"
#include "journal_segment.h"
#include "pando/storage_map.h"

static void segment(const char *value, size_t len)
{
	struct journal_segment s, again;
	char *text;

	if (journal_segment_parse(value, len, &s)) {
		fuzz_check(s.map == NULL, "a refused segment left a map");
		return;
	}
	fuzz_check(len <= JOURNAL_VALUE_MAX, "a segment past the bound parsed");
	text = journal_segment_format(&s);
	fuzz_check(text != NULL, "a parsed segment does not write again");
	fuzz_check(journal_segment_parse(text, strlen(text), &again) == 0,
		   "a segment written again does not parse");
	fuzz_check(again.index == s.index && again.term == s.term &&
			   again.first_seq == s.first_seq && journal_map_same(again.map, s.map),
		   "a segment written again reads otherwise");
	pando_map_free(again.map);
	pando_map_free(s.map);
	free(text);
}

static void listing(const char *value, size_t len)
{
	struct group_snapshot_listing s, again;
	char *text;

	if (group_snapshot_listing_parse(value, len, &s)) {
		fuzz_check(s.map == NULL, "a refused listing left a map");
		return;
	}
	fuzz_check(len <= JOURNAL_VALUE_MAX && s.index && s.at >= 0,
		   "a listing past the bound, of index 0 or before 1970 parsed");
	text = group_snapshot_listing_format(&s);
	fuzz_check(text != NULL, "a parsed listing does not write again");
	fuzz_check(group_snapshot_listing_parse(text, strlen(text), &again) == 0,
		   "a listing written again does not parse");
	fuzz_check(again.index == s.index && again.seq == s.seq && again.bytes == s.bytes &&
			   again.at == s.at && journal_map_same(again.map, s.map),
		   "a listing written again reads otherwise");
	pando_map_free(again.map);
	pando_map_free(s.map);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		listing((const char *)data + 1, size - 1);
	else
		segment((const char *)data + 1, size - 1);
	return 0;
}
