/* ff_device_addr4 (RFC 8435 section 4.1):
 *
 *   struct ff_device_versions4 {
 *       uint32_t  ffdv_version;
 *       uint32_t  ffdv_minorversion;
 *       uint32_t  ffdv_rsize;
 *       uint32_t  ffdv_wsize;
 *       bool      ffdv_tightly_coupled;
 *   };
 *   struct ff_device_addr4 {
 *       multipath_list4      ffda_netaddrs;     netaddr4<>
 *       ff_device_versions4  ffda_versions<>;
 *   };
 */
#include "pando/ff_xdr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfs4_types.h"

#define VERSION_SIZE 20

/* "If ffdv_version equals 3, then the server MUST set ffdv_minorversion
 * to 0 and ffdv_tightly_coupled to false." */
static int versions_valid(const struct pando_ff_device_addr *a)
{
	if (a->version_count == 0 || !a->versions)
		return 0;
	for (uint32_t i = 0; i < a->version_count; i++) {
		const struct pando_ff_device_version *v = &a->versions[i];

		if (v->version == 3 && (v->minorversion != 0 || v->tightly_coupled))
			return 0;
	}
	return 1;
}

int pando_ff_device_addr_encode(const struct pando_ff_device_addr *a, uint8_t *buf, size_t cap,
				size_t *len)
{
	struct xdr_w w = { buf, cap, 0 };

	*len = 0;
	if (a->netaddr_count == 0 || !a->netaddrs || !versions_valid(a))
		return -EINVAL;
	xw_u32(&w, a->netaddr_count);
	for (uint32_t i = 0; i < a->netaddr_count; i++)
		xw_netaddr(&w, &a->netaddrs[i]);
	xw_u32(&w, a->version_count);
	for (uint32_t i = 0; i < a->version_count; i++) {
		const struct pando_ff_device_version *v = &a->versions[i];

		xw_u32(&w, v->version);
		xw_u32(&w, v->minorversion);
		xw_u32(&w, v->rsize);
		xw_u32(&w, v->wsize);
		xw_bool(&w, v->tightly_coupled);
	}
	*len = w.len;
	return w.len > cap ? -ENOSPC : 0;
}

int pando_ff_device_addr_decode(const uint8_t *buf, size_t len, struct pando_ff_device_addr *a)
{
	struct xdr_r r = { buf, buf + len, false, false };
	uint32_t n;
	int rc;

	memset(a, 0, sizeof(*a));
	n = xr_count(&r, XDR_NETADDR_MIN);
	a->netaddrs = xr_alloc(&r, n, sizeof(*a->netaddrs));
	a->netaddr_count = a->netaddrs ? n : 0;
	for (uint32_t i = 0; i < a->netaddr_count; i++)
		xr_netaddr(&r, &a->netaddrs[i]);
	n = xr_count(&r, VERSION_SIZE);
	a->versions = xr_alloc(&r, n, sizeof(*a->versions));
	a->version_count = a->versions ? n : 0;
	for (uint32_t i = 0; i < a->version_count; i++) {
		struct pando_ff_device_version *v = &a->versions[i];

		v->version = xr_u32(&r);
		v->minorversion = xr_u32(&r);
		v->rsize = xr_u32(&r);
		v->wsize = xr_u32(&r);
		v->tightly_coupled = xr_bool(&r);
	}
	rc = xr_result(&r);
	if (rc)
		pando_ff_device_addr_release(a);
	return rc;
}

void pando_ff_device_addr_release(struct pando_ff_device_addr *a)
{
	free(a->netaddrs);
	free(a->versions);
	memset(a, 0, sizeof(*a));
}
