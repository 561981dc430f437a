/* Every NFSv3 argument decoder of the OSD's data server (nfs3_decode_*):
 * the first byte picks the decoder, the rest are the arguments.  What
 * decodes is written back with the RFC 1813 layout and must decode to the
 * same values, having used exactly as many bytes as the encoding holds
 * (padding aside, which the decoders skip unread). */
#include <string.h>

#include "fuzz.h"
#include "nfs3.h"

enum { FH, READ, WRITE, COMMIT, ACCESS, NDECODERS };

union args {
	struct nfs3_fh fh;
	struct nfs3_read_args read;
	struct nfs3_write_args write;
	struct nfs3_commit_args commit;
	struct nfs3_access_args access;
};

static int decode(int which, struct xdr_r *in, union args *a)
{
	switch (which) {
	case FH:
		return nfs3_decode_fh_args(in, &a->fh);
	case READ:
		return nfs3_decode_read_args(in, &a->read);
	case WRITE:
		return nfs3_decode_write_args(in, &a->write);
	case COMMIT:
		return nfs3_decode_commit_args(in, &a->commit);
	default:
		return nfs3_decode_access_args(in, &a->access);
	}
}

static void encode(int which, struct xdr_w *w, const union args *a)
{
	switch (which) {
	case FH:
		xw_opaque(w, a->fh.data, a->fh.len);
		break;
	case READ:
		xw_opaque(w, a->read.fh.data, a->read.fh.len);
		xw_u64(w, a->read.offset);
		xw_u32(w, a->read.count);
		break;
	case WRITE:
		xw_opaque(w, a->write.fh.data, a->write.fh.len);
		xw_u64(w, a->write.offset);
		xw_u32(w, a->write.count);
		xw_u32(w, a->write.stable);
		xw_opaque(w, a->write.data, a->write.data_len);
		break;
	case COMMIT:
		xw_opaque(w, a->commit.fh.data, a->commit.fh.len);
		xw_u64(w, a->commit.offset);
		xw_u32(w, a->commit.count);
		break;
	default:
		xw_opaque(w, a->access.fh.data, a->access.fh.len);
		xw_u32(w, a->access.access);
		break;
	}
}

static bool same_fh(const struct nfs3_fh *a, const struct nfs3_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

static bool same(int which, const union args *a, const union args *b)
{
	switch (which) {
	case FH:
		return same_fh(&a->fh, &b->fh);
	case READ:
		return same_fh(&a->read.fh, &b->read.fh) && a->read.offset == b->read.offset &&
		       a->read.count == b->read.count;
	case WRITE:
		return same_fh(&a->write.fh, &b->write.fh) && a->write.offset == b->write.offset &&
		       a->write.count == b->write.count && a->write.stable == b->write.stable &&
		       a->write.data_len == b->write.data_len &&
		       !memcmp(a->write.data, b->write.data, a->write.data_len);
	case COMMIT:
		return same_fh(&a->commit.fh, &b->commit.fh) &&
		       a->commit.offset == b->commit.offset && a->commit.count == b->commit.count;
	default:
		return same_fh(&a->access.fh, &b->access.fh) &&
		       a->access.access == b->access.access;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union args a, b;
	struct xdr_r in;
	struct xdr_w out;
	uint8_t *buf;
	int which;

	if (size < 1)
		return 0;
	which = data[0] % NDECODERS;
	xr_init(&in, data + 1, size - 1);
	if (decode(which, &in, &a))
		return 0;
	fuzz_check(!in.err && in.p <= in.end, "decoder read past its input");
	buf = malloc(size);
	xw_init(&out, buf, size);
	encode(which, &out, &a);
	fuzz_check(!xw_overflowed(&out) && out.len == (size_t)(in.p - (data + 1)),
		   "encoding differs in length from the bytes decoded");
	xr_init(&in, buf, out.len);
	fuzz_check(decode(which, &in, &b) == 0 && xr_left(&in) == 0 && same(which, &a, &b),
		   "re-encoded arguments decode to others");
	free(buf);
	return 0;
}
