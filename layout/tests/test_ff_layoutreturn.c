/* ff_layoutreturn4 (RFC 8435 section 9.3, io_info4 and device_error4 from
 * RFC 7862): known bytes written from the RFC definitions, 64-bit I/O
 * counts, round trips, and damaged or Ganesha-shaped bodies refused. */
#include <errno.h>

#include "check.h"
#include "fixture.h"
#include "pando/ff_xdr.h"
#include "xdr_bytes.h"

#define NFS4ERR_IO 5
#define OP_WRITE 38

/* One I/O error report and one statistics report. */
static const uint8_t body[] = {
	U32(1),                   /* fflr_ioerr_report<>: 1 */
	U64(0),                   /*   ffie_offset */
	U64(UINT64_MAX),          /*   ffie_length: to EOF */
	U32(2), REP12(0x33),      /*   ffie_stateid */
	U32(1),                   /*   ffie_errors<>: 1 */
	REP16(0x44),              /*     de_deviceid */
	U32(NFS4ERR_IO),          /*     de_status */
	U32(OP_WRITE),            /*     de_opnum */
	U32(1),                   /* fflr_iostats_report<>: 1 */
	U64(4096),                /*   ffis_offset */
	U64(8192),                /*   ffis_length */
	U32(3), REP12(0x55),      /*   ffis_stateid */
	U64(0x100000002ull),      /*   ffis_read.ii_count: past 32 bits */
	U64(0x200000000ull),      /*   ffis_read.ii_bytes */
	U64(7),                   /*   ffis_write.ii_count */
	U64(28672),               /*   ffis_write.ii_bytes */
	REP16(0x66),              /*   ffis_deviceid */
	U32(3), 't', 'c', 'p', 0, /*   ffl_addr.na_r_netid "tcp" */
	U32(13), '1', '2', '7', '.', '0', '.', '0', '.', '1', '.', '8', '.', '1', 0, 0, 0,
	/*   ffl_addr.na_r_addr "127.0.0.1.8.1" */
	U32(3), 9, 8, 7, 0, /*   ffl_fhandle */
	U64(1), U64(2), U64(3), U64(4),
	U64(5),         /* ffl_read: ops/bytes requested, completed, not delivered */
	U64(6), U32(7), /*     ffil_total_busy_time */
	U64(8), U32(9), /*     ffil_aggregate_completion_time */
	U64(10), U64(11), U64(12), U64(13), U64(14),          /* ffl_write */
	U64(15), U32(16), U64(17), U32(18), U64(19), U32(20), /*   ffl_duration */
	U32(0),                                               /*   ffl_local: FALSE */
};

static void check_decoded(const struct pando_ff_layoutreturn *r)
{
	const struct pando_ff_iostats *s = &r->iostats[0];
	const struct pando_ff_layoutupdate *u = &s->layoutupdate;

	CHECK_EQ(r->ioerr_count, 1);
	CHECK_EQ(r->ioerrs[0].offset, 0);
	CHECK(r->ioerrs[0].length == UINT64_MAX);
	CHECK_EQ(r->ioerrs[0].stateid.seqid, 2);
	CHECK_EQ(r->ioerrs[0].error_count, 1);
	CHECK_EQ(r->ioerrs[0].errors[0].deviceid[15], 0x44);
	CHECK_EQ(r->ioerrs[0].errors[0].status, NFS4ERR_IO);
	CHECK_EQ(r->ioerrs[0].errors[0].opnum, OP_WRITE);
	CHECK_EQ(r->iostats_count, 1);
	CHECK_EQ(s->offset, 4096);
	CHECK_EQ(s->length, 8192);
	CHECK_EQ(s->stateid.other[11], 0x55);
	CHECK(s->read.count == 0x100000002ull);
	CHECK(s->read.bytes == 0x200000000ull);
	CHECK_EQ(s->write.count, 7);
	CHECK_EQ(s->write.bytes, 28672);
	CHECK_EQ(s->deviceid[0], 0x66);
	CHECK(strcmp(u->addr.netid, "tcp") == 0);
	CHECK(strcmp(u->addr.uaddr, "127.0.0.1.8.1") == 0);
	CHECK_EQ(u->fhandle.len, 3);
	CHECK_EQ(u->fhandle.data[2], 7);
	CHECK_EQ(u->read.ops_requested, 1);
	CHECK_EQ(u->read.bytes_not_delivered, 5);
	CHECK_EQ(u->read.aggregate_completion_time.seconds, 8);
	CHECK_EQ(u->read.aggregate_completion_time.nseconds, 9);
	CHECK_EQ(u->write.ops_requested, 10);
	CHECK_EQ(u->write.total_busy_time.nseconds, 16);
	CHECK_EQ(u->duration.seconds, 19);
	CHECK_EQ(u->duration.nseconds, 20);
	CHECK(!u->local);
}

static void test_known_bytes(void)
{
	struct pando_ff_layoutreturn r;
	uint8_t buf[512];
	size_t len;

	CHECK_EQ(pando_ff_layoutreturn_decode(body, sizeof(body), &r), 0);
	check_decoded(&r);
	CHECK_EQ(pando_ff_layoutreturn_encode(&r, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, sizeof(body));
	CHECK_MEM(buf, body, sizeof(body));
	pando_ff_layoutreturn_release(&r);
}

/* What a client with nothing to report sends: two empty arrays. */
static void test_empty(void)
{
	static const uint8_t empty[] = { U32(0), U32(0) };
	struct pando_ff_layoutreturn r = { 0 };
	uint8_t buf[8];
	size_t len;

	CHECK_EQ(pando_ff_layoutreturn_encode(&r, buf, sizeof(buf), &len), 0);
	CHECK_EQ(len, 8);
	CHECK_MEM(buf, empty, 8);
	CHECK_EQ(pando_ff_layoutreturn_decode(empty, sizeof(empty), &r), 0);
	CHECK_EQ(r.ioerr_count + r.iostats_count, 0);
	pando_ff_layoutreturn_release(&r);
	CHECK_EQ(pando_ff_layoutreturn_decode(empty, 0, &r), -EBADMSG);
}

/* io_info4 encoded with a 32-bit ii_count, as Ganesha 4.3's XDR has it:
 * 8 bytes short, so it must be refused, never misread. */
static void test_ganesha_shape_refused(void)
{
	uint8_t short_body[sizeof(body)];
	struct pando_ff_layoutreturn r;
	size_t read_count_at = 4 + 8 + 8 + 16 + 4 + 24 + 4 + 8 + 8 + 16; /* ffis_read */
	size_t n = 0;

	memcpy(short_body, body, read_count_at);
	n = read_count_at;
	short_body[n++] = 0, short_body[n++] = 0, short_body[n++] = 0, short_body[n++] = 2;
	memcpy(short_body + n, body + read_count_at + 8, 8); /* ii_bytes */
	n += 8;
	short_body[n++] = 0, short_body[n++] = 0, short_body[n++] = 0, short_body[n++] = 7;
	memcpy(short_body + n, body + read_count_at + 24, sizeof(body) - read_count_at - 24);
	n += sizeof(body) - read_count_at - 24;
	CHECK_EQ(n, sizeof(body) - 8);
	CHECK_EQ(pando_ff_layoutreturn_decode(short_body, n, &r), -EBADMSG);
}

static void test_damaged(void)
{
	struct pando_ff_layoutreturn r;
	uint8_t bad[sizeof(body) + 4];
	int wrong = 0;

	for (size_t n = 0; n < sizeof(body); n++)
		wrong += pando_ff_layoutreturn_decode(body, n, &r) != -EBADMSG;
	CHECK_EQ(wrong, 0);
	memcpy(bad, body, sizeof(body));
	memset(bad + sizeof(body), 0, 4);
	CHECK_EQ(pando_ff_layoutreturn_decode(bad, sizeof(bad), &r), -EBADMSG);
#define MUTATE(at, value) \
	do { \
		memcpy(bad, body, sizeof(body)); \
		bad[at] = (value); \
		CHECK_EQ(pando_ff_layoutreturn_decode(bad, sizeof(body), &r), -EBADMSG); \
		CHECK(r.ioerrs == NULL && r.iostats == NULL); \
	} while (0)
	MUTATE(0, 0x80);                /* 2^31 error reports */
	MUTATE(39, 0x02);               /* 2 device errors: short */
	MUTATE(sizeof(body) - 1, 0x03); /* ffl_local = 3 */
	MUTATE(179, 0x81);              /* ffl_fhandle of 129 bytes */
#undef MUTATE
}

static int encode_any(const void *v, uint8_t *buf, size_t cap, size_t *len)
{
	return pando_ff_layoutreturn_encode(v, buf, cap, len);
}

static int decode_any(const uint8_t *buf, size_t len, void *out)
{
	return pando_ff_layoutreturn_decode(buf, len, out);
}

static void release_any(void *v)
{
	pando_ff_layoutreturn_release(v);
}

static const struct fixture_codec codec = { encode_any, decode_any, release_any };

/* Random reports: encode, decode, encode again gives the same bytes, and
 * corrupted copies decode cleanly or are refused. */
static void test_round_trips_and_fuzz(void)
{
	int bad = 0;

	for (int round = 0; round < 300; round++) {
		struct pando_device_error errs[4];
		struct pando_ff_ioerr ioerrs[3];
		struct pando_ff_iostats stats[3];
		struct pando_ff_layoutreturn r = { (uint32_t)(fixture_rand() % 4), ioerrs,
						   (uint32_t)(fixture_rand() % 4), stats },
					     back;
		uint8_t buf[4096], again[4096];

		for (uint32_t i = 0; i < r.ioerr_count; i++) {
			ioerrs[i] = (struct pando_ff_ioerr){ fixture_rand(),
							     fixture_rand(),
							     { (uint32_t)fixture_rand(), { 1 } },
							     (uint32_t)(fixture_rand() % 5),
							     errs };
			for (int e = 0; e < 4; e++)
				errs[e] = (struct pando_device_error){
					{ (uint8_t)fixture_rand() },
					-(int32_t)(fixture_rand() % 10000),
					(uint32_t)(fixture_rand() % 80)
				};
		}
		for (uint32_t i = 0; i < r.iostats_count; i++) {
			memset(&stats[i], (int)(fixture_rand() & 0xff), sizeof(stats[i]));
			stats[i].read.count = fixture_rand();
			stats[i].layoutupdate.fhandle.len =
				(uint32_t)(fixture_rand() % (PANDO_FF_FH_MAX + 1));
			stats[i].layoutupdate.local = fixture_rand() & 1;
			snprintf(stats[i].layoutupdate.addr.netid, PANDO_NETID_MAX + 1, "tcp");
			snprintf(stats[i].layoutupdate.addr.uaddr, PANDO_UADDR_MAX + 1,
				 "10.1.%u.%u.8.1", (unsigned)(fixture_rand() % 256),
				 (unsigned)(fixture_rand() % 256));
		}
		bad += fixture_codec_holds(&codec, &r, &back, buf, again, sizeof(buf));
	}
	CHECK_EQ(bad, 0);
}

int main(void)
{
	test_known_bytes();
	test_empty();
	test_ganesha_shape_refused();
	test_damaged();
	test_round_trips_and_fuzz();
	CHECK_DONE();
}
