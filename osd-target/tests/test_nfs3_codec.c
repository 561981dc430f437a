/* NFSv3 argument decoding from known bytes, malformed and truncated
 * arguments, and whole calls through nfs3_dispatch() against a real object
 * store in a temporary directory: statuses, result arms byte for byte,
 * READ payloads, handle checks, the RPC-level refusals and what each call
 * adds to the I/O counters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "nfs3.h"

#define OSD_ID 7
#define PART 0x10
#define OBJ 0x20

/* --- byte builders --------------------------------------------------- */

struct buf {
	uint8_t b[8192];
	size_t len;
};

static void put32(struct buf *b, uint32_t v)
{
	b->b[b->len++] = (uint8_t)(v >> 24);
	b->b[b->len++] = (uint8_t)(v >> 16);
	b->b[b->len++] = (uint8_t)(v >> 8);
	b->b[b->len++] = (uint8_t)v;
}

static void put64(struct buf *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b, (uint32_t)v);
}

static void put_opaque(struct buf *b, const void *data, uint32_t n)
{
	put32(b, n);
	memcpy(b->b + b->len, data, n);
	memset(b->b + b->len + n, 0, XDR_PAD(n) - n);
	b->len += XDR_PAD(n);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* --- decoders ---------------------------------------------------------- */

static const uint8_t write_known[] = {
	0x00, 0x00, 0x00, 0x05, 'h',  'a',  'n',  'd',  'l', 0x00, 0x00, 0x00, /* fh<5> */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00,                        /* offset */
	0x00, 0x00, 0x00, 0x03,                                                /* count */
	0x00, 0x00, 0x00, 0x02,                                                /* FILE_SYNC */
	0x00, 0x00, 0x00, 0x03, 'a',  'b',  'c',  0x00,                        /* data<3> */
};

static void test_decode_write_known(void)
{
	struct nfs3_write_args a;
	struct xdr_r in;

	xr_init(&in, write_known, sizeof(write_known));
	CHECK_EQ(nfs3_decode_write_args(&in, &a), 0);
	CHECK_EQ(a.fh.len, 5);
	CHECK(memcmp(a.fh.data, "handl", 5) == 0);
	CHECK_EQ(a.offset, 0x100001000ull);
	CHECK_EQ(a.count, 3);
	CHECK_EQ(a.stable, NFS3_FILE_SYNC);
	CHECK_EQ(a.data_len, 3);
	/* decoded in place: the data points into the record */
	CHECK(a.data == write_known + 32);
	CHECK_EQ(xr_left(&in), 0);
}

static void test_decode_write_truncated(void)
{
	struct nfs3_write_args a;
	struct xdr_r in;
	size_t cut;

	for (cut = 0; cut < sizeof(write_known); cut++) {
		xr_init(&in, write_known, cut);
		CHECK_EQ(nfs3_decode_write_args(&in, &a), -EINVAL);
	}
}

static void test_decode_write_bad_fields(void)
{
	uint8_t bytes[sizeof(write_known)];
	struct nfs3_write_args a;
	struct xdr_r in;

	memcpy(bytes, write_known, sizeof(bytes));
	bytes[27] = 3; /* stable_how out of range */
	xr_init(&in, bytes, sizeof(bytes));
	CHECK_EQ(nfs3_decode_write_args(&in, &a), -EINVAL);

	memcpy(bytes, write_known, sizeof(bytes));
	bytes[31] = 9; /* data longer than the record */
	xr_init(&in, bytes, sizeof(bytes));
	CHECK_EQ(nfs3_decode_write_args(&in, &a), -EINVAL);

	memcpy(bytes, write_known, sizeof(bytes));
	memset(bytes + 28, 0xff, 4); /* data length 2^32 - 1: padding wraps */
	xr_init(&in, bytes, sizeof(bytes));
	CHECK_EQ(nfs3_decode_write_args(&in, &a), -EINVAL);

	memcpy(bytes, write_known, sizeof(bytes));
	bytes[0] = 0xff; /* handle length 4 GiB */
	xr_init(&in, bytes, sizeof(bytes));
	CHECK_EQ(nfs3_decode_write_args(&in, &a), -EINVAL);

	/* count and data length may disagree in the bytes: that is the
	 * procedure's NFS3ERR_INVAL, not a decoding error */
	memcpy(bytes, write_known, sizeof(bytes));
	bytes[23] = 9;
	xr_init(&in, bytes, sizeof(bytes));
	CHECK_EQ(nfs3_decode_write_args(&in, &a), 0);
	CHECK_EQ(a.count, 9);
	CHECK_EQ(a.data_len, 3);
}

static void test_decode_fh_bounds(void)
{
	uint8_t fh[NFS3_FHSIZE + 1] = { 0 };
	struct nfs3_read_args r;
	struct buf b = { .len = 0 };
	struct xdr_r in;

	put_opaque(&b, fh, NFS3_FHSIZE + 1); /* over the nfs_fh3 bound */
	put64(&b, 0);
	put32(&b, 1);
	xr_init(&in, b.b, b.len);
	CHECK_EQ(nfs3_decode_read_args(&in, &r), -EINVAL);

	b.len = 0;
	put_opaque(&b, fh, NFS3_FHSIZE);
	put64(&b, 0xfffffffffffff000ull);
	put32(&b, 0xffffffffu);
	put32(&b, 0xdeadbeef); /* trailing bytes are ignored */
	xr_init(&in, b.b, b.len);
	CHECK_EQ(nfs3_decode_read_args(&in, &r), 0);
	CHECK_EQ(r.fh.len, NFS3_FHSIZE);
	CHECK_EQ(r.offset, 0xfffffffffffff000ull);
	CHECK_EQ(r.count, 0xffffffffu);
}

static void test_decode_commit_access(void)
{
	struct nfs3_commit_args c;
	struct nfs3_access_args a;
	struct buf b = { .len = 0 };
	struct xdr_r in;
	size_t cut;

	put_opaque(&b, "xy", 2);
	put64(&b, 42);
	put32(&b, 4096);
	xr_init(&in, b.b, b.len);
	CHECK_EQ(nfs3_decode_commit_args(&in, &c), 0);
	CHECK_EQ(c.offset, 42);
	CHECK_EQ(c.count, 4096);
	for (cut = 0; cut < b.len; cut++) {
		xr_init(&in, b.b, cut);
		CHECK_EQ(nfs3_decode_commit_args(&in, &c), -EINVAL);
	}

	b.len = 0;
	put_opaque(&b, "xy", 2);
	put32(&b, ACCESS3_READ | ACCESS3_MODIFY);
	xr_init(&in, b.b, b.len);
	CHECK_EQ(nfs3_decode_access_args(&in, &a), 0);
	CHECK_EQ(a.access, ACCESS3_READ | ACCESS3_MODIFY);
	xr_init(&in, b.b, b.len - 1);
	CHECK_EQ(nfs3_decode_access_args(&in, &a), -EINVAL);
}

static void test_fileid(void)
{
	CHECK(nfs3_fileid(1, 1) != 0);
	CHECK(nfs3_fileid(0, 0) != 0);
	CHECK_EQ(nfs3_fileid(5, 9), nfs3_fileid(5, 9));
	CHECK(nfs3_fileid(5, 9) != nfs3_fileid(9, 5));
	CHECK(nfs3_fileid(1, 2) != nfs3_fileid(1, 3));
}

/* --- whole calls through nfs3_dispatch ------------------------------- */

struct fixture {
	char dir[64];
	struct objstore *store;
	struct cluster_key key;
	struct osd_keys keys;
	struct osd_stats stats;
	struct osd_ctx ctx;
};

struct result {
	enum rpc_outcome out;
	struct rpc_reply reply;
	uint8_t res[RPC_REPLY_RES_CAP];
};

static void fixture_up(struct fixture *f)
{
	struct obj_create_req req = { .object = OBJ, .cap_version = 1 };
	int result = -1;

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_nfs3_codec.XXXXXX");
	CHECK(mkdtemp(f->dir) != NULL);
	strcat(f->dir, "/osd");
	memset(&f->key, 0, sizeof(f->key));
	f->key.id = 3;
	memset(f->key.secret, 0x5a, sizeof(f->key.secret));
	CHECK_EQ(objstore_format(f->dir, OSD_ID, f->key.id), 0);
	CHECK_EQ(objstore_open(f->dir, &f->store), 0);
	CHECK_EQ(objstore_partition_create(f->store, PART), 0);
	CHECK_EQ(objstore_object_create(f->store, PART, &req, 1, &result), 0);
	CHECK_EQ(result, 0);
	osd_stats_init(&f->stats);
	CHECK_EQ(osd_keys_init(&f->keys, &f->key, OSD_ID), 0);
	f->ctx = (struct osd_ctx){ .store = f->store,
				   .keys = &f->keys,
				   .osd_id = OSD_ID,
				   .verf_base = "verifier",
				   .fsid = 0x1234,
				   .stats = &f->stats };
}

static void fixture_down(struct fixture *f)
{
	char cmd[128];

	objstore_close(f->store);
	osd_keys_destroy(&f->keys);
	*strrchr(f->dir, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	CHECK_EQ(system(cmd), 0);
}

static void mint(const struct fixture *f, uint8_t rights, uint32_t version, uint64_t expiry,
		 uint8_t out[CAPABILITY_SIZE])
{
	struct capability cap = { .rights = rights,
				  .osd_id = OSD_ID,
				  .partition = PART,
				  .object = OBJ,
				  .cap_version = version,
				  .expiry = expiry };

	capability_mint(&f->key, &cap, out);
}

static void call_full(struct fixture *f, uint32_t vers, uint32_t proc, uint32_t flavor,
		      const uint8_t *cred, uint32_t cred_len, const struct buf *args,
		      struct result *r)
{
	struct rpc_call call = {
		.xid = 1,
		.prog = NFS3_PROGRAM,
		.vers = vers,
		.proc = proc,
		.cred = { flavor, cred_len, cred },
		.verf = { RPC_AUTH_NONE, 0, NULL },
		.args = args->b,
		.args_len = args->len,
	};

	memset(&r->reply, 0, sizeof(r->reply));
	xw_init(&r->reply.res, r->res, sizeof(r->res));
	r->out = nfs3_dispatch(&f->ctx, &call, &r->reply);
}

static void call(struct fixture *f, uint32_t proc, const struct buf *args, struct result *r)
{
	call_full(f, NFS3_VERSION, proc, RPC_AUTH_NONE, NULL, 0, args, r);
}

static void result_free(struct result *r)
{
	if (r->reply.payload && r->reply.payload_free)
		r->reply.payload_free(r->reply.payload);
	r->reply.payload = NULL;
}

static void fh_buf(struct buf *b, const uint8_t fh[CAPABILITY_SIZE])
{
	b->len = 0;
	put_opaque(b, fh, CAPABILITY_SIZE);
}

/* post_op_attr with attributes: 4 + 84 bytes */
#define POST_OP_LEN 88

static void test_write_read_roundtrip(struct fixture *f)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct result r;
	struct buf b;

	mint(f, CAP_RIGHTS_RW, 1, 0, fh);
	fh_buf(&b, fh);
	put64(&b, 4096);
	put32(&b, 5);
	put32(&b, NFS3_DATA_SYNC);
	put_opaque(&b, "hello", 5);
	call(f, NFSPROC3_WRITE, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	/* status, pre_op absent, post_op_attr, count, committed, verf */
	CHECK_EQ(r.reply.res.len, 4 + 4 + POST_OP_LEN + 4 + 4 + 8);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(get32(r.res + 4), 0);
	CHECK_EQ(get32(r.res + 8), 1);
	CHECK_EQ(get32(r.res + 12), NF3REG);
	CHECK_EQ(get32(r.res + 16), 0644);
	CHECK_EQ(get64(r.res + 32), 4101);   /* size */
	CHECK_EQ(get64(r.res + 56), 0x1234); /* fsid */
	CHECK_EQ(get64(r.res + 64), nfs3_fileid(PART, OBJ));
	CHECK_EQ(get32(r.res + 8 + POST_OP_LEN), 5);
	CHECK_EQ(get32(r.res + 12 + POST_OP_LEN), NFS3_FILE_SYNC);
	CHECK(memcmp(r.res + 16 + POST_OP_LEN, "verifier", 8) == 0);
	CHECK_EQ(r.reply.payload_len, 0);

	fh_buf(&b, fh);
	put64(&b, 4096);
	put32(&b, 0xffffffffu); /* cut to rtmax */
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	CHECK_EQ(r.reply.res.len, 4 + POST_OP_LEN + 12);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(get32(r.res + 4 + POST_OP_LEN), 5);  /* count */
	CHECK_EQ(get32(r.res + 8 + POST_OP_LEN), 1);  /* eof */
	CHECK_EQ(get32(r.res + 12 + POST_OP_LEN), 5); /* data<> length */
	CHECK_EQ(r.reply.payload_len, 5);
	CHECK(r.reply.payload && memcmp(r.reply.payload, "hello", 5) == 0);
	result_free(&r);

	/* a hole reads as zeros, and not at eof */
	fh_buf(&b, fh);
	put64(&b, 0);
	put32(&b, 4096);
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(get32(r.res + 8 + POST_OP_LEN), 0);
	CHECK_EQ(r.reply.payload_len, 4096);
	CHECK(r.reply.payload && ((uint8_t *)r.reply.payload)[4095] == 0);
	result_free(&r);

	/* past the end: nothing, at eof, no payload bytes */
	fh_buf(&b, fh);
	put64(&b, 1ull << 40);
	put32(&b, 4096);
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(get32(r.res + 4 + POST_OP_LEN), 0);
	CHECK_EQ(get32(r.res + 8 + POST_OP_LEN), 1);
	CHECK_EQ(r.reply.payload_len, 0);
	result_free(&r);
}

static void test_write_rejects(struct fixture *f)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct result r;
	struct buf b;

	mint(f, CAP_RIGHTS_RW, 1, 0, fh);
	fh_buf(&b, fh);
	put64(&b, 0);
	put32(&b, 4); /* count disagrees with data */
	put32(&b, NFS3_UNSTABLE);
	put_opaque(&b, "abc", 3);
	call(f, NFSPROC3_WRITE, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	CHECK_EQ(get32(r.res), NFS3ERR_INVAL);
	CHECK_EQ(r.reply.res.len, 4 + 4 + POST_OP_LEN); /* wcc_data only */

	fh_buf(&b, fh);
	put64(&b, 0xfffffffffffff000ull);
	put32(&b, 3);
	put32(&b, NFS3_UNSTABLE);
	put_opaque(&b, "abc", 3);
	call(f, NFSPROC3_WRITE, &b, &r);
	CHECK_EQ(get32(r.res), NFS3ERR_FBIG);

	fh_buf(&b, fh);
	put64(&b, 0xfffffffffffff000ull);
	put32(&b, 3);
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(get32(r.res), NFS3ERR_FBIG);
	CHECK_EQ(r.reply.res.len, 4 + POST_OP_LEN);
	CHECK_EQ(r.reply.payload_len, 0);

	b.len -= 1; /* truncated arguments */
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_GARBAGE_ARGS);
}

static void expect_status(struct fixture *f, uint32_t proc, const struct buf *b, uint32_t status,
			  size_t res_len)
{
	struct result r;

	call(f, proc, b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	CHECK_EQ(get32(r.res), status);
	CHECK_EQ(r.reply.res.len, res_len);
	CHECK_EQ(r.reply.payload_len, 0);
	result_free(&r);
}

static void read_args(struct buf *b, const uint8_t fh[CAPABILITY_SIZE])
{
	fh_buf(b, fh);
	put64(b, 0);
	put32(b, 16);
}

static void test_handle_checks(struct fixture *f)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct capability cap = { .rights = CAP_RIGHTS_RW,
				  .osd_id = OSD_ID + 1,
				  .partition = PART,
				  .object = OBJ,
				  .cap_version = 1 };
	struct buf b;

	mint(f, CAP_RIGHTS_RW, 1, 0, fh);
	fh[45] ^= 1; /* MAC */
	read_args(&b, fh);
	expect_status(f, NFSPROC3_READ, &b, NFS3ERR_BADHANDLE, 8);

	b.len = 0; /* short handle */
	put_opaque(&b, fh, 40);
	put64(&b, 0);
	put32(&b, 16);
	expect_status(f, NFSPROC3_READ, &b, NFS3ERR_BADHANDLE, 8);

	mint(f, CAP_RIGHTS_RW, 1, (uint64_t)time(NULL) - 60, fh);
	read_args(&b, fh);
	expect_status(f, NFSPROC3_READ, &b, NFS3ERR_STALE, 8);

	mint(f, CAP_RIGHTS_RW, 2, 0, fh); /* other version */
	read_args(&b, fh);
	expect_status(f, NFSPROC3_READ, &b, NFS3ERR_STALE, 8);

	capability_mint(&f->key, &cap, fh); /* other target */
	read_args(&b, fh);
	expect_status(f, NFSPROC3_READ, &b, NFS3ERR_STALE, 8);

	cap.osd_id = OSD_ID;
	cap.object = OBJ + 1; /* no such object */
	capability_mint(&f->key, &cap, fh);
	fh_buf(&b, fh);
	expect_status(f, NFSPROC3_GETATTR, &b, NFS3ERR_STALE, 4);

	mint(f, CAP_RIGHTS_READ, 1, (uint64_t)time(NULL) + 3600, fh);
	fh_buf(&b, fh);
	put64(&b, 0);
	put32(&b, 1);
	put32(&b, NFS3_FILE_SYNC);
	put_opaque(&b, "x", 1);
	expect_status(f, NFSPROC3_WRITE, &b, NFS3ERR_ACCES, 12);
	fh_buf(&b, fh);
	put64(&b, 0);
	put32(&b, 0);
	expect_status(f, NFSPROC3_COMMIT, &b, NFS3ERR_ACCES, 12);
}

static void test_read_only_handle(struct fixture *f)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct result r;
	struct buf b;

	mint(f, CAP_RIGHTS_READ, 1, (uint64_t)time(NULL) + 3600, fh);
	read_args(&b, fh);
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(r.reply.payload_len, 16);
	result_free(&r);

	fh_buf(&b, fh);
	put32(&b, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
	call(f, NFSPROC3_ACCESS, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(get32(r.res + 12), 0444); /* mode */
	CHECK_EQ(get32(r.res + 4 + POST_OP_LEN), ACCESS3_READ);
}

static void test_small_procs(struct fixture *f)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct result r;
	struct buf b;

	mint(f, CAP_RIGHTS_RW, 1, 0, fh);
	fh_buf(&b, fh);
	call(f, NFSPROC3_FSINFO, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(r.reply.res.len, 4 + POST_OP_LEN + 7 * 4 + 8 + 8 + 4);
	CHECK_EQ(get32(r.res + 4 + POST_OP_LEN), OSD_NFS_MAX_IO);  /* rtmax */
	CHECK_EQ(get32(r.res + 16 + POST_OP_LEN), OSD_NFS_MAX_IO); /* wtmax */
	CHECK_EQ(get64(r.res + 32 + POST_OP_LEN), INT64_MAX);      /* maxfilesize */
	CHECK_EQ(get32(r.res + 44 + POST_OP_LEN), 1);              /* time_delta ns */
	CHECK_EQ(get32(r.res + 48 + POST_OP_LEN), FSF3_HOMOGENEOUS | FSF3_CANSETTIME);

	call(f, NFSPROC3_FSSTAT, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(r.reply.res.len, 4 + POST_OP_LEN + 6 * 8 + 4);
	CHECK(get64(r.res + 4 + POST_OP_LEN) >= get64(r.res + 12 + POST_OP_LEN));

	call(f, NFSPROC3_PATHCONF, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(r.reply.res.len, 4 + POST_OP_LEN + 6 * 4);

	call(f, NFSPROC3_GETATTR, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	CHECK_EQ(r.reply.res.len, 4 + 84);

	b.len = 0;
	call(f, NFSPROC3_NULL, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	CHECK_EQ(r.reply.res.len, 0);
	call(f, NFSPROC3_GETATTR, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_GARBAGE_ARGS);
}

static void test_notsupp(struct fixture *f)
{
	static const struct {
		uint32_t proc;
		size_t words;
	} arms[] = {
		{ NFSPROC3_SETATTR, 2 },     { NFSPROC3_LOOKUP, 1 }, { NFSPROC3_READLINK, 1 },
		{ NFSPROC3_CREATE, 2 },      { NFSPROC3_MKDIR, 2 },  { NFSPROC3_SYMLINK, 2 },
		{ NFSPROC3_MKNOD, 2 },       { NFSPROC3_REMOVE, 2 }, { NFSPROC3_RMDIR, 2 },
		{ NFSPROC3_RENAME, 4 },      { NFSPROC3_LINK, 3 },   { NFSPROC3_READDIR, 1 },
		{ NFSPROC3_READDIRPLUS, 1 },
	};
	struct buf b = { .len = 0 };
	struct result r;
	size_t i, w;

	for (i = 0; i < sizeof(arms) / sizeof(arms[0]); i++) {
		call(f, arms[i].proc, &b, &r);
		CHECK_EQ(r.out, RPC_OUT_SUCCESS);
		CHECK_EQ(get32(r.res), NFS3ERR_NOTSUPP);
		CHECK_EQ(r.reply.res.len, 4 + 4 * arms[i].words);
		for (w = 0; w < arms[i].words; w++)
			CHECK_EQ(get32(r.res + 4 + 4 * w), 0);
	}
	call(f, NFSPROC3_COMMIT + 1, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_PROC_UNAVAIL);
}

static void test_rpc_refusals(struct fixture *f)
{
	struct buf cred = { .len = 0 };
	struct buf b = { .len = 0 };
	struct result r;

	call_full(f, 2, NFSPROC3_NULL, RPC_AUTH_NONE, NULL, 0, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_PROG_MISMATCH);
	CHECK_EQ(r.reply.mismatch_low, 3);
	CHECK_EQ(r.reply.mismatch_high, 3);

	put32(&cred, 0); /* stamp */
	put_opaque(&cred, "host", 4);
	put32(&cred, 1000); /* uid */
	put32(&cred, 1000); /* gid */
	put32(&cred, 1);    /* one gid */
	put32(&cred, 27);
	call_full(f, 3, NFSPROC3_NULL, RPC_AUTH_SYS, cred.b, (uint32_t)cred.len, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	call_full(f, 3, NFSPROC3_NULL, RPC_AUTH_SYS, cred.b, (uint32_t)cred.len - 4, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_AUTH_BADCRED);
	cred.len -= 8;
	put32(&cred, 17); /* more than 16 gids */
	call_full(f, 3, NFSPROC3_NULL, RPC_AUTH_SYS, cred.b, (uint32_t)cred.len, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_AUTH_BADCRED);
	call_full(f, 3, NFSPROC3_NULL, 6 /* RPCSEC_GSS */, cred.b, 4, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_AUTH_TOOWEAK);
	call_full(f, 3, NFSPROC3_NULL, RPC_AUTH_NONE, cred.b, 4, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_AUTH_BADCRED);
}

static void write_args(struct buf *b, const uint8_t fh[CAPABILITY_SIZE], uint64_t off,
		       uint32_t stable, const char *data)
{
	fh_buf(b, fh);
	put64(b, off);
	put32(b, (uint32_t)strlen(data));
	put32(b, stable);
	put_opaque(b, data, (uint32_t)strlen(data));
}

/* Ops and bytes for what was answered OK, by stable_how for WRITE; each
 * failure in the class of its status; NULL and undecodable calls nowhere. */
static void test_counters(struct fixture *f)
{
	uint8_t fh[CAPABILITY_SIZE], ro[CAPABILITY_SIZE], forged[CAPABILITY_SIZE];
	uint64_t want[OSD_STAT_COUNT] = { 0 }, got[OSD_STAT_COUNT];
	struct result r;
	struct buf b;

	osd_stats_init(&f->stats);
	mint(f, CAP_RIGHTS_RW, 1, 0, fh);
	mint(f, CAP_RIGHTS_READ, 1, 0, ro);
	memcpy(forged, fh, sizeof(forged));
	forged[CAPABILITY_SIZE - 1] ^= 1;

	write_args(&b, fh, 0, NFS3_UNSTABLE, "abcdefg");
	expect_status(f, NFSPROC3_WRITE, &b, NFS3_OK, 4 + 4 + POST_OP_LEN + 4 + 4 + 8);
	write_args(&b, fh, 7, NFS3_DATA_SYNC, "hij");
	expect_status(f, NFSPROC3_WRITE, &b, NFS3_OK, 4 + 4 + POST_OP_LEN + 4 + 4 + 8);
	write_args(&b, fh, 10, NFS3_FILE_SYNC, "kl");
	expect_status(f, NFSPROC3_WRITE, &b, NFS3_OK, 4 + 4 + POST_OP_LEN + 4 + 4 + 8);
	fh_buf(&b, fh);
	put64(&b, 2);
	put32(&b, 6);
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(get32(r.res), NFS3_OK);
	result_free(&r);
	fh_buf(&b, fh);
	put64(&b, 0);
	put32(&b, 0);
	expect_status(f, NFSPROC3_COMMIT, &b, NFS3_OK, 4 + 4 + POST_OP_LEN + 8);
	want[OSD_STAT_NFS_WRITE_OPS] = 3;
	want[OSD_STAT_NFS_WRITE_BYTES] = 12;
	want[OSD_STAT_NFS_WRITE_UNSTABLE] = 1;
	want[OSD_STAT_NFS_WRITE_DATA_SYNC] = 1;
	want[OSD_STAT_NFS_WRITE_FILE_SYNC] = 1;
	want[OSD_STAT_NFS_READ_OPS] = 1;
	want[OSD_STAT_NFS_READ_BYTES] = 6;
	want[OSD_STAT_NFS_COMMIT_OPS] = 1;

	read_args(&b, forged); /* BADHANDLE */
	expect_status(f, NFSPROC3_READ, &b, NFS3ERR_BADHANDLE, 8);
	fh_buf(&b, forged);
	expect_status(f, NFSPROC3_GETATTR, &b, NFS3ERR_BADHANDLE, 4);
	write_args(&b, ro, 0, NFS3_FILE_SYNC, "x"); /* ACCES */
	expect_status(f, NFSPROC3_WRITE, &b, NFS3ERR_ACCES, 12);
	want[OSD_STAT_NFS_ERR_REJECTED] = 3;
	write_args(&b, fh, 0xfffffffffffff000ull, NFS3_UNSTABLE, "x");
	expect_status(f, NFSPROC3_WRITE, &b, NFS3ERR_FBIG, 4 + 4 + POST_OP_LEN);
	b.len = 0;
	expect_status(f, NFSPROC3_LOOKUP, &b, NFS3ERR_NOTSUPP, 8);
	want[OSD_STAT_NFS_ERR_OTHER] = 2;
	call(f, NFSPROC3_NULL, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_GARBAGE_ARGS);

	osd_stats_snapshot(&f->stats, got);
	for (int i = 0; i < OSD_STAT_COUNT; i++) {
		if (got[i] != want[i])
			fprintf(stderr, "counter %s\n", osd_stat_names[i]);
		CHECK_EQ(got[i], want[i]);
	}
}

/* The status of a READ, or of a one-byte WRITE, through a fresh handle. */
static uint32_t status_through(struct fixture *f, uint32_t proc, uint8_t rights, uint32_t version)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct result r;
	struct buf b;
	uint32_t st;

	mint(f, rights, version, 0, fh);
	if (proc == NFSPROC3_READ)
		read_args(&b, fh);
	else
		write_args(&b, fh, 0, NFS3_UNSTABLE, "w");
	call(f, proc, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	st = get32(r.res);
	result_free(&r);
	return st;
}

/* With the read floor at 1 and the object at version 3 (writers revoked
 * twice), read handles from 1 to 3 read; read-write handles work at 3
 * only, for reading too; nothing outside [1, 3] does.  A fence to 3 then
 * takes the read handles below it. */
static void test_read_floor(struct fixture *f)
{
	const struct obj_id id = { PART, OBJ };

	CHECK_EQ(objstore_revoke_writers(f->store, &id, 3, NULL), 0);
	for (uint32_t v = 1; v <= 3; v++)
		CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_READ, v), NFS3_OK);
	CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_READ, 0), NFS3ERR_STALE);
	CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_READ, 4), NFS3ERR_STALE);
	CHECK_EQ(status_through(f, NFSPROC3_WRITE, CAP_RIGHTS_READ, 3), NFS3ERR_ACCES);
	CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_RW, 1), NFS3ERR_STALE);
	CHECK_EQ(status_through(f, NFSPROC3_WRITE, CAP_RIGHTS_RW, 1), NFS3ERR_STALE);
	CHECK_EQ(status_through(f, NFSPROC3_WRITE, CAP_RIGHTS_RW, 2), NFS3ERR_STALE);
	CHECK_EQ(status_through(f, NFSPROC3_WRITE, CAP_RIGHTS_RW, 3), NFS3_OK);
	CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_RW, 3), NFS3_OK);

	CHECK_EQ(objstore_set_cap_version(f->store, &id, 3, NULL), 0);
	CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_READ, 2), NFS3ERR_STALE);
	CHECK_EQ(status_through(f, NFSPROC3_READ, CAP_RIGHTS_READ, 3), NFS3_OK);
	CHECK_EQ(objstore_set_cap_version(f->store, &id, 1, NULL), 0);
}

static void auth_sys_cred(struct buf *cred, uint32_t uid)
{
	cred->len = 0;
	put32(cred, 0); /* stamp */
	put_opaque(cred, "host", 4);
	put32(cred, uid);
	put32(cred, 100); /* gid */
	put32(cred, 0);   /* no more gids */
}

/* The status of a READ through cap's handle, sent with AUTH_SYS as uid,
 * or with AUTH_NONE when sys is false. */
static uint32_t read_as(struct fixture *f, const struct capability *cap, bool sys, uint32_t uid)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct buf cred, b;
	struct result r;
	uint32_t st;

	capability_mint(&f->key, cap, fh);
	read_args(&b, fh);
	auth_sys_cred(&cred, uid);
	if (sys)
		call_full(f, NFS3_VERSION, NFSPROC3_READ, RPC_AUTH_SYS, cred.b, (uint32_t)cred.len,
			  &b, &r);
	else
		call(f, NFSPROC3_READ, &b, &r);
	CHECK_EQ(r.out, RPC_OUT_SUCCESS);
	st = get32(r.res);
	result_free(&r);
	return st;
}

/* A handle bound to a holder serves only AUTH_SYS calls with that uid;
 * holder 0 serves anyone.  The holder is checked after the MAC, the
 * target and the expiry (a forged, foreign or expired handle says so
 * first) and before the object is looked at. */
static void test_handle_holder(struct fixture *f)
{
	struct capability cap = { .rights = CAP_RIGHTS_RW,
				  .osd_id = OSD_ID,
				  .partition = PART,
				  .object = OBJ,
				  .cap_version = 1,
				  .holder = 4000 };

	CHECK_EQ(read_as(f, &cap, true, 4000), NFS3_OK);
	CHECK_EQ(read_as(f, &cap, true, 4001), NFS3ERR_ACCES);
	CHECK_EQ(read_as(f, &cap, true, 0), NFS3ERR_ACCES);
	CHECK_EQ(read_as(f, &cap, false, 0), NFS3ERR_ACCES);
	cap.object = OBJ + 1; /* no such object: still ACCES */
	CHECK_EQ(read_as(f, &cap, true, 4001), NFS3ERR_ACCES);
	cap.object = OBJ;
	cap.osd_id = OSD_ID + 1;
	CHECK_EQ(read_as(f, &cap, true, 4001), NFS3ERR_STALE);
	cap.osd_id = OSD_ID;
	cap.expiry = (uint64_t)time(NULL) - 60;
	CHECK_EQ(read_as(f, &cap, true, 4001), NFS3ERR_STALE);
	cap.expiry = 0;
	cap.holder = 0;
	CHECK_EQ(read_as(f, &cap, true, 4001), NFS3_OK);
	CHECK_EQ(read_as(f, &cap, false, 0), NFS3_OK);
}

int main(void)
{
	struct fixture f;

	log_init(LOG_ERROR, stderr);
	test_decode_write_known();
	test_decode_write_truncated();
	test_decode_write_bad_fields();
	test_decode_fh_bounds();
	test_decode_commit_access();
	test_fileid();

	fixture_up(&f);
	test_write_read_roundtrip(&f);
	test_write_rejects(&f);
	test_handle_checks(&f);
	test_read_only_handle(&f);
	test_small_procs(&f);
	test_notsupp(&f);
	test_rpc_refusals(&f);
	test_counters(&f);
	test_read_floor(&f);
	test_handle_holder(&f);
	fixture_down(&f);
	CHECK_DONE();
}
