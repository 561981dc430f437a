/* A group snapshot's bytes as a standby reads them off the OSDs
 * (ganesha-fsal/mds/snapshot_pack.c), parsed into a sink that checks
 * what a parse promises: every file's bytes as many as its header said,
 * names allowed and in order, and a pack taken whole accounts for every
 * input byte. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "snapshot_pack.h"

struct input {
	const uint8_t *data;
	size_t size;
};

static int input_read(void *arg, uint64_t off, void *buf, size_t n)
{
	const struct input *in = arg;

	fuzz_check(off <= in->size && n <= in->size - off, "a read past the pack's end");
	memcpy(buf, in->data + off, n);
	return 0;
}

struct seen {
	char last[SNAPSHOT_NAME_MAX + 1];
	uint64_t want, got, bytes;
	bool open;
};

static int seen_file(void *arg, const char *name, uint64_t size)
{
	struct seen *s = arg;

	fuzz_check(!s->open, "a file begun before the last one ended");
	fuzz_check(snapshot_name_ok(name, strlen(name)), "a name not allowed");
	fuzz_check(!s->last[0] || strcmp(s->last, name) < 0, "names out of order");
	strcpy(s->last, name);
	s->want = size;
	s->got = 0;
	s->open = true;
	s->bytes += SNAPSHOT_FILE_HEADER + strlen(name) + size;
	return 0;
}

static int seen_data(void *arg, const void *buf, size_t n)
{
	struct seen *s = arg;

	(void)buf;
	fuzz_check(s->open && n <= s->want - s->got, "more bytes than the file's size");
	s->got += n;
	return 0;
}

static int seen_done(void *arg)
{
	struct seen *s = arg;

	fuzz_check(s->open && s->got == s->want, "a file ended short");
	s->open = false;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct seen s = { .bytes = SNAPSHOT_PACK_HEADER };
	struct snapshot_sink sink = { seen_file, seen_data, seen_done, &s };
	uint64_t seq = 0;
	int rc = snapshot_parse(input_read, &in, size, &sink, &seq);

	fuzz_check(rc == 0 || rc == -EINVAL, "an unknown parse error");
	fuzz_check(rc != 0 || (!s.open && s.bytes == size), "a pack's bytes unaccounted for");
	return 0;
}
