/* A planned switchover's request as the active reads it from etcd
 * (ganesha-fsal/mds/handover.c): the value at the handover key, which
 * anyone who may write the group's keys can put there. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "handover.h"

#define NAME "mds-a"
#define TERM 41

/* A request's fields, written again as the mgr would put them. */
static enum pando_handover_request again(const char *value, size_t len)
{
	json_t *o = json_loadb(value, len, 0, NULL);
	json_t *r = json_pack("{sO sO}", "from", json_object_get(o, "from"), "term",
			      json_object_get(o, "term"));
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	enum pando_handover_request c;

	fuzz_check(text != NULL, "a request's fields do not write again");
	c = pando_handover_classify(NAME, TERM, text, strlen(text));
	free(text);
	json_decref(r);
	json_decref(o);
	return c;
}

/* The same request, padded with white space past the bound. */
static enum pando_handover_request padded(const char *value, size_t len)
{
	size_t n = len > PANDO_HANDOVER_VALUE_MAX ? len : PANDO_HANDOVER_VALUE_MAX + 1;
	char *buf = malloc(n);
	enum pando_handover_request c;

	fuzz_check(buf != NULL, "out of memory");
	memcpy(buf, value, len);
	memset(buf + len, ' ', n - len);
	c = pando_handover_classify(NAME, TERM, buf, n);
	free(buf);
	return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *value = (const char *)data;
	enum pando_handover_request r = pando_handover_classify(NAME, TERM, value, size);
	enum pando_handover_request other = pando_handover_classify("mds-b", TERM, value, size);

	if (size > PANDO_HANDOVER_VALUE_MAX)
		fuzz_check(r == PANDO_HANDOVER_NONE, "a value past the bound taken as a request");
	fuzz_check((r == PANDO_HANDOVER_NONE) == (other == PANDO_HANDOVER_NONE),
		   "whether a value is a request depends on who reads it");
	fuzz_check(!(r == PANDO_HANDOVER_FOR_ME && other == PANDO_HANDOVER_FOR_ME),
		   "one request for two actives");
	if (r == PANDO_HANDOVER_NONE)
		return 0;
	fuzz_check(again(value, size) == r, "a request written again asks something else");
	fuzz_check(padded(value, size) == PANDO_HANDOVER_NONE,
		   "a request padded past the bound taken as one");
	if (r == PANDO_HANDOVER_FOR_ME) {
		json_t *o = json_loadb(value, size, 0, NULL);
		json_t *from = json_object_get(o, "from");

		fuzz_check(json_string_length(from) == strlen(NAME) &&
				   !strcmp(json_string_value(from), NAME) &&
				   json_integer_value(json_object_get(o, "term")) == TERM,
			   "a request for another name or term taken as this active's");
		json_decref(o);
	}
	return 0;
}
