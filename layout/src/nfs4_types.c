#include "nfs4_types.h"

void xw_stateid(struct xdr_w *w, const struct pando_stateid *s)
{
	xw_u32(w, s->seqid);
	xw_fixed(w, s->other, sizeof(s->other));
}

void xr_stateid(struct xdr_r *r, struct pando_stateid *s)
{
	s->seqid = xr_u32(r);
	xr_fixed(r, s->other, sizeof(s->other));
}

/* nfstime4: int64_t seconds, uint32_t nseconds */
void xw_nfstime(struct xdr_w *w, const struct pando_nfstime *t)
{
	xw_u64(w, (uint64_t)t->seconds);
	xw_u32(w, t->nseconds);
}

void xr_nfstime(struct xdr_r *r, struct pando_nfstime *t)
{
	t->seconds = (int64_t)xr_u64(r);
	t->nseconds = xr_u32(r);
}

/* nfs_fh4: opaque<NFS4_FHSIZE> */
void xw_fh(struct xdr_w *w, const struct pando_ff_fh *fh)
{
	xw_opaque(w, fh->data, fh->len);
}

void xr_fh(struct xdr_r *r, struct pando_ff_fh *fh)
{
	fh->len = xr_opaque(r, fh->data, PANDO_FF_FH_MAX);
}

/* netaddr4: string na_r_netid<>, string na_r_addr<> */
void xw_netaddr(struct xdr_w *w, const struct pando_netaddr *na)
{
	xw_string(w, na->netid);
	xw_string(w, na->uaddr);
}

void xr_netaddr(struct xdr_r *r, struct pando_netaddr *na)
{
	xr_string(r, na->netid, PANDO_NETID_MAX);
	xr_string(r, na->uaddr, PANDO_UADDR_MAX);
}
