/* Junction blobs (junction.h): the bytes written are the documented lines;
 * what is written reads back field for field; a blob is read only when it
 * is exactly what would be written for fields without a problem, and each
 * field's rule refuses what breaks it. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "junction.h"

static const struct pando_junction VOL1 = { .volume = "vol1",
					    .path = "/pando",
					    .servers = 2,
					    .server = { "10.0.0.2", "fd00::2" } };

static int decode_str(const char *s, struct pando_junction *j)
{
	return pando_junction_decode(s, strlen(s), j);
}

static void test_the_blob_is_one_line_per_field(void)
{
	char buf[PANDO_JUNCTION_BLOB_MAX];
	const char want[] = "volume vol1\npath /pando\nserver 10.0.0.2\nserver fd00::2\n";
	size_t len;

	CHECK_EQ(pando_junction_encode(&VOL1, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(want) - 1);
	CHECK(memcmp(buf, want, len) == 0);
}

static void test_what_is_written_reads_back(void)
{
	char buf[PANDO_JUNCTION_BLOB_MAX];
	struct pando_junction j;
	size_t len;

	CHECK_EQ(pando_junction_encode(&VOL1, buf, sizeof(buf), &len), 0);
	CHECK_EQ(pando_junction_decode(buf, len, &j), 0);
	CHECK(strcmp(j.volume, "vol1") == 0);
	CHECK(strcmp(j.path, "/pando") == 0);
	CHECK_EQ(j.servers, 2);
	CHECK(strcmp(j.server[0], "10.0.0.2") == 0);
	CHECK(strcmp(j.server[1], "fd00::2") == 0);
}

static void test_the_longest_fields_fit_the_largest_blob(void)
{
	char buf[PANDO_JUNCTION_BLOB_MAX];
	struct pando_junction j = { .servers = PANDO_JUNCTION_SERVERS };
	size_t len;

	memset(j.volume, 'v', PANDO_VOLUME_NAME_MAX);
	j.path[0] = '/';
	memset(j.path + 1, 'p', PANDO_JUNCTION_PATH_MAX - 1);
	for (int i = 0; i < PANDO_JUNCTION_SERVERS; i++)
		memset(j.server[i], 'a' + i, PANDO_JUNCTION_SERVER_MAX);
	CHECK_EQ(pando_junction_encode(&j, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, PANDO_JUNCTION_BLOB_MAX - 1);
	CHECK_EQ(pando_junction_encode(&j, buf, sizeof(buf) - 1, &len), -ENOSPC);
}

static void test_each_field_rule_refuses_what_breaks_it(void)
{
	struct pando_junction j;
	const char *bad_volumes[] = { "", ".hidden", "-x", "a/b", "a b", "é" };
	const char *bad_paths[] = { "", "pando", "//", "/a//b", "/a/", "/./a", "/a/..", "/a b" };
	const char *bad_servers[] = { "", "host name", "host/x", "[fd00::1]" };

	for (size_t i = 0; i < sizeof(bad_volumes) / sizeof(*bad_volumes); i++) {
		j = VOL1;
		strcpy(j.volume, bad_volumes[i]);
		CHECK(pando_junction_problem(&j) != NULL);
	}
	for (size_t i = 0; i < sizeof(bad_paths) / sizeof(*bad_paths); i++) {
		j = VOL1;
		strcpy(j.path, bad_paths[i]);
		CHECK(pando_junction_problem(&j) != NULL);
	}
	for (size_t i = 0; i < sizeof(bad_servers) / sizeof(*bad_servers); i++) {
		j = VOL1;
		strcpy(j.server[1], bad_servers[i]);
		CHECK(pando_junction_problem(&j) != NULL);
	}
	j = VOL1;
	j.servers = 0;
	CHECK(pando_junction_problem(&j) != NULL);
	j.servers = PANDO_JUNCTION_SERVERS + 1;
	CHECK(pando_junction_problem(&j) != NULL);
	j = VOL1;
	strcpy(j.path, "/");
	CHECK(pando_junction_problem(&j) == NULL);
	strcpy(j.path, "/a/b.c/d-e_f");
	CHECK(pando_junction_problem(&j) == NULL);
	j.servers = 1;
	strcpy(j.server[0], "mds-a.example.org");
	CHECK(pando_junction_problem(&j) == NULL);
}

static void test_only_the_exact_written_form_is_read(void)
{
	struct pando_junction j;

	CHECK_EQ(decode_str("volume v\npath /\nserver h\n", &j), 0);
	CHECK_EQ(decode_str("volume v\npath /\nserver h", &j), -EINVAL);    /* no newline */
	CHECK_EQ(decode_str("volume v\npath /\n", &j), -EINVAL);            /* no server */
	CHECK_EQ(decode_str("path /\nvolume v\nserver h\n", &j), -EINVAL);  /* order */
	CHECK_EQ(decode_str("volume  v\npath /\nserver h\n", &j), -EINVAL); /* two spaces */
	CHECK_EQ(decode_str("volume v\npath /\nserver h\nextra x\n", &j), -EINVAL);
	CHECK_EQ(decode_str("volume v\npath /\nserver h\n\n", &j), -EINVAL);
	CHECK_EQ(decode_str("volume v\npath /\nserver a\nserver b\nserver c\nserver d\n"
			    "server e\n",
			    &j),
		 -EINVAL);
	CHECK_EQ(pando_junction_decode("volume v\0\npath /\nserver h\n", 26, &j), -EINVAL);
	CHECK_EQ(pando_junction_decode("", 0, &j), -EINVAL);
}

int main(void)
{
	test_the_blob_is_one_line_per_field();
	test_what_is_written_reads_back();
	test_the_longest_fields_fit_the_largest_blob();
	test_each_field_rule_refuses_what_breaks_it();
	test_only_the_exact_written_form_is_read();
	CHECK_DONE();
}
