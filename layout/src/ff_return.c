/* ff_layoutreturn4 (RFC 8435 section 9.3), with io_info4 and
 * device_error4 from RFC 7862:
 *
 *   struct device_error4 { deviceid4 de_deviceid; nfsstat4 de_status;
 *                          nfs_opnum4 de_opnum; };
 *   struct ff_ioerr4 { offset4 ffie_offset; length4 ffie_length;
 *                      stateid4 ffie_stateid; device_error4 ffie_errors<>; };
 *   struct ff_io_latency4 { uint64_t ffil_ops_requested, ffil_bytes_requested,
 *                           ffil_ops_completed, ffil_bytes_completed,
 *                           ffil_bytes_not_delivered;
 *                           nfstime4 ffil_total_busy_time,
 *                           ffil_aggregate_completion_time; };
 *   struct ff_layoutupdate4 { netaddr4 ffl_addr; nfs_fh4 ffl_fhandle;
 *                             ff_io_latency4 ffl_read, ffl_write;
 *                             nfstime4 ffl_duration; bool ffl_local; };
 *   struct io_info4 { uint64_t ii_count; uint64_t ii_bytes; };
 *   struct ff_iostats4 { offset4 ffis_offset; length4 ffis_length;
 *                        stateid4 ffis_stateid; io_info4 ffis_read, ffis_write;
 *                        deviceid4 ffis_deviceid;
 *                        ff_layoutupdate4 ffis_layoutupdate; };
 *   struct ff_layoutreturn4 { ff_ioerr4 fflr_ioerr_report<>;
 *                             ff_iostats4 fflr_iostats_report<>; };
 */
#include "pando/ff_xdr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfs4_types.h"

#define DEVICE_ERROR_SIZE (PANDO_FF_DEVICEID_SIZE + 4 + 4)
#define IOERR_MIN_SIZE (8 + 8 + XDR_STATEID_SIZE + 4)
#define LATENCY_SIZE (5 * 8 + 2 * XDR_NFSTIME_SIZE)
#define LAYOUTUPDATE_MIN_SIZE (XDR_NETADDR_MIN + 4 + 2 * LATENCY_SIZE + XDR_NFSTIME_SIZE + 4)
#define IOSTATS_MIN_SIZE \
	(8 + 8 + XDR_STATEID_SIZE + 2 * 16 + PANDO_FF_DEVICEID_SIZE + LAYOUTUPDATE_MIN_SIZE)

static void put_ioerr(struct xdr_w *w, const struct pando_ff_ioerr *e)
{
	xw_u64(w, e->offset);
	xw_u64(w, e->length);
	xw_stateid(w, &e->stateid);
	xw_u32(w, e->error_count);
	for (uint32_t i = 0; i < e->error_count; i++) {
		xw_fixed(w, e->errors[i].deviceid, PANDO_FF_DEVICEID_SIZE);
		xw_u32(w, (uint32_t)e->errors[i].status);
		xw_u32(w, e->errors[i].opnum);
	}
}

static void put_latency(struct xdr_w *w, const struct pando_ff_io_latency *l)
{
	xw_u64(w, l->ops_requested);
	xw_u64(w, l->bytes_requested);
	xw_u64(w, l->ops_completed);
	xw_u64(w, l->bytes_completed);
	xw_u64(w, l->bytes_not_delivered);
	xw_nfstime(w, &l->total_busy_time);
	xw_nfstime(w, &l->aggregate_completion_time);
}

static void put_iostats(struct xdr_w *w, const struct pando_ff_iostats *s)
{
	const struct pando_ff_layoutupdate *u = &s->layoutupdate;

	xw_u64(w, s->offset);
	xw_u64(w, s->length);
	xw_stateid(w, &s->stateid);
	xw_u64(w, s->read.count);
	xw_u64(w, s->read.bytes);
	xw_u64(w, s->write.count);
	xw_u64(w, s->write.bytes);
	xw_fixed(w, s->deviceid, PANDO_FF_DEVICEID_SIZE);
	xw_netaddr(w, &u->addr);
	xw_fh(w, &u->fhandle);
	put_latency(w, &u->read);
	put_latency(w, &u->write);
	xw_nfstime(w, &u->duration);
	xw_bool(w, u->local);
}

static int layoutreturn_valid(const struct pando_ff_layoutreturn *ret)
{
	if ((ret->ioerr_count && !ret->ioerrs) || (ret->iostats_count && !ret->iostats))
		return 0;
	for (uint32_t i = 0; i < ret->ioerr_count; i++)
		if (ret->ioerrs[i].error_count && !ret->ioerrs[i].errors)
			return 0;
	for (uint32_t i = 0; i < ret->iostats_count; i++)
		if (ret->iostats[i].layoutupdate.fhandle.len > PANDO_FF_FH_MAX)
			return 0;
	return 1;
}

int pando_ff_layoutreturn_encode(const struct pando_ff_layoutreturn *ret, uint8_t *buf, size_t cap,
				 size_t *len)
{
	struct xdr_w w = { buf, cap, 0 };

	*len = 0;
	if (!layoutreturn_valid(ret))
		return -EINVAL;
	xw_u32(&w, ret->ioerr_count);
	for (uint32_t i = 0; i < ret->ioerr_count; i++)
		put_ioerr(&w, &ret->ioerrs[i]);
	xw_u32(&w, ret->iostats_count);
	for (uint32_t i = 0; i < ret->iostats_count; i++)
		put_iostats(&w, &ret->iostats[i]);
	*len = w.len;
	return w.len > cap ? -ENOSPC : 0;
}

static void get_ioerr(struct xdr_r *r, struct pando_ff_ioerr *e)
{
	uint32_t n;

	e->offset = xr_u64(r);
	e->length = xr_u64(r);
	xr_stateid(r, &e->stateid);
	n = xr_count(r, DEVICE_ERROR_SIZE);
	e->errors = xr_alloc(r, n, sizeof(*e->errors));
	e->error_count = e->errors ? n : 0;
	for (uint32_t i = 0; i < e->error_count; i++) {
		xr_fixed(r, e->errors[i].deviceid, PANDO_FF_DEVICEID_SIZE);
		e->errors[i].status = (int32_t)xr_u32(r);
		e->errors[i].opnum = xr_u32(r);
	}
}

static void get_latency(struct xdr_r *r, struct pando_ff_io_latency *l)
{
	l->ops_requested = xr_u64(r);
	l->bytes_requested = xr_u64(r);
	l->ops_completed = xr_u64(r);
	l->bytes_completed = xr_u64(r);
	l->bytes_not_delivered = xr_u64(r);
	xr_nfstime(r, &l->total_busy_time);
	xr_nfstime(r, &l->aggregate_completion_time);
}

static void get_iostats(struct xdr_r *r, struct pando_ff_iostats *s)
{
	struct pando_ff_layoutupdate *u = &s->layoutupdate;

	s->offset = xr_u64(r);
	s->length = xr_u64(r);
	xr_stateid(r, &s->stateid);
	s->read.count = xr_u64(r);
	s->read.bytes = xr_u64(r);
	s->write.count = xr_u64(r);
	s->write.bytes = xr_u64(r);
	xr_fixed(r, s->deviceid, PANDO_FF_DEVICEID_SIZE);
	xr_netaddr(r, &u->addr);
	xr_fh(r, &u->fhandle);
	get_latency(r, &u->read);
	get_latency(r, &u->write);
	xr_nfstime(r, &u->duration);
	u->local = xr_bool(r);
}

int pando_ff_layoutreturn_decode(const uint8_t *buf, size_t len, struct pando_ff_layoutreturn *ret)
{
	struct xdr_r r = { buf, buf + len, false, false };
	uint32_t n;
	int rc;

	memset(ret, 0, sizeof(*ret));
	n = xr_count(&r, IOERR_MIN_SIZE);
	ret->ioerrs = xr_alloc(&r, n, sizeof(*ret->ioerrs));
	ret->ioerr_count = ret->ioerrs ? n : 0;
	for (uint32_t i = 0; i < ret->ioerr_count && !r.err; i++)
		get_ioerr(&r, &ret->ioerrs[i]);
	n = xr_count(&r, IOSTATS_MIN_SIZE);
	ret->iostats = xr_alloc(&r, n, sizeof(*ret->iostats));
	ret->iostats_count = ret->iostats ? n : 0;
	for (uint32_t i = 0; i < ret->iostats_count && !r.err; i++)
		get_iostats(&r, &ret->iostats[i]);
	rc = xr_result(&r);
	if (rc)
		pando_ff_layoutreturn_release(ret);
	return rc;
}

void pando_ff_layoutreturn_release(struct pando_ff_layoutreturn *ret)
{
	for (uint32_t i = 0; i < ret->ioerr_count; i++)
		free(ret->ioerrs[i].errors);
	free(ret->ioerrs);
	free(ret->iostats);
	memset(ret, 0, sizeof(*ret));
}
