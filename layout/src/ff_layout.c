/* ff_layout4 (RFC 8435 section 5.1):
 *
 *   struct ff_data_server4 {
 *       deviceid4           ffds_deviceid;      opaque[16]
 *       uint32_t            ffds_efficiency;
 *       stateid4            ffds_stateid;
 *       nfs_fh4             ffds_fh_vers<>;
 *       fattr4_owner        ffds_user;          utf8 string<>
 *       fattr4_owner_group  ffds_group;
 *   };
 *   struct ff_mirror4 { ff_data_server4 ffm_data_servers<>; };
 *   struct ff_layout4 {
 *       length4             ffl_stripe_unit;
 *       ff_mirror4          ffl_mirrors<>;
 *       ff_flags4           ffl_flags;
 *       uint32_t            ffl_stats_collect_hint;
 *   };
 */
#include "pando/ff_xdr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfs4_types.h"

/* deviceid, efficiency, stateid, fh count, user and group lengths */
#define DS_MIN_SIZE (PANDO_FF_DEVICEID_SIZE + 4 + XDR_STATEID_SIZE + 4 + 4 + 4)

static int data_server_valid(const struct pando_ff_data_server *ds)
{
	if (ds->fh_count == 0 || !ds->fh_vers)
		return 0;
	for (uint32_t i = 0; i < ds->fh_count; i++)
		if (ds->fh_vers[i].len > PANDO_FF_FH_MAX)
			return 0;
	return 1;
}

/* RFC 8435 5.1: the same stripe count in every mirror, and a stripe unit
 * of 0 exactly when that count is one. */
static int layout_valid(const struct pando_ff_layout *l)
{
	uint32_t stripes;

	if (l->mirror_count == 0 || !l->mirrors || l->mirrors[0].ds_count == 0)
		return 0;
	stripes = l->mirrors[0].ds_count;
	if ((stripes == 1) != (l->stripe_unit == 0))
		return 0;
	for (uint32_t m = 0; m < l->mirror_count; m++) {
		if (l->mirrors[m].ds_count != stripes || !l->mirrors[m].ds)
			return 0;
		for (uint32_t s = 0; s < stripes; s++)
			if (!data_server_valid(&l->mirrors[m].ds[s]))
				return 0;
	}
	return 1;
}

static void put_data_server(struct xdr_w *w, const struct pando_ff_data_server *ds)
{
	xw_fixed(w, ds->deviceid, PANDO_FF_DEVICEID_SIZE);
	xw_u32(w, ds->efficiency);
	xw_stateid(w, &ds->stateid);
	xw_u32(w, ds->fh_count);
	for (uint32_t i = 0; i < ds->fh_count; i++)
		xw_fh(w, &ds->fh_vers[i]);
	xw_string(w, ds->user);
	xw_string(w, ds->group);
}

int pando_ff_layout_encode(const struct pando_ff_layout *l, uint8_t *buf, size_t cap, size_t *len)
{
	struct xdr_w w = { buf, cap, 0 };

	*len = 0;
	if (!layout_valid(l))
		return -EINVAL;
	xw_u64(&w, l->stripe_unit);
	xw_u32(&w, l->mirror_count);
	for (uint32_t m = 0; m < l->mirror_count; m++) {
		xw_u32(&w, l->mirrors[m].ds_count);
		for (uint32_t s = 0; s < l->mirrors[m].ds_count; s++)
			put_data_server(&w, &l->mirrors[m].ds[s]);
	}
	xw_u32(&w, l->flags);
	xw_u32(&w, l->stats_collect_hint);
	*len = w.len;
	return w.len > cap ? -ENOSPC : 0;
}

static void get_data_server(struct xdr_r *r, struct pando_ff_data_server *ds)
{
	uint32_t n;

	xr_fixed(r, ds->deviceid, PANDO_FF_DEVICEID_SIZE);
	ds->efficiency = xr_u32(r);
	xr_stateid(r, &ds->stateid);
	n = xr_count(r, 4);
	ds->fh_vers = xr_alloc(r, n, sizeof(*ds->fh_vers));
	if (!ds->fh_vers)
		n = 0;
	ds->fh_count = n;
	for (uint32_t i = 0; i < n; i++)
		xr_fh(r, &ds->fh_vers[i]);
	xr_string(r, ds->user, PANDO_FF_OWNER_MAX);
	xr_string(r, ds->group, PANDO_FF_OWNER_MAX);
}

static void get_mirror(struct xdr_r *r, struct pando_ff_mirror *mirror)
{
	uint32_t n = xr_count(r, DS_MIN_SIZE);

	mirror->ds = xr_alloc(r, n, sizeof(*mirror->ds));
	mirror->ds_count = mirror->ds ? n : 0;
	for (uint32_t s = 0; s < mirror->ds_count && !r->err; s++)
		get_data_server(r, &mirror->ds[s]);
}

int pando_ff_layout_decode(const uint8_t *buf, size_t len, struct pando_ff_layout *l)
{
	struct xdr_r r = { buf, buf + len, false, false };
	uint32_t n;
	int rc;

	memset(l, 0, sizeof(*l));
	l->stripe_unit = xr_u64(&r);
	n = xr_count(&r, 4);
	l->mirrors = xr_alloc(&r, n, sizeof(*l->mirrors));
	l->mirror_count = l->mirrors ? n : 0;
	for (uint32_t m = 0; m < l->mirror_count && !r.err; m++)
		get_mirror(&r, &l->mirrors[m]);
	l->flags = xr_u32(&r);
	l->stats_collect_hint = xr_u32(&r);
	rc = xr_result(&r);
	if (rc)
		pando_ff_layout_release(l);
	return rc;
}

void pando_ff_layout_release(struct pando_ff_layout *l)
{
	for (uint32_t m = 0; m < l->mirror_count; m++) {
		for (uint32_t s = 0; s < l->mirrors[m].ds_count; s++)
			free(l->mirrors[m].ds[s].fh_vers);
		free(l->mirrors[m].ds);
	}
	free(l->mirrors);
	memset(l, 0, sizeof(*l));
}
