/* Forced in front of rpcgen output: libntirpc keeps its XDR primitives in
 * xdr_inline.h and lacks glibc's quad names that rpcgen emits. */
#ifndef PANDO_NTIRPC_COMPAT_H
#define PANDO_NTIRPC_COMPAT_H
#include <rpc/types.h>
#include <rpc/xdr.h>
#include <rpc/xdr_inline.h>
#define xdr_u_quad_t xdr_uint64_t
#define xdr_quad_t xdr_int64_t
#endif
