/* Reclaim records on a real etcd: an active's clients are read back by
 * the next, each once, the newest record of a tag winning; the end of the
 * grace period removes the earlier terms' records and nothing else;
 * revoked handles accumulate without repeats, up to their bound; and a
 * record that is not one (bad JSON, out of bounds, a stray key) is
 * skipped and counted, never given.  NSM hosts are records too, named
 * as statd files them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "reclaim.h"

#define PREFIX "/pando/groups/g1/clients/"

static struct etcd_fixture etcd;
static struct etcd_options eo;

/* What a read gave: tags in order, and each one's revoked, joined. */
struct seen {
	int n;
	char tags[8][64];
	char revoked[8][256];
};

static int note(void *arg, const char *tag, const char *const *revoked, size_t n_revoked)
{
	struct seen *s = arg;

	if (s->n == 8)
		return -E2BIG;
	snprintf(s->tags[s->n], sizeof(s->tags[0]), "%s", tag);
	for (size_t i = 0; i < n_revoked; i++) {
		size_t used = strlen(s->revoked[s->n]);

		snprintf(s->revoked[s->n] + used, sizeof(s->revoked[0]) - used, "%s%s",
			 i ? "," : "", revoked[i]);
	}
	s->n++;
	return 0;
}

static struct pando_reclaim *open_term(uint64_t term)
{
	const struct pando_reclaim_options o = { .etcd = &eo, .prefix = PREFIX, .term = term };
	struct pando_reclaim *r = NULL;

	CHECK_EQ(pando_reclaim_open(&o, &r), 0);
	return r;
}

static void read_all(struct pando_reclaim *r, struct seen *s, size_t *skipped)
{
	memset(s, 0, sizeof(*s));
	CHECK_EQ(pando_reclaim_read(r, note, s, skipped), 0);
}

static void test_the_next_active_reads_each_client_once_and_ends_the_old_term(void)
{
	struct pando_reclaim *a = open_term(7), *b = open_term(9);
	struct seen s;
	size_t skipped = 1, removed = 0;

	CHECK_EQ(pando_reclaim_add(a, 1, "10.0.0.1-(4:6f6e65)"), 0);
	CHECK_EQ(pando_reclaim_add(a, 2, "10.0.0.2-(4:74776f)"), 0);
	CHECK_EQ(pando_reclaim_add(a, 3, "10.0.0.3-(6:746872656)"), 0);
	CHECK_EQ(pando_reclaim_remove(a, 3), 0);
	CHECK_EQ(pando_reclaim_remove(a, 3), 0); /* gone already: not an error */
	read_all(b, &s, &skipped);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(skipped, 0);
	CHECK(!strcmp(s.tags[0], "10.0.0.1-(4:6f6e65)"));
	CHECK(!strcmp(s.tags[1], "10.0.0.2-(4:74776f)"));

	/* Client one reclaims on b: two records of its tag, given once. */
	CHECK_EQ(pando_reclaim_add(b, 5, "10.0.0.1-(4:6f6e65)"), 0);
	CHECK_EQ(pando_reclaim_revoke(b, 5, "AAEC"), 0);
	read_all(b, &s, NULL);
	CHECK_EQ(s.n, 2);
	CHECK(!strcmp(s.revoked[0], "AAEC")); /* b's record, the newest */

	CHECK_EQ(pando_reclaim_end_grace(b, &removed), 0);
	CHECK_EQ(removed, 2);
	read_all(b, &s, NULL);
	CHECK_EQ(s.n, 1);
	CHECK(!strcmp(s.tags[0], "10.0.0.1-(4:6f6e65)"));
	/* An active fenced by a later one removes nothing of the later term. */
	CHECK_EQ(pando_reclaim_end_grace(a, &removed), 0);
	CHECK_EQ(removed, 0);
	CHECK_EQ(pando_reclaim_remove(b, 5), 0);
	pando_reclaim_close(a);
	pando_reclaim_close(b);
}

static void test_revoked_handles_accumulate_once_each_up_to_their_bound(void)
{
	struct pando_reclaim *r = open_term(11);
	char handle[RECLAIM_HANDLE_MAX + 2];
	struct seen s;
	int rc = 0, i;

	CHECK_EQ(pando_reclaim_revoke(r, 1, "AAEC"), -ENOENT);
	CHECK_EQ(pando_reclaim_add(r, 1, "10.0.0.1-(1:61)"), 0);
	CHECK_EQ(pando_reclaim_revoke(r, 1, "AAEC"), 0);
	CHECK_EQ(pando_reclaim_revoke(r, 1, "AAEC"), 0);
	CHECK_EQ(pando_reclaim_revoke(r, 1, "BBED"), 0);
	read_all(r, &s, NULL);
	CHECK_EQ(s.n, 1);
	CHECK(!strcmp(s.revoked[0], "AAEC,BBED"));

	memset(handle, 'h', sizeof(handle) - 1);
	handle[sizeof(handle) - 1] = 0;
	CHECK_EQ(pando_reclaim_revoke(r, 1, handle), -EINVAL);
	CHECK_EQ(pando_reclaim_revoke(r, 1, ""), -EINVAL);
	for (i = 2; i < RECLAIM_REVOKED_MAX && !rc; i++) {
		snprintf(handle, sizeof(handle), "h%d", i);
		rc = pando_reclaim_revoke(r, 1, handle);
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(pando_reclaim_revoke(r, 1, "one-too-many"), -ENOSPC);
	CHECK_EQ(pando_reclaim_remove(r, 1), 0);
	pando_reclaim_close(r);
}

static void test_tags_out_of_bounds_are_refused(void)
{
	struct pando_reclaim *r = open_term(12);
	static char tag[RECLAIM_TAG_MAX + 2];
	struct pando_reclaim *bad = NULL;
	char prefix[300];
	const struct pando_reclaim_options o = { .etcd = &eo, .prefix = prefix, .term = 1 };

	memset(tag, 't', sizeof(tag) - 1);
	CHECK_EQ(pando_reclaim_add(r, 1, tag), -EINVAL);
	tag[RECLAIM_TAG_MAX] = 0;
	CHECK_EQ(pando_reclaim_add(r, 1, tag), 0); /* the longest allowed */
	CHECK_EQ(pando_reclaim_add(r, 2, ""), -EINVAL);
	CHECK_EQ(pando_reclaim_remove(r, 1), 0);
	memset(prefix, 'p', sizeof(prefix) - 1);
	prefix[sizeof(prefix) - 1] = 0;
	CHECK_EQ(pando_reclaim_open(&o, &bad), -EINVAL);
	CHECK(bad == NULL);
	pando_reclaim_close(r);
}

static void put(struct etcd_client *c, const char *key, const char *value)
{
	CHECK_EQ(etcd_put(c, key, value, strlen(value), 0), 0);
}

static void test_records_that_are_not_records_are_skipped_and_counted(void)
{
	struct pando_reclaim *r = open_term(20);
	struct etcd_client *c = NULL;
	char many[RECLAIM_REVOKED_MAX * 10 + 64] = "{\"tag\":\"x\",\"revoked\":[";
	struct seen s;
	size_t skipped = 0, removed = 0;

	CHECK_EQ(etcd_client_new(&eo, &c), 0);
	put(c, PREFIX "0000000000000007.0000000000000001", "{\"tag\":\"good\",\"revoked\":[]}");
	put(c, PREFIX "0000000000000008.0000000000000001", "not json");
	put(c, PREFIX "0000000000000009.0000000000000001", "{\"tag\":\"\",\"revoked\":[]}");
	put(c, PREFIX "000000000000000a.0000000000000001",
	    "{\"tag\":\"a\\u0000b\",\"revoked\":[]}");
	put(c, PREFIX "stray", "{\"tag\":\"stray\",\"revoked\":[]}");
	put(c, PREFIX "0000000000000007.00000000000000zz", "{\"tag\":\"bad-id\",\"revoked\":[]}");
	put(c, PREFIX "0000000000000008.0000000000000002", "{\"tag\":\"x\",\"revoked\":\"AAEC\"}");
	put(c, PREFIX "0000000000000008.0000000000000003", "{\"tag\":\"x\",\"revoked\":[7]}");
	for (int i = 0; i <= RECLAIM_REVOKED_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"h%d\"",
			 i ? "," : "", i);
	strcat(many, "]}");
	put(c, PREFIX "0000000000000008.0000000000000004", many);
	read_all(r, &s, &skipped);
	CHECK_EQ(s.n, 1);
	CHECK(!strcmp(s.tags[0], "good"));
	CHECK_EQ(skipped, 8);
	/* The end of the grace period removes the earlier terms' keys,
	 * malformed ones too, and leaves those that sort after this term's. */
	CHECK_EQ(pando_reclaim_end_grace(r, &removed), 0);
	CHECK_EQ(removed, 8);
	CHECK_EQ(etcd_delete(c, PREFIX "stray"), 0);
	etcd_client_free(c);
	pando_reclaim_close(r);
}

/* A host's name becomes a file name in statd's notify list and a word of
 * its record line. */
static void test_host_names_are_what_statd_can_file(void)
{
	char long_name[RECLAIM_HOST_MAX + 2];

	CHECK(pando_reclaim_host_name_ok("127.0.0.2"));
	CHECK(pando_reclaim_host_name_ok("node-17.cluster"));
	CHECK(pando_reclaim_host_name_ok("fe80::1%eth0"));
	CHECK(!pando_reclaim_host_name_ok(""));
	CHECK(!pando_reclaim_host_name_ok("."));
	CHECK(!pando_reclaim_host_name_ok(".."));
	CHECK(!pando_reclaim_host_name_ok(".hidden"));
	CHECK(!pando_reclaim_host_name_ok("../../etc/passwd"));
	CHECK(!pando_reclaim_host_name_ok("a/b"));
	CHECK(!pando_reclaim_host_name_ok("two words"));
	CHECK(!pando_reclaim_host_name_ok("line\nbreak"));
	CHECK(!pando_reclaim_host_name_ok("caf\xc3\xa9"));
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	CHECK(!pando_reclaim_host_name_ok(long_name));
	long_name[RECLAIM_HOST_MAX] = 0;
	CHECK(pando_reclaim_host_name_ok(long_name));
}

/* nfs-utils' record: address, program, version, procedure, 16 bytes of
 * private data in hex, mon_name, my_name (a line rpc.statd 2.6.2 wrote
 * for Ganesha's SM_MON, but for my_name). */
static void test_a_host_record_is_the_line_statd_writes(void)
{
	const char *want = "0100007f 000186b5 00000004 00000010 "
			   "00000000000000000000000000000000 127.0.0.2 mds-b\n";
	char buf[512];

	CHECK_EQ(pando_reclaim_host_record("127.0.0.2", "mds-b", buf, sizeof(buf)),
		 (int)strlen(want));
	CHECK(!strcmp(buf, want));
	CHECK_EQ(pando_reclaim_host_record("127.0.0.2", "mds-b", buf, strlen(want)), -ENAMETOOLONG);
	CHECK_EQ(pando_reclaim_host_record("a b", "mds-b", buf, sizeof(buf)), -ENAMETOOLONG);
	CHECK_EQ(pando_reclaim_host_record("h", "", buf, sizeof(buf)), -ENAMETOOLONG);
}

/* Hosts are records under their own prefix, their id from the name. */
static void test_hosts_are_records_keyed_by_their_name(void)
{
	struct pando_reclaim_options o = { .etcd = &eo,
					   .prefix = "/pando/groups/g1/nsm/",
					   .term = 3 };
	struct pando_reclaim *r = NULL, *next = NULL;
	struct seen s;

	CHECK(pando_reclaim_host_id("127.0.0.2") != pando_reclaim_host_id("127.0.0.3"));
	CHECK_EQ(pando_reclaim_host_id(""), 0xcbf29ce484222325ull);
	CHECK_EQ(pando_reclaim_open(&o, &r), 0);
	CHECK_EQ(pando_reclaim_add(r, pando_reclaim_host_id("127.0.0.2"), "127.0.0.2"), 0);
	CHECK_EQ(pando_reclaim_add(r, pando_reclaim_host_id("127.0.0.3"), "127.0.0.3"), 0);
	CHECK_EQ(pando_reclaim_add(r, pando_reclaim_host_id("127.0.0.2"), "127.0.0.2"), 0);
	CHECK_EQ(pando_reclaim_remove(r, pando_reclaim_host_id("127.0.0.3")), 0);
	o.term = 4;
	CHECK_EQ(pando_reclaim_open(&o, &next), 0);
	read_all(next, &s, NULL);
	CHECK_EQ(s.n, 1);
	CHECK(!strcmp(s.tags[0], "127.0.0.2"));
	pando_reclaim_close(next);
	pando_reclaim_close(r);
}

int main(void)
{
	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: reclaim records need one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	eo = (struct etcd_options){ .endpoints = etcd.url };
	test_the_next_active_reads_each_client_once_and_ends_the_old_term();
	test_revoked_handles_accumulate_once_each_up_to_their_bound();
	test_tags_out_of_bounds_are_refused();
	test_records_that_are_not_records_are_skipped_and_counted();
	test_host_names_are_what_statd_can_file();
	test_a_host_record_is_the_line_statd_writes();
	test_hosts_are_records_keyed_by_their_name();
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
