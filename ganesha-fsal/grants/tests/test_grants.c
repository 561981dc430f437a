/* pando_grants: granting, returning, committing and the write-layout
 * record, against a fake clock and recording callbacks. */
#include "check.h"
#include "fake_ops.h"

#include <errno.h>

static void a_grant_on_a_quiet_file_is_recorded_with_the_holder(void)
{
	struct fake fk;
	struct pando_grants *g = fake_grants(&fk);
	struct pando_grant *s = NULL;

	CHECK_EQ(fake_grant(&fk, 5, 3, false, &s), 0);
	CHECK(s && s->owner == g && s->ino == 5 && s->clientid == 3 && !s->write);
	CHECK(s && strcmp(s->client, "10.0.0.3") == 0);
	CHECK_EQ(fake_stats(&fk).files, 1);
	CHECK_EQ(fake_stats(&fk).segments, 1);
	CHECK_EQ(fake_stats(&fk).granted, 1);
	CHECK_EQ(fk.marked[5], 0); /* a read layout is not recorded */
	CHECK_EQ(pando_grants_holders(g), 1);
	pando_grant_end(s);
	fake_free(&fk);
}

static void a_write_grant_records_the_file_durably_once(void)
{
	struct fake fk;
	struct pando_grant *a, *b;

	fake_grants(&fk);
	CHECK_EQ(fake_grant(&fk, 5, 3, true, &a), 0);
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &b), 0);
	CHECK_EQ(fk.marked[5], 1);
	CHECK_EQ(fk.nmarks, 1);
	pando_grants_committed(fk.g, 5);
	pando_grant_end(a);
	CHECK_EQ(fk.marked[5], 1); /* b still writes */
	pando_grant_end(b);
	CHECK_EQ(fk.marked[5], 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void a_write_grant_whose_record_fails_is_refused(void)
{
	struct fake fk;
	struct pando_grant *s = NULL;

	fake_grants(&fk);
	fk.mark_rc = -EIO;
	CHECK_EQ(fake_grant(&fk, 5, 3, true, &s), -EIO);
	CHECK_EQ(fake_stats(&fk).segments, 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void returning_one_segment_keeps_the_others(void)
{
	struct fake fk;
	struct pando_grant *a, *b;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &a);
	fake_grant(&fk, 5, 4, false, &b);
	pando_grant_end(a);
	CHECK_EQ(fake_stats(&fk).segments, 1);
	CHECK_EQ(fake_stats(&fk).files, 1);
	CHECK_EQ(fake_stats(&fk).returned, 1);
	pando_grant_end(b);
	CHECK_EQ(fake_stats(&fk).segments, 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	CHECK_EQ(fake_stats(&fk).returned, 2);
	fake_free(&fk);
}

static void an_ungrant_takes_back_the_grant_and_its_count(void)
{
	struct fake fk;
	struct pando_grant *s;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	pando_grants_ungrant(fk.g, s);
	CHECK_EQ(fake_stats(&fk).granted, 0);
	CHECK_EQ(fake_stats(&fk).returned, 0);
	CHECK_EQ(fake_stats(&fk).segments, 0);
	CHECK_EQ(fk.marked[5], 0);
	fake_free(&fk);
}

static void a_write_segment_ending_uncommitted_asks_for_a_size_check(void)
{
	struct fake fk;
	struct pando_grant *s;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	pando_grant_end(s);
	CHECK_EQ(fk.settles[5], 1);
	CHECK_EQ(fk.marked[5], 1); /* kept until the check is done */
	pando_grants_settled(fk.g, 5, true);
	CHECK_EQ(fk.marked[5], 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void a_committed_write_segment_needs_no_size_check(void)
{
	struct fake fk;
	struct pando_grant *s, *r;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	pando_grants_committed(fk.g, 5);
	/* A commit before a grant does not count for it. */
	fake_grant(&fk, 5, 4, true, &r);
	pando_grant_end(s);
	CHECK_EQ(fk.settles[5], 0);
	pando_grant_end(r);
	CHECK_EQ(fk.settles[5], 1);
	pando_grants_settled(fk.g, 5, true);
	fake_free(&fk);
}

static void a_failed_size_check_keeps_the_record_for_the_next_start(void)
{
	struct fake fk;
	struct pando_grant *s;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	pando_grant_end(s);
	pando_grants_settled(fk.g, 5, false);
	CHECK_EQ(fk.marked[5], 1);
	fake_free(&fk);
}

static void the_capability_version_stands_while_layouts_are_out(void)
{
	struct fake fk;
	struct pando_grant *s;
	uint32_t v = 0;

	fake_grants(&fk);
	CHECK_EQ(pando_grants_cap_version(fk.g, 5), 0);
	CHECK_EQ(pando_grants_set_cap_version(fk.g, 5, 9, &v), 0);
	CHECK_EQ(v, 9);
	/* With no layouts out the file is not kept: read again next time. */
	CHECK_EQ(pando_grants_cap_version(fk.g, 5), 0);
	fake_grant(&fk, 5, 3, false, &s); /* asks with version 1 */
	CHECK_EQ(pando_grants_cap_version(fk.g, 5), 1);
	CHECK_EQ(pando_grants_set_cap_version(fk.g, 5, 4, &v), 0);
	CHECK_EQ(v, 1); /* an earlier one wins */
	pando_grant_end(s);
	fake_free(&fk);
}

static void a_segment_outliving_its_grants_is_freed_by_its_holder(void)
{
	struct fake fk;
	struct pando_grant *s;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	fake_free(&fk);
	CHECK(s->owner == NULL);
	pando_grant_end(s); /* no use after free (ASan) */
}

static void holders_count_distinct_clients(void)
{
	struct fake fk;
	struct pando_grant *s[4];

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &s[0]);
	fake_grant(&fk, 6, 3, false, &s[1]);
	fake_grant(&fk, 6, 4, false, &s[2]);
	fake_grant(&fk, 7, 8, true, &s[3]);
	CHECK_EQ(pando_grants_holders(fk.g), 3);
	pando_grants_count_io_error(fk.g);
	CHECK_EQ(fake_stats(&fk).io_errors, 1);
	CHECK_EQ(fake_stats(&fk).files, 3);
	for (int i = 0; i < 4; i++)
		pando_grant_end(s[i]);
	CHECK_EQ(pando_grants_holders(fk.g), 0);
	fake_free(&fk);
}

int main(void)
{
	a_grant_on_a_quiet_file_is_recorded_with_the_holder();
	a_write_grant_records_the_file_durably_once();
	a_write_grant_whose_record_fails_is_refused();
	returning_one_segment_keeps_the_others();
	an_ungrant_takes_back_the_grant_and_its_count();
	a_write_segment_ending_uncommitted_asks_for_a_size_check();
	a_committed_write_segment_needs_no_size_check();
	a_failed_size_check_keeps_the_record_for_the_next_start();
	the_capability_version_stands_while_layouts_are_out();
	a_segment_outliving_its_grants_is_freed_by_its_holder();
	holders_count_distinct_clients();
	CHECK_DONE();
}
