/* The control protocol's XDR (osd-target/proto/osd_ctl.x, rpcgen's
 * filters over libntirpc): the first byte picks a type, every procedure's
 * arguments and results, the rest is its encoding.  What decodes is
 * encoded again, to exactly the bytes it used, and that encoding must
 * re-encode to itself; WRITE's in-place decoder (the server's) must agree
 * with rpcgen's. */
#include <string.h>

#include "ctl_server.h"
#include "fuzz.h"

struct ctl_type {
	const char *name;
	xdrproc_t proc;
};

static const struct ctl_type types[] = {
	{ "osd_status", CTL_XDRPROC(xdr_osd_status) },
	{ "osd_format_args", CTL_XDRPROC(xdr_osd_format_args) },
	{ "osd_statfs_res", CTL_XDRPROC(xdr_osd_statfs_res) },
	{ "osd_stats_res", CTL_XDRPROC(xdr_osd_stats_res) },
	{ "osd_partition_args", CTL_XDRPROC(xdr_osd_partition_args) },
	{ "osd_create_args", CTL_XDRPROC(xdr_osd_create_args) },
	{ "osd_create_res", CTL_XDRPROC(xdr_osd_create_res) },
	{ "osd_remove_args", CTL_XDRPROC(xdr_osd_remove_args) },
	{ "osd_remove_res", CTL_XDRPROC(xdr_osd_remove_res) },
	{ "osd_read_args", CTL_XDRPROC(xdr_osd_read_args) },
	{ "osd_read_res", CTL_XDRPROC(xdr_osd_read_res) },
	{ "osd_write_args", CTL_XDRPROC(xdr_osd_write_args) },
	{ "osd_write_res", CTL_XDRPROC(xdr_osd_write_res) },
	{ "osd_getattr_args", CTL_XDRPROC(xdr_osd_getattr_args) },
	{ "osd_getattr_res", CTL_XDRPROC(xdr_osd_getattr_res) },
	{ "osd_setattr_args", CTL_XDRPROC(xdr_osd_setattr_args) },
	{ "osd_setattr_res", CTL_XDRPROC(xdr_osd_setattr_res) },
	{ "osd_list_args", CTL_XDRPROC(xdr_osd_list_args) },
	{ "osd_list_res", CTL_XDRPROC(xdr_osd_list_res) },
	{ "osd_flush_args", CTL_XDRPROC(xdr_osd_flush_args) },
	{ "osd_setcap_args", CTL_XDRPROC(xdr_osd_setcap_args) },
	{ "osd_setcap_res", CTL_XDRPROC(xdr_osd_setcap_res) },
	{ "osd_checksums_args", CTL_XDRPROC(xdr_osd_checksums_args) },
	{ "osd_checksums_res", CTL_XDRPROC(xdr_osd_checksums_res) },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

/* Room for the largest decoded structure of any type above. */
union ctl_value {
	osd_statfs_res statfs;
	osd_stats_res stats;
	osd_create_res create;
	osd_getattr_res getattr;
	osd_checksums_res checksums;
	osd_write_args write;
	uint8_t bytes[512];
};

/* 0 on failure, else how many bytes the filter used. */
static u_int xdr_run(xdrproc_t proc, enum xdr_op op, void *buf, size_t len, void *value)
{
	XDR xdrs;
	u_int pos;
	bool ok;

	xdrmem_ncreate(&xdrs, buf, (u_int)len, op);
	ok = proc(&xdrs, value);
	pos = xdr_getpos(&xdrs);
	XDR_DESTROY(&xdrs);
	return ok ? pos : 0;
}

/* data is 4-aligned, as a call's arguments always are in the record
 * (libntirpc's memory streams abort on anything else). */
static void check_write_inplace(const uint8_t *data, size_t size, const osd_write_args *ref)
{
	osd_write_args a;
	XDR xdrs;

	memset(&a, 0, sizeof(a));
	xdrmem_ncreate(&xdrs, (char *)data, (u_int)size, XDR_DECODE);
	if (ctl_xdr_write_args_inplace(&xdrs, &a))
		fuzz_check(!memcmp(&a.id, &ref->id, sizeof(a.id)) && a.offset == ref->offset &&
				   a.stable == ref->stable &&
				   a.data.data_len == ref->data.data_len &&
				   (a.data.data_len == 0 ||
				    !memcmp(a.data.data_val, ref->data.data_val, a.data.data_len)),
			   "in-place WRITE decode differs from rpcgen's");
	XDR_DESTROY(&xdrs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union ctl_value v1, v2;
	const struct ctl_type *t;
	char *in, *enc1, *enc2;
	u_int used, len1, len2;

	if (size < 1)
		return 0;
	t = &types[data[0] % NTYPES];
	in = malloc(size);
	memcpy(in, data + 1, size - 1);
	memset(&v1, 0, sizeof(v1));
	used = xdr_run(t->proc, XDR_DECODE, in, size - 1, &v1);
	if (used) {
		if (t->proc == CTL_XDRPROC(xdr_osd_write_args))
			check_write_inplace((uint8_t *)in, size - 1, &v1.write);
		enc1 = malloc(used);
		enc2 = malloc(used);
		len1 = xdr_run(t->proc, XDR_ENCODE, enc1, used, &v1);
		if (len1 != used)
			fprintf(stderr, "fuzz: %s: %u bytes decoded, %u encoded\n", t->name, used,
				len1);
		fuzz_check(len1 == used, t->name);
		memset(&v2, 0, sizeof(v2));
		fuzz_check(xdr_run(t->proc, XDR_DECODE, enc1, len1, &v2) == len1, t->name);
		len2 = xdr_run(t->proc, XDR_ENCODE, enc2, used, &v2);
		fuzz_check(len2 == len1 && !memcmp(enc1, enc2, len1), t->name);
		xdr_free(t->proc, &v2);
		free(enc1);
		free(enc2);
	}
	xdr_free(t->proc, &v1);
	free(in);
	return 0;
}
