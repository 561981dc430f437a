/* Quotas in rquota's units (rquota.h): reported in 1 KiB blocks while
 * they fit 32 bits and in larger power-of-two blocks after; limits round
 * up so a small quota never reads as none; the hard limit is reported as
 * the soft one too; file counts past 32 bits read as the most rquota
 * carries.  A SETQUOTA's limits are 1 KiB blocks; a soft limit Pando
 * would not keep is refused. */
#include <errno.h>

#include "check.h"
#include "rquota.h"

#define KIB 1024ull
#define TIB (KIB * KIB * KIB * KIB)

static void test_a_quota_that_fits_is_reported_in_1_kib_blocks(void)
{
	struct ns_quota q = { .bytes = 64 * KIB, .files = 10 },
			used = { .bytes = 5000, .files = 3 };
	struct pando_rquota r;

	pando_rquota_report(&q, &used, &r);
	CHECK_EQ(r.bsize, 1024);
	CHECK_EQ(r.bhardlimit, 64);
	CHECK_EQ(r.bsoftlimit, 64);
	CHECK_EQ(r.curblocks, 5); /* 5000 bytes use part of a fifth block */
	CHECK_EQ(r.fhardlimit, 10);
	CHECK_EQ(r.fsoftlimit, 10);
	CHECK_EQ(r.curfiles, 3);
}

static void test_no_quota_reports_zero_limits_and_the_usage(void)
{
	struct ns_quota q = { 0 }, used = { .bytes = 1, .files = 1 };
	struct pando_rquota r;

	pando_rquota_report(&q, &used, &r);
	CHECK_EQ(r.bhardlimit, 0);
	CHECK_EQ(r.bsoftlimit, 0);
	CHECK_EQ(r.fhardlimit, 0);
	CHECK_EQ(r.curblocks, 1);
	CHECK_EQ(r.curfiles, 1);
}

static void test_a_limit_below_a_block_still_reads_as_a_limit(void)
{
	struct ns_quota q = { .bytes = 100 }, used = { 0 };
	struct pando_rquota r;

	pando_rquota_report(&q, &used, &r);
	CHECK_EQ(r.bhardlimit, 1);
	CHECK_EQ(r.curblocks, 0);
}

static void test_counts_past_32_bits_take_a_larger_block(void)
{
	struct ns_quota q = { .bytes = 8 * TIB }, used = { .bytes = 3 * TIB };
	struct ns_quota q2 = { .bytes = 1 * TIB }, used2 = { .bytes = 16 * TIB };
	struct pando_rquota r;

	pando_rquota_report(&q, &used, &r);
	CHECK_EQ(r.bsize, 4096); /* 8 TiB in 4 KiB blocks is 2^31 */
	CHECK_EQ(r.bhardlimit, 8 * TIB / 4096);
	CHECK_EQ(r.curblocks, 3 * TIB / 4096);
	/* Usage over the quota sets the block size as well. */
	pando_rquota_report(&q2, &used2, &r);
	CHECK_EQ(r.bsize, 8192);
	CHECK(r.curblocks <= UINT32_MAX);
	CHECK_EQ(r.curblocks * r.bsize, 16 * TIB);
}

static void test_file_counts_past_32_bits_read_as_the_most_rquota_carries(void)
{
	struct ns_quota q = { .files = 1ull << 33 }, used = { .files = (1ull << 32) + 5 };
	struct pando_rquota r;

	pando_rquota_report(&q, &used, &r);
	CHECK_EQ(r.fhardlimit, UINT32_MAX);
	CHECK_EQ(r.curfiles, UINT32_MAX);
}

static void test_setquota_limits_are_1_kib_blocks_and_files(void)
{
	struct pando_rquota r = {
		.bhardlimit = 2048, .fhardlimit = 10, .curblocks = 99, .curfiles = 7
	};
	struct ns_quota q;

	CHECK_EQ(pando_rquota_limits(&r, &q), 0);
	CHECK_EQ(q.bytes, 2048 * KIB);
	CHECK_EQ(q.files, 10);
	/* A soft limit equal to its hard one is the same quota. */
	r.bsoftlimit = 2048;
	r.fsoftlimit = 10;
	CHECK_EQ(pando_rquota_limits(&r, &q), 0);
	CHECK_EQ(q.bytes, 2048 * KIB);
	/* All zero clears the quota. */
	r = (struct pando_rquota){ 0 };
	CHECK_EQ(pando_rquota_limits(&r, &q), 0);
	CHECK_EQ(q.bytes, 0);
	CHECK_EQ(q.files, 0);
}

static void test_a_soft_limit_pando_would_not_keep_or_a_limit_past_64_bits_is_refused(void)
{
	struct pando_rquota below = { .bsoftlimit = 1024, .bhardlimit = 2048 };
	struct pando_rquota alone = { .fsoftlimit = 5 };
	struct pando_rquota huge = { .bhardlimit = UINT64_MAX / 512 };
	struct ns_quota q = { .bytes = 7, .files = 7 };

	CHECK_EQ(pando_rquota_limits(&below, &q), -EINVAL);
	CHECK_EQ(pando_rquota_limits(&alone, &q), -EINVAL);
	CHECK_EQ(pando_rquota_limits(&huge, &q), -EINVAL); /* more bytes than 64 bits hold */
	CHECK_EQ(q.bytes, 7);
	CHECK_EQ(q.files, 7);
}

int main(void)
{
	test_a_quota_that_fits_is_reported_in_1_kib_blocks();
	test_no_quota_reports_zero_limits_and_the_usage();
	test_a_limit_below_a_block_still_reads_as_a_limit();
	test_counts_past_32_bits_take_a_larger_block();
	test_file_counts_past_32_bits_read_as_the_most_rquota_carries();
	test_setquota_limits_are_1_kib_blocks_and_files();
	test_a_soft_limit_pando_would_not_keep_or_a_limit_past_64_bits_is_refused();
	CHECK_DONE();
}
