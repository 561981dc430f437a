/* ff_layout4 (RFC 8435 section 5.1): known bytes written out field by
 * field from the RFC's XDR, round trips, RFC rules the encoder enforces,
 * and damaged input the decoder refuses. */
#include <errno.h>

#include "check.h"
#include "fixture.h"
#include "pando/ff_xdr.h"
#include "xdr_bytes.h"

/* Two mirrors of one data server each: the whole-file mirrored layout
 * every Linux client takes. */
/* by hand: one XDR field a line (clang-format would put one byte a line) */
/* clang-format off */
static const uint8_t mirrored[] = {
	U64(0),					/* ffl_stripe_unit: 0, one stripe */
	U32(2),					/* ffl_mirrors<>: 2 */
	U32(1),					/* mirror 0, ffm_data_servers<>: 1 */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* ffds_deviceid[16] */
	0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
	U32(1),					/* ffds_efficiency */
	U32(0), REP12(0x00),			/* ffds_stateid: seqid, other[12] (anonymous) */
	U32(1),					/* ffds_fh_vers<>: 1 */
	U32(5), 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0, 0, 0,	/* nfs_fh4: 5 bytes + 3 pad */
	U32(1), '0', 0, 0, 0,			/* ffds_user "0" */
	U32(1), '0', 0, 0, 0,			/* ffds_group "0" */
	U32(1),					/* mirror 1, ffm_data_servers<>: 1 */
	0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20,
	U32(2),					/* ffds_efficiency */
	U32(1), REP12(0x22),			/* ffds_stateid */
	U32(1),					/* ffds_fh_vers<>: 1 */
	U32(4), 0x01, 0x02, 0x03, 0x04,		/* nfs_fh4: 4 bytes, no pad */
	U32(4), '1', '0', '0', '0',		/* ffds_user "1000" */
	U32(3), '1', '0', '0', 0,		/* ffds_group "100" + 1 pad */
	U32(PANDO_FF_FLAGS_NO_IO_THRU_MDS),	/* ffl_flags: 2 */
	U32(60),				/* ffl_stats_collect_hint: 60 s */
};
/* clang-format on */

/* One mirror striped over two data servers (Linux 6.18+). */
/* clang-format off */
static const uint8_t striped[] = {
	U64(65536),				/* ffl_stripe_unit */
	U32(1),					/* ffl_mirrors<>: 1 */
	U32(2),					/* ffm_data_servers<>: 2 */
	REP16(0x31), U32(1), U32(0), REP12(0x00), U32(1), U32(1), 0x07, 0, 0, 0,
	U32(1), '0', 0, 0, 0, U32(1), '0', 0, 0, 0,
	REP16(0x32), U32(1), U32(0), REP12(0x00), U32(1), U32(1), 0x08, 0, 0, 0,
	U32(1), '0', 0, 0, 0, U32(1), '0', 0, 0, 0,
	U32(0),					/* ffl_flags */
	U32(0),					/* ffl_stats_collect_hint */
};
/* clang-format on */

static struct pando_ff_fh fh_a = { 5, { 0xaa, 0xbb, 0xcc, 0xdd, 0xee } };
static struct pando_ff_fh fh_b = { 4, { 1, 2, 3, 4 } };
static struct pando_ff_fh fh_7 = { 1, { 7 } }, fh_8 = { 1, { 8 } };

static void mirrored_layout(struct pando_ff_data_server ds[2], struct pando_ff_mirror mirrors[2],
			    struct pando_ff_layout *l)
{
	memset(ds, 0, 2 * sizeof(ds[0]));
	for (int i = 0; i < 16; i++) {
		ds[0].deviceid[i] = (uint8_t)(1 + i);
		ds[1].deviceid[i] = (uint8_t)(0x11 + i);
	}
	ds[0].efficiency = 1;
	ds[0].fh_count = 1;
	ds[0].fh_vers = &fh_a;
	strcpy(ds[0].user, "0");
	strcpy(ds[0].group, "0");
	ds[1].efficiency = 2;
	ds[1].stateid.seqid = 1;
	memset(ds[1].stateid.other, 0x22, 12);
	ds[1].fh_count = 1;
	ds[1].fh_vers = &fh_b;
	strcpy(ds[1].user, "1000");
	strcpy(ds[1].group, "100");
	mirrors[0] = (struct pando_ff_mirror){ 1, &ds[0] };
	mirrors[1] = (struct pando_ff_mirror){ 1, &ds[1] };
	*l = (struct pando_ff_layout){ .stripe_unit = 0,
				       .mirror_count = 2,
				       .mirrors = mirrors,
				       .flags = PANDO_FF_FLAGS_NO_IO_THRU_MDS,
				       .stats_collect_hint = 60 };
}

static void striped_layout(struct pando_ff_data_server ds[2], struct pando_ff_mirror *mirror,
			   struct pando_ff_layout *l)
{
	memset(ds, 0, 2 * sizeof(ds[0]));
	for (int i = 0; i < 2; i++) {
		memset(ds[i].deviceid, 0x31 + i, 16);
		ds[i].efficiency = 1;
		ds[i].fh_count = 1;
		ds[i].fh_vers = i ? &fh_8 : &fh_7;
		strcpy(ds[i].user, "0");
		strcpy(ds[i].group, "0");
	}
	*mirror = (struct pando_ff_mirror){ 2, ds };
	*l = (struct pando_ff_layout){ .stripe_unit = 65536, .mirror_count = 1, .mirrors = mirror };
}

static void test_known_bytes(void)
{
	struct pando_ff_data_server ds[2];
	struct pando_ff_mirror mirrors[2];
	struct pando_ff_layout l, back;
	uint8_t buf[512];
	size_t len;

	mirrored_layout(ds, mirrors, &l);
	CHECK_EQ(pando_ff_layout_encode(&l, NULL, 0, &len), -ENOSPC);
	CHECK_EQ(len, sizeof(mirrored));
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(mirrored));
	CHECK_MEM(buf, mirrored, sizeof(mirrored));

	CHECK_EQ(pando_ff_layout_decode(mirrored, sizeof(mirrored), &back), 0);
	CHECK_EQ(back.stripe_unit, 0);
	CHECK_EQ(back.mirror_count, 2);
	CHECK_EQ(back.flags, PANDO_FF_FLAGS_NO_IO_THRU_MDS);
	CHECK_EQ(back.stats_collect_hint, 60);
	CHECK_EQ(back.mirrors[1].ds_count, 1);
	CHECK_EQ(back.mirrors[1].ds[0].efficiency, 2);
	CHECK_EQ(back.mirrors[1].ds[0].stateid.seqid, 1);
	CHECK_MEM(back.mirrors[1].ds[0].stateid.other, ds[1].stateid.other, 12);
	CHECK_MEM(back.mirrors[0].ds[0].deviceid, ds[0].deviceid, 16);
	CHECK_EQ(back.mirrors[0].ds[0].fh_vers[0].len, 5);
	CHECK_MEM(back.mirrors[0].ds[0].fh_vers[0].data, fh_a.data, 5);
	CHECK(strcmp(back.mirrors[1].ds[0].user, "1000") == 0);
	CHECK(strcmp(back.mirrors[1].ds[0].group, "100") == 0);
	pando_ff_layout_release(&back);

	striped_layout(ds, mirrors, &l);
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(striped));
	CHECK_MEM(buf, striped, sizeof(striped));
}

/* One data server as the metadata manager writes it (ganesha-fsal/fsal/
 * mds.c): a 56-byte capability handle, then user and group ids as numeric
 * strings, here the longest (10 digits, 2 bytes of padding), the width
 * of every holder's.
 * The entry is 132 bytes: mds.c's FF_DS_BYTES, which sizes the buffer
 * Ganesha gives LAYOUTGET. */
/* clang-format off */
static const uint8_t ten_digit[] = {
	U64(0), U32(1), U32(1),			/* stripe unit, 1 mirror, 1 data server */
	REP16(0x41),				/* ffds_deviceid */
	U32(1), U32(0), REP12(0x00),		/* efficiency, anonymous stateid */
	U32(1), U32(56),			/* one nfs_fh4 of 56 bytes */
	REP16(0xc5), REP16(0xc5), REP16(0xc5), REP4(0xc5), REP4(0xc5),
	U32(10), '4', '2', '9', '4', '9', '6', '7', '2', '9', '4', 0, 0,	/* ffds_user */
	U32(10), '4', '0', '0', '0', '0', '0', '0', '0', '0', '1', 0, 0,	/* ffds_group */
	U32(0), U32(0),				/* flags, stats hint */
};
/* clang-format on */

static void test_ten_digit_ids(void)
{
	struct pando_ff_fh cap = { .len = 56 };
	struct pando_ff_data_server ds = { .efficiency = 1, .fh_count = 1, .fh_vers = &cap };
	struct pando_ff_mirror m = { 1, &ds };
	struct pando_ff_layout l = { .mirror_count = 1, .mirrors = &m };
	uint8_t buf[256];
	size_t len;

	memset(ds.deviceid, 0x41, sizeof(ds.deviceid));
	memset(cap.data, 0xc5, 56);
	snprintf(ds.user, sizeof(ds.user), "%u", 4294967294u);
	snprintf(ds.group, sizeof(ds.group), "%u", 4000000001u);
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(ten_digit));
	CHECK_MEM(buf, ten_digit, sizeof(ten_digit));
	CHECK_EQ(sizeof(ten_digit) - 20 - 4, 132);
}

/* RFC 8435 5.1: one stripe means ffl_stripe_unit 0, and back; the same
 * stripe count in every mirror. */
static void test_rfc_rules(void)
{
	struct pando_ff_data_server ds[2], three[3];
	struct pando_ff_mirror mirrors[2];
	struct pando_ff_layout l;
	struct pando_ff_fh big = { PANDO_FF_FH_MAX + 1, { 0 } };
	uint8_t buf[512];
	size_t len;

	mirrored_layout(ds, mirrors, &l);
	l.stripe_unit = 4096;
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), -EINVAL);
	striped_layout(ds, mirrors, &l);
	l.stripe_unit = 0;
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), -EINVAL);
	striped_layout(three, mirrors, &l);
	mirrors[1] = (struct pando_ff_mirror){ 1, three };
	l.mirror_count = 2; /* 2 stripes, then 1 */
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), -EINVAL);
	mirrored_layout(ds, mirrors, &l);
	l.mirror_count = 0;
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), -EINVAL);
	mirrored_layout(ds, mirrors, &l);
	ds[1].fh_count = 0;
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), -EINVAL);
	mirrored_layout(ds, mirrors, &l);
	ds[0].fh_vers = &big;
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(buf), &len), -EINVAL);
	mirrored_layout(ds, mirrors, &l);
	CHECK_EQ(pando_ff_layout_encode(&l, buf, sizeof(mirrored) - 1, &len), -ENOSPC);
	CHECK_EQ(len, sizeof(mirrored));
}

static void test_damaged(void)
{
	struct pando_ff_layout l;
	uint8_t bad[sizeof(mirrored) + 4];
	int wrong = 0;

	for (size_t n = 0; n < sizeof(mirrored); n++)
		wrong += pando_ff_layout_decode(mirrored, n, &l) != -EBADMSG;
	CHECK_EQ(wrong, 0);
	memcpy(bad, mirrored, sizeof(mirrored));
	memset(bad + sizeof(mirrored), 0, 4);
	CHECK_EQ(pando_ff_layout_decode(bad, sizeof(bad), &l), -EBADMSG); /* trailing */
#define MUTATE(at, value) \
	do { \
		memcpy(bad, mirrored, sizeof(mirrored)); \
		bad[at] = (value); \
		CHECK_EQ(pando_ff_layout_decode(bad, sizeof(mirrored), &l), -EBADMSG); \
		CHECK(l.mirrors == NULL && l.mirror_count == 0); \
	} while (0)
	MUTATE(8, 0xff);  /* ffl_mirrors: 4 billion mirrors in 200 bytes */
	MUTATE(15, 0x7f); /* ffm_data_servers: 127 */
	MUTATE(55, 0xff); /* fh_vers<>: 255 file handles */
	MUTATE(59, 0x81); /* nfs_fh4 of 129 bytes: over NFS4_FHSIZE */
	MUTATE(65, 0x01); /* non-zero padding after the file handle */
	MUTATE(72, 0x00); /* user "\0": an embedded NUL */
	MUTATE(84 + 4 + 16 + 4 + 16 + 4 + 3, 0x02); /* mirror 1: two file handles, bytes short */
#undef MUTATE
}

static int encode_any(const void *v, uint8_t *buf, size_t cap, size_t *len)
{
	return pando_ff_layout_encode(v, buf, cap, len);
}

static int decode_any(const uint8_t *buf, size_t len, void *out)
{
	return pando_ff_layout_decode(buf, len, out);
}

static void release_any(void *v)
{
	pando_ff_layout_release(v);
}

static const struct fixture_codec codec = { encode_any, decode_any, release_any };

/* Random layouts: encode, decode, encode again: the same bytes; and
 * every single-byte corruption decodes cleanly or is refused. */
static void test_round_trips_and_fuzz(void)
{
	static struct pando_ff_fh fhs[8];
	struct pando_ff_data_server ds[3][6];
	struct pando_ff_mirror mirrors[3];
	int bad = 0;

	for (int round = 0; round < 300; round++) {
		uint32_t nm = 1 + (uint32_t)(fixture_rand() % 3),
			 ns = 1 + (uint32_t)(fixture_rand() % 6);
		struct pando_ff_layout l = { .stripe_unit = ns > 1 ? 4096u << (fixture_rand() % 8)
								   : 0,
					     .mirror_count = nm,
					     .mirrors = mirrors,
					     .flags = (uint32_t)(fixture_rand() % 16),
					     .stats_collect_hint = (uint32_t)fixture_rand() };
		struct pando_ff_layout back;
		uint8_t buf[8192], again[8192];

		for (int i = 0; i < 8; i++) {
			fhs[i].len = (uint32_t)(fixture_rand() % (PANDO_FF_FH_MAX + 1));
			for (uint32_t b = 0; b < fhs[i].len; b++)
				fhs[i].data[b] = (uint8_t)fixture_rand();
		}
		for (uint32_t m = 0; m < nm; m++) {
			mirrors[m] = (struct pando_ff_mirror){ ns, ds[m] };
			for (uint32_t s = 0; s < ns; s++) {
				struct pando_ff_data_server *d = &ds[m][s];

				memset(d, 0, sizeof(*d));
				for (int i = 0; i < 16; i++)
					d->deviceid[i] = (uint8_t)fixture_rand();
				d->efficiency = (uint32_t)fixture_rand();
				d->stateid.seqid = (uint32_t)fixture_rand();
				d->fh_count = 1 + (uint32_t)(fixture_rand() % 2);
				d->fh_vers = &fhs[fixture_rand() % 7];
				snprintf(d->user, sizeof(d->user), "%u",
					 (unsigned)(fixture_rand() % 100000));
				snprintf(d->group, sizeof(d->group), "g%u@example.org",
					 (unsigned)(fixture_rand() % 100));
			}
		}
		bad += fixture_codec_holds(&codec, &l, &back, buf, again, sizeof(buf));
	}
	CHECK_EQ(bad, 0);
}

int main(void)
{
	test_known_bytes();
	test_ten_digit_ids();
	test_rfc_rules();
	test_damaged();
	test_round_trips_and_fuzz();
	CHECK_DONE();
}
