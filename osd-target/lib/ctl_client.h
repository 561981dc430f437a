/* Private to the control client: what the procedure stubs (ctl_call_*.c)
 * need from the transport (ctl_transport.c) and the result helpers
 * (ctl_result.c).  Callers use pando/osd_ctl_client.h only. */
#ifndef PANDO_OSD_CTL_CLIENT_PRIV_H
#define PANDO_OSD_CTL_CLIENT_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "osd_ctl.h"
#include "pando/osd_ctl_client.h"

/* rpcgen filters return bool_t, xdrproc_t wants bool: the same 0/1 either
 * way; the detour through void (*)(void) says the cast is meant. */
#define CTL_XDRPROC(fn) ((xdrproc_t)(void (*)(void))(fn))

/* Results are decoded while the client is still locked: res points into
 * the reply buffer. */
typedef int (*ctl_decode_fn)(const uint8_t *res, size_t len, void *out);

struct ctl_call {
	uint32_t proc;
	xdrproc_t xdr_args;
	void *args;
	const void *tail; /* WRITE data: sent after the arguments, uncopied */
	size_t tail_len;
	ctl_decode_fn decode;
	void *out;
};

/* Runs a call and decodes its results: 0 or -errno. */
int ctl_call(struct osd_ctl_client *c, const struct ctl_call *call);

/* A result decoded by its rpcgen filter into `res` (zeroed by the caller),
 * whose status is at `status`; `take` (optional) copies what the caller
 * wants out of it and gets the status as -errno, which it returns or
 * replaces.  The decoded result is freed after take. */
struct ctl_result {
	xdrproc_t xdr;
	void *res;
	const osd_status *status;
	int (*take)(const void *res, int rc, void *out);
	void *out;
};

/* The ctl_result for rpcgen result r (a local, zeroed), whose status field
 * is r.status. */
/* an initialiser as a macro: laid out by hand */
/* clang-format off */
#define CTL_RESULT(r, filter, take, out) \
	{ CTL_XDRPROC(filter), &(r), &(r).status, (take), (out) }
/* clang-format on */

int ctl_status_errno(uint32_t status);
/* The ctl_decode_fn for a struct ctl_result (passed as out). */
int ctl_decode_result(const uint8_t *res, size_t len, void *ctl_result);
/* A call whose result is a struct ctl_result. */
int ctl_call_result(struct osd_ctl_client *c, uint32_t proc, xdrproc_t xdr_args, void *args,
		    struct ctl_result *res);
/* A call whose result is a bare osd_status. */
int ctl_call_status(struct osd_ctl_client *c, uint32_t proc, xdrproc_t xdr_args, void *args);

#endif
