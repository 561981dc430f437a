/* Ganesha's own NFSv4.1/4.2 XDR for what flexfiles clients send the
 * metadata manager, as our patch series fixed it (the inline filters of
 * the patched src/include/nfsv41.h, ganesha-fsal/patches 0040 and 0090):
 * LAYOUTERROR4args, LAYOUTSTATS4args and LAYOUTRETURN4args; the first
 * byte picks which.  (LAYOUTRETURN's flexfiles body is decoded by
 * layout/'s own pando_ff_layoutreturn_decode, fuzz_ff_layoutreturn: the
 * FSAL never runs Ganesha's xdr_ff_layoutreturn4, whose strings lose
 * what follows an embedded NUL when encoded again.)  What decodes is encoded
 * again, to exactly the bytes it used, and that encoding must re-encode
 * to itself.  Built only when the tree has the Ganesha source (ci/fuzz
 * passes it, as ci/build does). */
#include "config.h"
#include "nfsv41.h"

#include "fuzz.h"

struct nfs41_type {
	const char *name;
	xdrproc_t proc;
};

static const struct nfs41_type types[] = {
	{ "LAYOUTERROR4args", (xdrproc_t)xdr_LAYOUTERROR4args },
	{ "LAYOUTSTATS4args", (xdrproc_t)xdr_LAYOUTSTATS4args },
	{ "LAYOUTRETURN4args", (xdrproc_t)xdr_LAYOUTRETURN4args },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

union nfs41_value {
	LAYOUTERROR4args error;
	LAYOUTSTATS4args stats;
	LAYOUTRETURN4args ret;
};

/* 0 on failure, else how many bytes the filter used. */
static u_int xdr_run(xdrproc_t proc, enum xdr_op op, void *buf, size_t len, void *value)
{
	XDR xdrs;
	u_int pos;
	bool ok;

	xdrmem_create(&xdrs, buf, (u_int)len, op);
	ok = proc(&xdrs, value);
	pos = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	return ok ? pos : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union nfs41_value v1, v2;
	const struct nfs41_type *t;
	char *in, *enc1, *enc2;
	u_int used, len1;

	if (size < 1)
		return 0;
	t = &types[data[0] % NTYPES];
	/* 4-aligned, as a request's bytes are (memory streams want it). */
	in = malloc(size);
	memcpy(in, data + 1, size - 1);
	memset(&v1, 0, sizeof(v1));
	used = xdr_run(t->proc, XDR_DECODE, in, size - 1, &v1);
	if (used) {
		enc1 = malloc(used);
		enc2 = malloc(used);
		len1 = xdr_run(t->proc, XDR_ENCODE, enc1, used, &v1);
		if (len1 != used)
			fprintf(stderr, "fuzz: %s: %u bytes decoded, %u encoded\n", t->name, used,
				len1);
		fuzz_check(len1 == used, t->name);
		memset(&v2, 0, sizeof(v2));
		fuzz_check(xdr_run(t->proc, XDR_DECODE, enc1, len1, &v2) == len1, t->name);
		fuzz_check(xdr_run(t->proc, XDR_ENCODE, enc2, used, &v2) == len1 &&
				   !memcmp(enc1, enc2, len1),
			   t->name);
		xdr_free(t->proc, &v2);
		free(enc1);
		free(enc2);
	}
	xdr_free(t->proc, &v1);
	free(in);
	return 0;
}
