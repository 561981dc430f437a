/* Extent checksums for scrub: CHECKSUMS (ctl_proc_checksums.c on the
 * server). */
#include <errno.h>

#include "ctl_client.h"

struct csum_out {
	struct osd_ctl_extent_csum *ext;
	size_t max;
	size_t *n;
	uint64_t *length;
};

static int take_checksums(const void *res, int rc, void *arg)
{
	const osd_checksums_res_ok *ok = &((const osd_checksums_res *)res)->osd_checksums_res_u.ok;
	struct csum_out *out = arg;

	if (!rc && ok->extents.extents_len > out->max)
		rc = -EPROTO;
	for (u_int i = 0; !rc && i < ok->extents.extents_len; i++) {
		const osd_extent_csum *e = &ok->extents.extents_val[i];

		if ((unsigned)e->verify > OSD_CSUM_UNREADABLE)
			return -EPROTO;
		out->ext[i] = (struct osd_ctl_extent_csum){ e->crc, e->stored,
							    (enum osd_ctl_csum_verify)e->verify };
	}
	if (rc)
		return rc;
	*out->n = ok->extents.extents_len;
	if (out->length)
		*out->length = ok->length;
	return 0;
}

int osd_ctl_checksums(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t first,
		      size_t count, bool verify, struct osd_ctl_extent_csum *out, size_t *n,
		      uint64_t *length)
{
	struct csum_out want = { out, count, n, length };
	osd_checksums_args args = { .id = { id->partition, id->object },
				    .first_extent = first,
				    .count = (u_int)count,
				    .verify = verify };
	osd_checksums_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_checksums_res, take_checksums, &want);

	if (count > (verify ? OSD_CTL_MAX_CSUMS_VERIFY : OSD_CTL_MAX_CSUMS))
		return -EINVAL;
	*n = 0;
	return ctl_call_result(c, OSDCTL_CHECKSUMS, CTL_XDRPROC(xdr_osd_checksums_args), &args,
			       &res);
}
