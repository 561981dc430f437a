/* Ganesha's own XDR for the pNFS structures our patch series fixes
 * (patches 0040 and 0090), checked against bytes written out by hand from
 * the RFCs' XDR:
 *
 *   RFC 7862 15.6  LAYOUTERROR4args { offset4; length4; stateid4;
 *                                     device_error4 lea_errors<>; }
 *                  device_error4 { deviceid4; nfsstat4; nfs_opnum4; }
 *   RFC 7862 15.7  LAYOUTSTATS4args { offset4; length4; stateid4;
 *                                     io_info4 read, write; deviceid4;
 *                                     layoutupdate4; }
 *                  io_info4 { uint64_t ii_count; uint64_t ii_bytes; }
 *   RFC 8435 5.1   ff_layout4 { length4 ffl_stripe_unit; ff_mirror4 <>;
 *                               ff_flags4; uint32_t ffl_stats_collect_hint; }
 *   RFC 8435 9.1   ff_layoutreturn4 { ff_ioerr4 <>; ff_iostats4 <>; }
 *
 * Each structure must decode from those bytes to the right values, using
 * every byte, and encode back to the same bytes; truncated input and
 * counts past the bound must be refused.  The decoders are the inline
 * functions of the patched src/include/nfsv41.h this build compiles
 * against. */
#include "config.h"
#include "nfsv41.h"

#include "check.h"

/* A byte buffer written the way RFC 4506 lays XDR out: big-endian 4-byte
 * units, 8-byte hypers, opaques padded to 4. */
struct wire {
	unsigned char b[1024];
	size_t n;
};

static void put32(struct wire *w, uint32_t v)
{
	for (int i = 3; i >= 0; i--)
		w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

static void put64(struct wire *w, uint64_t v)
{
	put32(w, (uint32_t)(v >> 32));
	put32(w, (uint32_t)v);
}

static void put_fixed(struct wire *w, const void *p, size_t len)
{
	memcpy(w->b + w->n, p, len);
	w->n += len;
	while (w->n % 4)
		w->b[w->n++] = 0;
}

static void put_opaque(struct wire *w, const void *p, uint32_t len)
{
	put32(w, len);
	put_fixed(w, p, len);
}

static const char DEV_A[16] = "osd-0000000000a\x01";
static const char DEV_B[16] = "osd-0000000000b\x02";
static const char OTHER[12] = "layoutstate!";

static void put_stateid(struct wire *w, uint32_t seqid)
{
	put32(w, seqid);
	put_fixed(w, OTHER, sizeof(OTHER));
}

/* Decodes w with proc into obj; true if it succeeded and used every byte. */
static bool decode_all(xdrproc_t proc, void *obj, const struct wire *w)
{
	XDR x;
	bool ok;

	xdrmem_create(&x, (char *)w->b, (u_int)w->n, XDR_DECODE);
	ok = proc(&x, obj) && xdr_getpos(&x) == w->n;
	xdr_destroy(&x);
	return ok;
}

/* Encodes obj with proc and checks the result is exactly w. */
static void check_encodes_to(xdrproc_t proc, void *obj, const struct wire *w)
{
	unsigned char buf[1024];
	XDR x;

	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	CHECK(proc(&x, obj));
	CHECK_EQ(xdr_getpos(&x), w->n);
	CHECK_MEM(buf, w->b, w->n);
	xdr_destroy(&x);
}

static void layouterror_wire(struct wire *w, uint32_t count, uint32_t present)
{
	w->n = 0;
	put64(w, 4096);    /* lea_offset */
	put64(w, 1 << 20); /* lea_length */
	put_stateid(w, 7);
	put32(w, count); /* lea_errors<> */
	for (uint32_t i = 0; i < present; i++) {
		put_fixed(w, i ? DEV_B : DEV_A, 16);
		put32(w, i ? NFS4ERR_NXIO : NFS4ERR_IO);
		put32(w, i ? NFS4_OP_READ : NFS4_OP_WRITE);
	}
}

static void test_layouterror(void)
{
	LAYOUTERROR4args a;
	struct wire w;

	layouterror_wire(&w, 2, 2);
	CHECK_EQ(w.n, 8 + 8 + 16 + 4 + 2 * 24);
	memset(&a, 0, sizeof(a));
	CHECK(decode_all((xdrproc_t)xdr_LAYOUTERROR4args, &a, &w));
	CHECK_EQ(a.lea_offset, 4096);
	CHECK_EQ(a.lea_length, 1 << 20);
	CHECK_EQ(a.lea_stateid.seqid, 7);
	CHECK_MEM(a.lea_stateid.other, OTHER, 12);
	CHECK_EQ(a.lea_errors.lea_errors_len, 2);
	if (a.lea_errors.lea_errors_len == 2) {
		CHECK_MEM(a.lea_errors.lea_errors_val[0].de_deviceid, DEV_A, 16);
		CHECK_EQ(a.lea_errors.lea_errors_val[0].de_status, NFS4ERR_IO);
		CHECK_EQ(a.lea_errors.lea_errors_val[0].de_opnum, NFS4_OP_WRITE);
		CHECK_MEM(a.lea_errors.lea_errors_val[1].de_deviceid, DEV_B, 16);
		CHECK_EQ(a.lea_errors.lea_errors_val[1].de_status, NFS4ERR_NXIO);
		CHECK_EQ(a.lea_errors.lea_errors_val[1].de_opnum, NFS4_OP_READ);
		check_encodes_to((xdrproc_t)xdr_LAYOUTERROR4args, &a, &w);
	}
	xdr_free((xdrproc_t)xdr_LAYOUTERROR4args, &a);

	/* No errors at all is well-formed. */
	layouterror_wire(&w, 0, 0);
	memset(&a, 0, sizeof(a));
	CHECK(decode_all((xdrproc_t)xdr_LAYOUTERROR4args, &a, &w));
	CHECK_EQ(a.lea_errors.lea_errors_len, 0);
	xdr_free((xdrproc_t)xdr_LAYOUTERROR4args, &a);
}

static void test_layouterror_malformed(void)
{
	static const uint32_t huge[] = { XDR_ARRAY_MAXLEN + 1, 0x10000000, 0xffffffff };
	LAYOUTERROR4args a;
	struct wire w;

	/* Three errors announced, two sent. */
	layouterror_wire(&w, 3, 2);
	memset(&a, 0, sizeof(a));
	CHECK(!decode_all((xdrproc_t)xdr_LAYOUTERROR4args, &a, &w));
	xdr_free((xdrproc_t)xdr_LAYOUTERROR4args, &a);

	/* The last error cut short. */
	layouterror_wire(&w, 2, 2);
	w.n -= 4;
	memset(&a, 0, sizeof(a));
	CHECK(!decode_all((xdrproc_t)xdr_LAYOUTERROR4args, &a, &w));
	xdr_free((xdrproc_t)xdr_LAYOUTERROR4args, &a);

	/* Counts past the bound are refused before anything is allocated. */
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		layouterror_wire(&w, huge[i], 1);
		memset(&a, 0, sizeof(a));
		CHECK(!decode_all((xdrproc_t)xdr_LAYOUTERROR4args, &a, &w));
		CHECK(a.lea_errors.lea_errors_val == NULL);
	}
}

static const char LOU_BODY[5] = "stats";

static void layoutstats_wire(struct wire *w)
{
	w->n = 0;
	put64(w, 0);          /* lsa_offset */
	put64(w, UINT64_MAX); /* lsa_length */
	put_stateid(w, 3);
	put64(w, 0x100000002ull);        /* lsa_read.ii_count: past 32 bits */
	put64(w, 0x0123456789abcdefull); /* lsa_read.ii_bytes */
	put64(w, 5);                     /* lsa_write.ii_count */
	put64(w, 5 << 20);               /* lsa_write.ii_bytes */
	put_fixed(w, DEV_B, 16);         /* lsa_deviceid */
	put32(w, LAYOUT4_FLEX_FILES);    /* lsa_layoutupdate.lou_type */
	put_opaque(w, LOU_BODY, sizeof(LOU_BODY));
}

static void test_layoutstats(void)
{
	LAYOUTSTATS4args a;
	struct wire w;

	layoutstats_wire(&w);
	memset(&a, 0, sizeof(a));
	CHECK(decode_all((xdrproc_t)xdr_LAYOUTSTATS4args, &a, &w));
	CHECK_EQ(a.lsa_length, UINT64_MAX);
	CHECK_EQ(a.lsa_stateid.seqid, 3);
	CHECK(a.lsa_read.ii_count == 0x100000002ull);
	CHECK(a.lsa_read.ii_bytes == 0x0123456789abcdefull);
	CHECK_EQ(a.lsa_write.ii_count, 5);
	CHECK_EQ(a.lsa_write.ii_bytes, 5 << 20);
	CHECK_MEM(a.lsa_deviceid, DEV_B, 16);
	CHECK_EQ(a.lsa_layoutupdate.lou_type, LAYOUT4_FLEX_FILES);
	CHECK_EQ(a.lsa_layoutupdate.lou_body.lou_body_len, sizeof(LOU_BODY));
	check_encodes_to((xdrproc_t)xdr_LAYOUTSTATS4args, &a, &w);
	xdr_free((xdrproc_t)xdr_LAYOUTSTATS4args, &a);

	/* Without its last byte the body is short. */
	w.n -= 4;
	memset(&a, 0, sizeof(a));
	CHECK(!decode_all((xdrproc_t)xdr_LAYOUTSTATS4args, &a, &w));
	xdr_free((xdrproc_t)xdr_LAYOUTSTATS4args, &a);
}

static void put_latency(struct wire *w, uint64_t base)
{
	for (int i = 0; i < 5; i++) /* ops/bytes requested, completed, not delivered */
		put64(w, base + (uint64_t)i);
	put64(w, 1); /* ffil_total_busy_time */
	put32(w, 2);
	put64(w, 3); /* ffil_aggregate_completion_time */
	put32(w, 4);
}

/* A flexfiles LAYOUTRETURN body with one error report and one
 * statistics report, as Linux sends on return. */
static void layoutreturn_wire(struct wire *w)
{
	static const char fh[8] = "objfh-01";

	w->n = 0;
	put32(w, 1); /* fflr_ioerr_report<> */
	put64(w, 0);
	put64(w, 65536);
	put_stateid(w, 2);
	put32(w, 1); /* ffie_errors<> */
	put_fixed(w, DEV_A, 16);
	put32(w, NFS4ERR_NXIO);
	put32(w, NFS4_OP_WRITE);
	put32(w, 1); /* fflr_iostats_report<> */
	put64(w, 0);
	put64(w, 1 << 20);
	put_stateid(w, 2);
	put64(w, 0x200000001ull); /* ffis_read.ii_count */
	put64(w, 1 << 20);
	put64(w, 9); /* ffis_write.ii_count */
	put64(w, 9 << 16);
	put_fixed(w, DEV_A, 16);           /* ffis_deviceid */
	put_opaque(w, "tcp", 3);           /* ffl_addr.r_netid */
	put_opaque(w, "10.0.2.2.8.1", 12); /* ffl_addr.r_addr */
	put_opaque(w, fh, sizeof(fh));     /* ffl_fhandle */
	put_latency(w, 100);
	put_latency(w, 200);
	put64(w, 30); /* ffl_duration */
	put32(w, 0);
	put32(w, 0); /* ffl_local */
}

static void test_ff_layoutreturn(void)
{
	ff_layoutreturn4 r;
	struct wire w;

	layoutreturn_wire(&w);
	memset(&r, 0, sizeof(r));
	CHECK(decode_all((xdrproc_t)xdr_ff_layoutreturn4, &r, &w));
	CHECK_EQ(r.fflr_ioerr_report.fflr_ioerr_report_len, 1);
	CHECK_EQ(r.fflr_iostats_report.fflr_iostats_report_len, 1);
	if (r.fflr_iostats_report.fflr_iostats_report_len == 1) {
		ff_iostats4 *s = r.fflr_iostats_report.fflr_iostats_report_val;

		CHECK(s->ffis_read.ii_count == 0x200000001ull);
		CHECK_EQ(s->ffis_write.ii_count, 9);
		CHECK_EQ(s->ffis_write.ii_bytes, 9 << 16);
		CHECK_MEM(s->ffis_deviceid, DEV_A, 16);
		CHECK_EQ(s->ffis_layoutupdate.ffl_read.ffil_bytes_not_delivered, 104);
		CHECK_EQ(s->ffis_layoutupdate.ffl_duration.seconds, 30);
		check_encodes_to((xdrproc_t)xdr_ff_layoutreturn4, &r, &w);
	}
	xdr_free((xdrproc_t)xdr_ff_layoutreturn4, &r);
}

/* One mirror, one data server: what a flexfiles layout body is. */
static void ff_layout_wire(struct wire *w, uint32_t hint)
{
	static const char fh[24] = "pando-capability-handle!";

	w->n = 0;
	put64(w, 1 << 20);       /* ffl_stripe_unit */
	put32(w, 1);             /* ffl_mirrors<> */
	put32(w, 1);             /* ffm_data_servers<> */
	put_fixed(w, DEV_B, 16); /* ffds_deviceid */
	put32(w, 1);             /* ffds_efficiency */
	put32(w, 0);             /* ffds_stateid: anonymous */
	put_fixed(w, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
	put32(w, 1); /* ffds_fh_vers<> */
	put_opaque(w, fh, sizeof(fh));
	put_opaque(w, "1000", 4);          /* ffds_user */
	put_opaque(w, "100", 3);           /* ffds_group */
	put32(w, FF_FLAGS_NO_IO_THRU_MDS); /* ffl_flags */
	put32(w, hint);                    /* ffl_stats_collect_hint */
}

static void test_ff_layout(void)
{
	ff_layout4 l;
	struct wire w;

	ff_layout_wire(&w, 7);
	memset(&l, 0, sizeof(l));
	CHECK(decode_all((xdrproc_t)xdr_ff_layout4, &l, &w));
	CHECK_EQ(l.ffl_stripe_unit, 1 << 20);
	CHECK_EQ(l.ffl_flags, FF_FLAGS_NO_IO_THRU_MDS);
	CHECK_EQ(l.ffl_stats_collect_hint, 7);
	CHECK_EQ(l.ffl_mirrors.ffl_mirrors_len, 1);
	if (l.ffl_mirrors.ffl_mirrors_len == 1) {
		ff_mirror4 *m = l.ffl_mirrors.ffl_mirrors_val;

		CHECK_EQ(m->ffm_data_servers.ffm_data_servers_len, 1);
		check_encodes_to((xdrproc_t)xdr_ff_layout4, &l, &w);
	}
	xdr_free((xdrproc_t)xdr_ff_layout4, &l);

	/* A layout that ends before its hint is short. */
	w.n -= 4;
	memset(&l, 0, sizeof(l));
	CHECK(!decode_all((xdrproc_t)xdr_ff_layout4, &l, &w));
	xdr_free((xdrproc_t)xdr_ff_layout4, &l);
}

int main(void)
{
	test_layouterror();
	test_layouterror_malformed();
	test_layoutstats();
	test_ff_layoutreturn();
	test_ff_layout();
	CHECK_DONE();
}
