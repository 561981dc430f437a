/* XDR of the NFSv4 types the flexfiles structures are built from. */
#ifndef PANDO_LAYOUT_NFS4_TYPES_H
#define PANDO_LAYOUT_NFS4_TYPES_H

#include "pando/ff_xdr.h"
#include "xdr.h"

/* Smallest encodings, for bounding array counts before allocating. */
#define XDR_STATEID_SIZE 16
#define XDR_NFSTIME_SIZE 12
#define XDR_NETADDR_MIN 8 /* two empty strings */

void xw_stateid(struct xdr_w *w, const struct pando_stateid *s);
void xr_stateid(struct xdr_r *r, struct pando_stateid *s);
void xw_nfstime(struct xdr_w *w, const struct pando_nfstime *t);
void xr_nfstime(struct xdr_r *r, struct pando_nfstime *t);
void xw_fh(struct xdr_w *w, const struct pando_ff_fh *fh);
void xr_fh(struct xdr_r *r, struct pando_ff_fh *fh);
void xw_netaddr(struct xdr_w *w, const struct pando_netaddr *na);
void xr_netaddr(struct xdr_r *r, struct pando_netaddr *na);

#endif
