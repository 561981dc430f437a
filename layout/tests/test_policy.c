/* Storage policies: the rules, the version-1 and version-2 bytes, round trips, every
 * truncation and malformed input, and the layout request a policy makes
 * over the export's defaults. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pando/policy.h"

static const struct pando_policy_defaults defaults = {
	.mirrors = 2,
	.stripe_width = 1,
	.stripe_unit = 1u << 20,
};

static struct pando_policy rs_cold(void)
{
	return (struct pando_policy){ .scheme = PANDO_RS,
				      .k = 8,
				      .m = 2,
				      .stripe_unit = 65536,
				      .cold_after_s = 86400,
				      .cold_k = 10,
				      .cold_m = 4 };
}

static void encoding_is_the_documented_bytes(void)
{
	struct pando_policy p = rs_cold();
	static const uint8_t want[PANDO_POLICY_LEN] = {
		1, PANDO_RS, 0, 8, 2, 0, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x51, 0x80, 10, 4,
	};
	uint8_t buf[PANDO_POLICY_LEN];
	size_t len = 0;

	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, PANDO_POLICY_LEN);
	CHECK_MEM(buf, want, sizeof(want));
}

/* A pool makes it version 2: version 1's fields, the name's length and
 * the name. */
static void a_pool_is_version_2_with_the_name_after(void)
{
	struct pando_policy p = { .scheme = PANDO_RAID1, .copies = 2, .pool = "ssd" };
	static const uint8_t want[] = {
		2, PANDO_RAID1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 's', 's', 'd',
	};
	uint8_t buf[PANDO_POLICY_MAX_LEN];
	size_t len = 0;

	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(want));
	CHECK_MEM(buf, want, sizeof(want));
	strcpy(p.pool, "abcdefghijklmnopqrstuvwxyz01234");
	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, PANDO_POLICY_MAX_LEN);
}

/* The pool's length byte out of 1..31 or not the rest of the blob, a NUL
 * or a character a pool name has not: -EBADMSG; a bad name is not
 * encoded. */
static void malformed_pools_are_ebadmsg(void)
{
	struct pando_policy p = { .scheme = PANDO_RAID0, .pool = "fast" }, q;
	uint8_t buf[PANDO_POLICY_MAX_LEN + 1] = { 0 };
	size_t len;

	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), 0);
	for (size_t n = 0; n < len; n++)
		CHECK_EQ(pando_policy_decode(buf, n, &q), -EBADMSG);
	CHECK_EQ(pando_policy_decode(buf, len + 1, &q), -EBADMSG);
	buf[16] = 0;
	CHECK_EQ(pando_policy_decode(buf, len, &q), -EBADMSG);
	buf[16] = 32;
	CHECK_EQ(pando_policy_decode(buf, PANDO_POLICY_LEN + 33, &q), -EBADMSG);
	buf[16] = 4;
	buf[18] = 0;
	CHECK_EQ(pando_policy_decode(buf, len, &q), -EBADMSG);
	buf[18] = 'A';
	CHECK_EQ(pando_policy_decode(buf, len, &q), -EBADMSG);
	buf[18] = 's';
	CHECK_EQ(pando_policy_decode(buf, len, &q), 0);
	CHECK(!strcmp(q.pool, "fsst"));
	strcpy(p.pool, "-fast");
	CHECK(pando_policy_problem(&p) != NULL);
	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), -EINVAL);
	memset(p.pool, 'a', sizeof(p.pool));
	CHECK_EQ(pando_policy_validate(&p), -EINVAL);
}

static void round_trip(const struct pando_policy *p)
{
	struct pando_policy q = { 0 };
	uint8_t buf[PANDO_POLICY_MAX_LEN];
	size_t len;

	CHECK_EQ(pando_policy_encode(p, buf, sizeof(buf), &len), 0);
	CHECK_EQ(pando_policy_decode(buf, len, &q), 0);
	CHECK_EQ(q.scheme, p->scheme);
	CHECK_EQ(q.copies, p->copies);
	CHECK_EQ(q.k, p->k);
	CHECK_EQ(q.m, p->m);
	CHECK_EQ(q.width, p->width);
	CHECK_EQ(q.stripe_unit, p->stripe_unit);
	CHECK_EQ(q.cold_after_s, p->cold_after_s);
	CHECK_EQ(q.cold_k, p->cold_k);
	CHECK_EQ(q.cold_m, p->cold_m);
	CHECK(!strcmp(q.pool, p->pool));
}

static void every_scheme_round_trips(void)
{
	struct pando_policy mirror = { .scheme = PANDO_RAID1, .copies = 3, .width = 2 };
	struct pando_policy raid0 = { .scheme = PANDO_RAID0, .width = 4, .stripe_unit = 4096 };
	struct pando_policy auto_rs = { .scheme = PANDO_RS, .m = 1 };
	struct pando_policy widest = {
		.scheme = PANDO_RS, .k = 32, .m = 4, .stripe_unit = 1u << 30
	};
	struct pando_policy cold = rs_cold();
	struct pando_policy pooled = { .scheme = PANDO_RS, .k = 4, .m = 2, .pool = "hdd_1" };

	round_trip(&pooled);
	round_trip(&mirror);
	round_trip(&raid0);
	round_trip(&auto_rs);
	round_trip(&widest);
	round_trip(&cold);
}

static void short_buffer_is_enospc_and_sizes_it(void)
{
	struct pando_policy p = rs_cold();
	uint8_t buf[PANDO_POLICY_LEN];
	size_t len = 0;

	CHECK_EQ(pando_policy_encode(&p, buf, PANDO_POLICY_LEN - 1, &len), -ENOSPC);
	CHECK_EQ(len, PANDO_POLICY_LEN);
}

static void every_truncation_is_ebadmsg(void)
{
	struct pando_policy p = rs_cold(), q;
	uint8_t buf[PANDO_POLICY_LEN + 1] = { 0 };
	size_t len;

	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), 0);
	for (size_t n = 0; n < len; n++)
		CHECK_EQ(pando_policy_decode(buf, n, &q), -EBADMSG);
	CHECK_EQ(pando_policy_decode(buf, len + 1, &q), -EBADMSG);
}

static void unknown_version_is_enotsup(void)
{
	struct pando_policy p = rs_cold(), q;
	uint8_t buf[PANDO_POLICY_LEN];
	size_t len;

	CHECK_EQ(pando_policy_encode(&p, buf, sizeof(buf), &len), 0);
	buf[0] = 3;
	CHECK_EQ(pando_policy_decode(buf, len, &q), -ENOTSUP);
	buf[0] = 0;
	CHECK_EQ(pando_policy_decode(buf, len, &q), -ENOTSUP);
}

/* Decodes the good encoding of p with byte i set to v. */
static int decode_with(const struct pando_policy *p, size_t i, uint8_t v)
{
	uint8_t buf[PANDO_POLICY_LEN];
	struct pando_policy q;
	size_t len;

	if (pando_policy_encode(p, buf, sizeof(buf), &len))
		return -1;
	buf[i] = v;
	return pando_policy_decode(buf, len, &q);
}

static void malformed_fields_are_ebadmsg(void)
{
	struct pando_policy p = rs_cold();

	CHECK_EQ(decode_with(&p, 1, 3), -EBADMSG);    /* scheme */
	CHECK_EQ(decode_with(&p, 3, 62), -EBADMSG);   /* k + m = 64: k over 32 */
	CHECK_EQ(decode_with(&p, 4, 0), -EBADMSG);    /* m 0 */
	CHECK_EQ(decode_with(&p, 4, 5), -EBADMSG);    /* m 5 */
	CHECK_EQ(decode_with(&p, 2, 2), -EBADMSG);    /* copies for rs */
	CHECK_EQ(decode_with(&p, 9, 1), -EBADMSG);    /* unit not 4 KiB aligned */
	CHECK_EQ(decode_with(&p, 6, 0x80), -EBADMSG); /* unit over 1 GiB */
	CHECK_EQ(decode_with(&p, 15, 0), -EBADMSG);   /* cold m 0 */
	CHECK_EQ(decode_with(&p, 14, 70), -EBADMSG);  /* cold k + m too wide */
}

static void rules_name_what_is_wrong(void)
{
	struct pando_policy wide = { .scheme = PANDO_RS, .k = 62, .m = 4 };
	struct pando_policy k33 = { .scheme = PANDO_RS, .k = 33, .m = 2 };
	struct pando_policy one_copy = { .scheme = PANDO_RAID1, .copies = 1 };
	struct pando_policy four = { .scheme = PANDO_RAID1, .copies = 4 };
	struct pando_policy mirror_k = { .scheme = PANDO_RAID1, .copies = 2, .k = 2 };
	struct pando_policy raid0_m = { .scheme = PANDO_RAID0, .m = 1 };
	struct pando_policy odd_unit = { .scheme = PANDO_RAID0, .stripe_unit = 6000 };
	struct pando_policy cold_alone = { .scheme = PANDO_RAID0, .cold_k = 4, .cold_m = 2 };
	struct pando_policy cold_bad = { .scheme = PANDO_RAID0, .cold_after_s = 60, .cold_k = 4 };
	struct pando_policy ok = { .scheme = PANDO_RAID1, .copies = 2, .stripe_unit = 65536 };

	CHECK(pando_policy_problem(&wide) != NULL);
	CHECK(strstr(pando_policy_problem(&wide), "k + m") != NULL);
	CHECK(pando_policy_problem(&k33) != NULL);
	CHECK(pando_policy_problem(&one_copy) != NULL);
	CHECK(pando_policy_problem(&four) != NULL);
	CHECK(pando_policy_problem(&mirror_k) != NULL);
	CHECK(pando_policy_problem(&raid0_m) != NULL);
	CHECK(pando_policy_problem(&odd_unit) != NULL);
	CHECK(pando_policy_problem(&cold_alone) != NULL);
	CHECK(pando_policy_problem(&cold_bad) != NULL);
	CHECK(pando_policy_problem(&ok) == NULL);
	CHECK_EQ(pando_policy_validate(&wide), -EINVAL);
	CHECK_EQ(pando_policy_validate(&ok), 0);
}

static void encode_refuses_an_invalid_policy(void)
{
	struct pando_policy bad = { .scheme = PANDO_RS, .k = 4, .m = 0 };
	uint8_t buf[PANDO_POLICY_LEN];
	size_t len;

	CHECK_EQ(pando_policy_encode(&bad, buf, sizeof(buf), &len), -EINVAL);
}

static void no_policy_requests_the_export_defaults(void)
{
	struct pando_layout_request req = { 0 };
	struct pando_policy_defaults raid0 = { .mirrors = 1,
					       .stripe_width = 3,
					       .stripe_unit = 65536 };

	pando_policy_request(NULL, &defaults, &req);
	CHECK_EQ(req.raid, PANDO_RAID1);
	CHECK_EQ(req.copies, 2);
	CHECK_EQ(req.data, 1);
	CHECK_EQ(req.parity, 0);
	CHECK_EQ(req.stripe_unit, 1u << 20);
	CHECK_EQ(pando_request_max_width(&req), 2);
	pando_policy_request(NULL, &raid0, &req);
	CHECK_EQ(req.raid, PANDO_RAID0);
	CHECK_EQ(req.copies, 1);
	CHECK_EQ(req.data, 3);
	CHECK_EQ(pando_request_max_width(&req), 3);
}

static void policy_overrides_what_it_sets(void)
{
	struct pando_policy mirror3 = { .scheme = PANDO_RAID1, .copies = 3 };
	struct pando_policy raid0 = { .scheme = PANDO_RAID0, .width = 4, .stripe_unit = 65536 };
	struct pando_layout_request req = { 0 };

	pando_policy_request(&mirror3, &defaults, &req);
	CHECK_EQ(req.raid, PANDO_RAID1);
	CHECK_EQ(req.copies, 3);
	CHECK_EQ(req.data, 1);
	CHECK_EQ(req.stripe_unit, 1u << 20);
	CHECK_EQ(pando_request_max_width(&req), 3);
	pando_policy_request(&raid0, &defaults, &req);
	CHECK_EQ(req.raid, PANDO_RAID0);
	CHECK_EQ(req.copies, 1);
	CHECK_EQ(req.data, 4);
	CHECK_EQ(req.stripe_unit, 65536);
}

static void rs_policy_requests_k_and_m(void)
{
	struct pando_policy rs = rs_cold();
	struct pando_policy auto_rs = { .scheme = PANDO_RS, .m = 2 };
	struct pando_layout_request req = { 0 };

	pando_policy_request(&rs, &defaults, &req);
	CHECK_EQ(req.raid, PANDO_RS);
	CHECK_EQ(req.copies, 1);
	CHECK_EQ(req.data, 8);
	CHECK_EQ(req.parity, 2);
	CHECK_EQ(req.stripe_unit, 65536);
	CHECK_EQ(pando_request_max_width(&req), 10);
	pando_policy_request(&auto_rs, &defaults, &req);
	CHECK_EQ(req.data, 0);
	CHECK_EQ(req.parity, 2);
	CHECK_EQ(pando_request_max_width(&req), PANDO_MAP_MAX_WIDTH);
}

int main(void)
{
	encoding_is_the_documented_bytes();
	a_pool_is_version_2_with_the_name_after();
	malformed_pools_are_ebadmsg();
	every_scheme_round_trips();
	short_buffer_is_enospc_and_sizes_it();
	every_truncation_is_ebadmsg();
	unknown_version_is_enotsup();
	malformed_fields_are_ebadmsg();
	rules_name_what_is_wrong();
	encode_refuses_an_invalid_policy();
	no_policy_requests_the_export_defaults();
	policy_overrides_what_it_sets();
	rs_policy_requests_k_and_m();
	CHECK_DONE();
}
