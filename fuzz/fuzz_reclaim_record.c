/* A manager group's reclaim records as the next active reads them from
 * etcd (ganesha-fsal/mds/reclaim.c): the first byte is the length of the
 * key's part after the prefix, then that part, then the value.  An NSM
 * host's record has the same shape: its tag, when a host name, becomes
 * a file name in statd's notify list and a word of the line written
 * there. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "reclaim.h"

#define PREFIX "/pando/groups/g1/clients/"

/* A tag taken as a host name makes one file name and one word. */
static void check_host(const char *tag)
{
	char line[2 * RECLAIM_HOST_MAX + 80], *words[8], *save = NULL;
	int n = pando_reclaim_host_record(tag, "mds-b", line, sizeof(line)), count = 0;

	fuzz_check((n > 0) == pando_reclaim_host_name_ok(tag), "a host name's record not made");
	if (n <= 0)
		return;
	fuzz_check(tag[0] != '.' && !strchr(tag, '/'), "a host name that is no file name");
	fuzz_check(line[n - 1] == '\n' && strlen(line) == (size_t)n, "a record that is no line");
	line[n - 1] = 0;
	for (char *w = strtok_r(line, " ", &save); w && count < 8; w = strtok_r(NULL, " ", &save))
		words[count++] = w;
	fuzz_check(count == 7 && !strcmp(words[5], tag), "a record whose words are not statd's");
}

/* An accepted value's fields hold the record's bounds. */
static json_t *check_fields(const char *value, size_t len)
{
	json_t *o = json_loadb(value, len, 0, NULL);
	const json_t *tag = json_object_get(o, "tag"), *revoked = json_object_get(o, "revoked");

	fuzz_check(json_is_string(tag) && json_string_length(tag) >= 1 &&
			   json_string_length(tag) <= RECLAIM_TAG_MAX &&
			   strlen(json_string_value(tag)) == json_string_length(tag),
		   "an accepted tag out of bounds");
	fuzz_check(json_is_array(revoked) && json_array_size(revoked) <= RECLAIM_REVOKED_MAX,
		   "accepted revoked handles out of bounds");
	for (size_t i = 0; i < json_array_size(revoked); i++) {
		const json_t *h = json_array_get(revoked, i);

		fuzz_check(json_is_string(h) && json_string_length(h) >= 1 &&
				   json_string_length(h) <= RECLAIM_HANDLE_MAX,
			   "an accepted handle out of bounds");
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t klen = size ? data[0] : 0, plen = strlen(PREFIX);
	char *key, *again;
	uint64_t term = 0, term2 = 0;
	json_t *o;

	if (!size || klen > size - 1)
		return 0;
	key = malloc(plen + klen + 1);
	fuzz_check(key != NULL, "out of memory");
	memcpy(key, PREFIX, plen);
	memcpy(key + plen, data + 1, klen);
	key[plen + klen] = 0;
	if (pando_reclaim_record_check(PREFIX, key, (const char *)data + 1 + klen, size - 1 - klen,
				       &term) == 0) {
		fuzz_check(strtoull(key + plen, NULL, 16) == term, "the term is not the key's");
		o = check_fields((const char *)data + 1 + klen, size - 1 - klen);
		again = json_dumps(o, JSON_COMPACT);
		fuzz_check(again != NULL, "out of memory");
		fuzz_check(pando_reclaim_record_check(PREFIX, key, again, strlen(again), &term2) ==
					   0 &&
				   term2 == term,
			   "an accepted record written again is refused");
		check_host(json_string_value(json_object_get(o, "tag")));
		free(again);
		json_decref(o);
	}
	free(key);
	return 0;
}
