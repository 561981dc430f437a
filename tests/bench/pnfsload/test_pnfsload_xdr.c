/* pnfsload's compound encoder against bytes written by hand from RFC 8881's
 * XDR, and its decoders against truncated and corrupted replies: -EBADMSG,
 * never a read past the reply. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nfs4_xdr.h"
#include "pnfsload.h"
#include "rpc.h"

static const uint8_t sessionid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const struct pando_stateid sid = { 1,
					  { 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29,
					    0x2a, 0x2b, 0x2c } };

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;

	for (const char *p = hex; *p; p++) {
		if (*p == ' ')
			continue;
		unsigned v;

		sscanf(p, "%2x", &v);
		out[n++] = (uint8_t)v;
		p++;
	}
	return n;
}

static void sequence_putfh_layoutget_encodes_as_rfc8881_says(void)
{
	static const char want_hex[] =
		"00000000 00000001 00000003"                /* tag "", minor 1, 3 ops */
		"00000035 0102030405060708090a0b0c0d0e0f10" /* SEQUENCE, sessionid */
		"00000007 00000002 00000003 00000000"       /* seqid, slot, highest, cachethis */
		"00000016 00000005 aabbccddee000000"        /* PUTFH, fh<5> padded */
		"00000032 00000000 00000004 00000002" /* LAYOUTGET, no signal, flexfiles, RW */
		"0000000000100000 ffffffffffffffff 0000000000001000" /* offset, length, minlength */
		"00000001 2122232425262728292a2b2c"                  /* stateid */
		"00001000";                                          /* maxcount */
	uint8_t want[256], got[256];
	struct xdr_w w = { got, sizeof(got), 0 };
	struct nfs4_fh fh = { 5, { 0xaa, 0xbb, 0xcc, 0xdd, 0xee } };
	size_t n = unhex(want_hex, want);

	c4_begin(&w, 3);
	c4_sequence(&w, sessionid, 7, 2, 3);
	c4_putfh(&w, &fh);
	c4_layoutget(&w, LAYOUTIOMODE4_RW, 1 << 20, UINT64_MAX, 4096, &sid, 4096);
	CHECK_EQ(w.len, n);
	CHECK_MEM(got, want, n);
}

static void exchange_id_encodes_as_rfc8881_says(void)
{
	static const char want_hex[] =
		"00000000 00000001 00000001"
		"0000002a 5041 4e44 4f21 0001" /* EXCHANGE_ID, verifier[8] */
		"00000003 61626300"            /* owner "abc" padded */
		"00000000 00000000 00000000";  /* flags, SP4_NONE, no impl id */
	static const uint8_t verifier[8] = { 'P', 'A', 'N', 'D', 'O', '!', 0, 1 };
	uint8_t want[128], got[128];
	struct xdr_w w = { got, sizeof(got), 0 };
	size_t n = unhex(want_hex, want);

	c4_begin(&w, 1);
	c4_exchange_id(&w, verifier, "abc", 0);
	CHECK_EQ(w.len, n);
	CHECK_MEM(got, want, n);
}

/* A SEQUENCE + PUTFH + LAYOUTGET reply with a real ff_layout4. */
static size_t layoutget_reply(uint8_t *buf, size_t cap)
{
	struct pando_ff_fh fh = { 4, { 9, 9, 9, 9 } };
	struct pando_ff_data_server ds[2] = {
		{ .deviceid = { 1 }, .fh_count = 1, .fh_vers = &fh, .user = "0", .group = "0" },
		{ .deviceid = { 2 }, .fh_count = 1, .fh_vers = &fh, .user = "0", .group = "0" }
	};
	struct pando_ff_mirror mirrors[2] = { { 1, &ds[0] }, { 1, &ds[1] } };
	struct pando_ff_layout layout = { 0, 2, mirrors, 0, 0 };
	uint8_t body[1024];
	size_t blen;
	struct xdr_w w = { buf, cap, 0 };

	CHECK_EQ(pando_ff_layout_encode(&layout, body, sizeof(body), &blen), 0);
	xw_u32(&w, 0);
	xw_u32(&w, 0);
	xw_u32(&w, 3);
	xw_u32(&w, OP_SEQUENCE);
	xw_u32(&w, 0);
	xw_fixed(&w, sessionid, 16);
	for (int i = 0; i < 5; i++)
		xw_u32(&w, 1);
	xw_u32(&w, OP_PUTFH);
	xw_u32(&w, 0);
	xw_u32(&w, OP_LAYOUTGET);
	xw_u32(&w, 0);
	xw_bool(&w, false);
	xw_u32(&w, sid.seqid);
	xw_fixed(&w, sid.other, 12);
	xw_u32(&w, 1);
	xw_u64(&w, 0);
	xw_u64(&w, UINT64_MAX);
	xw_u32(&w, LAYOUTIOMODE4_RW);
	xw_u32(&w, LAYOUT4_FLEX_FILES);
	xw_opaque(&w, body, (uint32_t)blen);
	return w.len;
}

static int decode_layoutget(const uint8_t *buf, size_t len, uint32_t *mirrors)
{
	struct xdr_r r = { buf, buf + len, false, false };
	struct nfs4_layout_res res;
	struct pando_ff_layout layout;
	uint32_t status, nres;
	int err;

	if ((err = d4_compound(&r, &status, &nres)) || (err = d4_op(&r, OP_SEQUENCE, &status)) ||
	    (err = d4_sequence(&r, sessionid)) || (err = d4_op(&r, OP_PUTFH, &status)) ||
	    (err = d4_op(&r, OP_LAYOUTGET, &status)) || (err = d4_layoutget(&r, &res)))
		return err;
	err = pando_ff_layout_decode(res.body, res.body_len, &layout);
	*mirrors = layout.mirror_count;
	pando_ff_layout_release(&layout);
	return err;
}

static void truncated_or_corrupted_layoutget_replies_are_ebadmsg(void)
{
	uint8_t full[2048];
	size_t n = layoutget_reply(full, sizeof(full));
	uint32_t mirrors = 0;

	CHECK_EQ(decode_layoutget(full, n, &mirrors), 0);
	CHECK_EQ(mirrors, 2);
	for (size_t cut = 0; cut < n; cut++) {
		/* A heap copy of exactly cut bytes: a read past it is a crash
		 * under the sanitizers, not a silent pass. */
		uint8_t *part = malloc(cut ? cut : 1);

		memcpy(part, full, cut);
		CHECK_EQ(decode_layoutget(part, cut, &mirrors), -EBADMSG);
		free(part);
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t bad[2048];

		memcpy(bad, full, n);
		bad[i] ^= 0xff;
		int err = decode_layoutget(bad, n, &mirrors);

		CHECK(err == 0 || err == -EBADMSG);
	}
}

static void truncated_exchange_id_and_open_replies_are_ebadmsg(void)
{
	static const char exid_hex[] =
		"0000000000000042 00000001 00000000 00000000" /* clientid, seq, flags, SP4_NONE */
		"0000000000000000 00000002 6761 0000"         /* server owner */
		"00000001 73000000"                           /* scope */
		"00000001 00000001 64000000 00000001 6e000000 0000000000000000 00000000";
	static const char open_hex[] =
		"00000001 2122232425262728292a2b2c"             /* stateid */
		"00000001 0000000000000001 0000000000000002"    /* change_info */
		"00000004 00000000 00000003 00000007 00000001"; /* rflags, attrset, NONE_EXT */
	uint8_t buf[256];
	size_t n = unhex(exid_hex, buf);
	struct nfs4_exchange_res res;
	struct pando_stateid got;

	for (size_t cut = 0; cut <= n; cut++) {
		struct xdr_r r = { buf, buf + cut, false, false };

		CHECK_EQ(d4_exchange_id(&r, &res), cut == n ? 0 : -EBADMSG);
	}
	CHECK_EQ(res.clientid, 0x42);
	n = unhex(open_hex, buf);
	for (size_t cut = 0; cut <= n; cut++) {
		struct xdr_r r = { buf, buf + cut, false, false };

		CHECK_EQ(d4_open(&r, &got), cut == n ? 0 : -EBADMSG);
	}
	CHECK_EQ(got.seqid, 1);
}

static void truncated_rpc_reply_headers_are_ebadmsg(void)
{
	static const char reply_hex[] = "00000400 00000001 00000000 00000000 00000000 00000000";
	uint8_t buf[64];
	size_t n = unhex(reply_hex, buf), off;
	uint32_t why;

	CHECK_EQ(rpc_reply_body(buf, n, &off, &why), 0);
	CHECK_EQ(off, n);
	for (size_t cut = 0; cut < n; cut++)
		CHECK_EQ(rpc_reply_body(buf, cut, &off, &why), -EBADMSG);
	buf[23] = 1; /* PROG_UNAVAIL */
	CHECK_EQ(rpc_reply_body(buf, n, &off, &why), -EPROTO);
	CHECK_EQ(why, 1);
}

static int recalls_seen;

static bool recall_any(void *arg, const struct nfs4_fh *fh, const struct pando_stateid *stateid)
{
	recalls_seen++;
	return fh && fh->len == 2 && fh->data[0] == 0xab;
}

static void give_back_none(void *arg, unsigned slot)
{
}

static uint32_t serve(struct client *cl, const uint8_t *args, size_t len, uint8_t *res, size_t cap,
		      size_t *res_len)
{
	struct xdr_w w = { res, cap, 0 };
	uint32_t stat = cb_handler(cl, 0x40000000u, 1, args, len, &w);

	*res_len = w.len;
	return stat;
}

static void callbacks_answer_recalls_and_refuse_garbage(void)
{
	static const char call_hex[] =
		"00000000 00000001 00000000 00000002"       /* tag, minor 1, ident, 2 ops */
		"0000000b 0102030405060708090a0b0c0d0e0f10" /* CB_SEQUENCE, sessionid */
		"00000009 00000000 00000000 00000000 00000000" /* seq, slot, highest, cachethis, no lists */
		"00000005 00000004 00000002 00000000 00000001" /* CB_LAYOUTRECALL ff RW, FILE */
		"00000002 abcd0000 0000000000000000 ffffffffffffffff" /* fh, offset, length */
		"00000001 2122232425262728292a2b2c";                  /* stateid */
	static const char want_hex[] =
		"00000000 00000000 00000002"
		"0000000b 00000000 0102030405060708090a0b0c0d0e0f10 00000009 00000000 00000000 00000000"
		"00000005 00000000";
	static struct client cl;
	struct recall_hook hook = { recall_any, give_back_none, NULL };
	uint8_t call[256], want[256], res[512];
	size_t n = unhex(call_hex, call), wn = unhex(want_hex, want), len;

	memcpy(cl.sessionid, sessionid, sizeof(sessionid));
	pthread_mutex_init(&cl.renew_lock, NULL);
	pthread_cond_init(&cl.renew_cond, NULL);
	cl.hook = &hook;
	CHECK_EQ(serve(&cl, call, n, res, sizeof(res), &len), 0);
	CHECK_EQ(len, wn);
	CHECK_MEM(res, want, wn);
	CHECK(cl.recall_pending);
	for (size_t cut = 0; cut < n; cut++) {
		uint8_t *part = malloc(cut ? cut : 1);
		uint32_t stat;

		memcpy(part, call, cut);
		stat = serve(&cl, part, cut, res, sizeof(res), &len);
		/* Garbage, or a compound whose failing op says BADXDR. */
		CHECK(stat == 4 || (stat == 0 && len >= 4 && res[3] != 0));
		free(part);
	}
	call[31] ^= 0xff; /* another session */
	CHECK_EQ(serve(&cl, call, n, res, sizeof(res), &len), 0);
	CHECK_EQ(res[2] << 8 | res[3], 10052); /* NFS4ERR_BADSESSION */
}

/* fattr4 with FATTR4_MDSTHRESHOLD (bit 68) only: one flexfiles
 * threshold_item4 (RFC 8881 5.12.6) with read and write size hints. */
static const uint8_t mdsthreshold_attr[] = {
	0, 0, 0, 3,  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, /* bitmap4: bit 68 */
	0, 0, 0, 36,                                        /* attrlist4 length */
	0, 0, 0, 1,                                         /* one item */
	0, 0, 0, 4,                                         /* LAYOUT4_FLEX_FILES */
	0, 0, 0, 1,  0, 0, 0, 3,                            /* hints: read, write size */
	0, 0, 0, 16,                                        /* thi_hintlist */
	0, 0, 0, 0,  0, 1, 0, 1,                            /* read size 65537 */
	0, 0, 0, 0,  0, 2, 0, 0,                            /* write size 131072 */
};

static void mdsthreshold_decodes_and_truncations_are_ebadmsg(void)
{
	struct nfs4_mdsthreshold t;
	struct xdr_r r = { mdsthreshold_attr, mdsthreshold_attr + sizeof(mdsthreshold_attr), false,
			   false };
	uint8_t other[sizeof(mdsthreshold_attr)];

	CHECK_EQ(d4_mdsthreshold(&r, &t), 0);
	CHECK(t.read_size == 65537 && t.write_size == 131072);
	CHECK(r.p == r.end);
	for (size_t cut = 0; cut < sizeof(mdsthreshold_attr); cut++) {
		struct xdr_r part = { mdsthreshold_attr, mdsthreshold_attr + cut, false, false };

		CHECK_EQ(d4_mdsthreshold(&part, &t), -EBADMSG);
	}
	/* Another layout type's item is no hint for flexfiles. */
	memcpy(other, mdsthreshold_attr, sizeof(other));
	other[27] = 1;
	r = (struct xdr_r){ other, other + sizeof(other), false, false };
	CHECK_EQ(d4_mdsthreshold(&r, &t), 0);
	CHECK(t.read_size == 0 && t.write_size == 0);
}

static void readdir_encodes_as_rfc8881_says(void)
{
	static const char want_hex[] =
		"0000001a 0000000000000007 0102030405060708" /* READDIR, cookie, cookieverf */
		"0000f000 0000f000"                          /* dircount, maxcount */
		"00000001 00080012";                         /* type, size, filehandle */
	static const uint8_t verf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t want[64], got[64];
	struct xdr_w w = { got, sizeof(got), 0 };
	size_t n = unhex(want_hex, want);

	c4_readdir(&w, 7, verf, 0xf000);
	CHECK_EQ(w.len, n);
	CHECK_MEM(got, want, n);
}

/* READDIR4resok: a directory "d" and a 3,901-byte file "f", then eof. */
static const char readdir_reply_hex[] =
	"0a0b0c0d0e0f0001"                            /* cookieverf */
	"00000001 0000000000000003 00000001 64000000" /* entry, cookie 3, "d" */
	"00000001 00080012 00000014"                  /* bitmap, attrs of 20 bytes */
	"00000002 0000000000001000 00000004 aabbccdd" /* NF4DIR, size, fh<4> */
	"00000001 0000000000000009 00000001 66000000" /* entry, cookie 9, "f" */
	"00000001 00080012 00000014"
	"00000001 0000000000000f3d 00000004 11223344" /* NF4REG, 3901 */
	"00000000 00000001";                          /* no more entries, eof */

struct seen {
	unsigned n;
	char names[2];
	uint32_t types[2];
	uint64_t sizes[2];
	uint8_t fh0;
};

static void note_entry(void *arg, const struct nfs4_dirent *e)
{
	struct seen *s = arg;

	if (s->n < 2 && e->name_len == 1) {
		s->names[s->n] = e->name[0];
		s->types[s->n] = e->type;
		s->sizes[s->n] = e->size;
		if (s->n == 0)
			s->fh0 = e->fh.data[0];
	}
	s->n++;
}

static void readdir_replies_decode_and_truncations_are_ebadmsg(void)
{
	uint8_t buf[256];
	size_t n = unhex(readdir_reply_hex, buf);
	struct nfs4_readdir_res res;
	struct seen s = { 0 };
	struct xdr_r r = { buf, buf + n, false, false };

	CHECK_EQ(d4_readdir(&r, note_entry, &s, &res), 0);
	CHECK(s.n == 2 && s.names[0] == 'd' && s.names[1] == 'f');
	CHECK(s.types[0] == 2 && s.types[1] == 1 && s.sizes[1] == 3901 && s.fh0 == 0xaa);
	CHECK(res.eof && res.entries == 2 && res.cookie == 9 && res.verifier[0] == 0x0a);
	for (size_t cut = 0; cut < n; cut++) {
		struct xdr_r part = { buf, buf + cut, false, false };

		CHECK_EQ(d4_readdir(&part, note_entry, &s, &res), -EBADMSG);
	}
	/* An entry without the file handle asked for, or a name of 256 bytes. */
	buf[33] = 0x00;
	r = (struct xdr_r){ buf, buf + n, false, false };
	CHECK_EQ(d4_readdir(&r, note_entry, &s, &res), -EBADMSG);
	buf[33] = 0x08;
	buf[22] = 0x01;
	buf[23] = 0x00;
	r = (struct xdr_r){ buf, buf + n, false, false };
	CHECK_EQ(d4_readdir(&r, note_entry, &s, &res), -EBADMSG);
}

int main(void)
{
	readdir_encodes_as_rfc8881_says();
	readdir_replies_decode_and_truncations_are_ebadmsg();
	mdsthreshold_decodes_and_truncations_are_ebadmsg();
	callbacks_answer_recalls_and_refuse_garbage();
	sequence_putfh_layoutget_encodes_as_rfc8881_says();
	exchange_id_encodes_as_rfc8881_says();
	truncated_or_corrupted_layoutget_replies_are_ebadmsg();
	truncated_exchange_id_and_open_replies_are_ebadmsg();
	truncated_rpc_reply_headers_are_ebadmsg();
	CHECK_DONE();
}
