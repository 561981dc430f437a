/* XDR for the flexible file layout (RFC 8435): ff_layout4 (LAYOUTGET's
 * loc_body), ff_device_addr4 (GETDEVICEINFO's da_addr_body) and
 * ff_layoutreturn4 (LAYOUTRETURN's lrf_body), both ways, plus RFC 5665
 * universal addresses.  Our own code, not Ganesha's ff_* helpers: those
 * drop ffl_stats_collect_hint and read io_info4.ii_count as 32 bits.
 *
 * Encoders write at most cap bytes and set *len to the full size (a call
 * with cap 0 sizes the buffer); -ENOSPC when cap is short, -EINVAL when
 * the value breaks an RFC rule.  Decoders take exactly one structure
 * (trailing bytes are malformed), return -EBADMSG for anything malformed
 * or truncated, and allocate the arrays they fill: release them with the
 * matching *_release(), which is also safe after a failed decode. */
#ifndef PANDO_FF_XDR_H
#define PANDO_FF_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sockaddr;
struct sockaddr_storage;

#define PANDO_FF_DEVICEID_SIZE 16 /* NFS4_DEVICEID4_SIZE */
#define PANDO_FF_FH_MAX 128       /* NFS4_FHSIZE */
#define PANDO_FF_OWNER_MAX 255    /* our bound on ffds_user / ffds_group */
#define PANDO_NETID_MAX 31        /* our bound on na_r_netid */
#define PANDO_UADDR_MAX 63        /* our bound on na_r_addr (IPv6 needs 46) */

#define PANDO_FF_FLAGS_NO_LAYOUTCOMMIT 0x1u
#define PANDO_FF_FLAGS_NO_IO_THRU_MDS 0x2u
#define PANDO_FF_FLAGS_NO_READ_IO 0x4u
#define PANDO_FF_FLAGS_WRITE_ONE_MIRROR 0x8u

struct pando_stateid {
	uint32_t seqid;
	uint8_t other[12];
};

struct pando_nfstime {
	int64_t seconds;
	uint32_t nseconds;
};

struct pando_ff_fh {
	uint32_t len;
	uint8_t data[PANDO_FF_FH_MAX];
};

/* netaddr4 (RFC 5665): a netid ("tcp", "tcp6") and a universal address. */
struct pando_netaddr {
	char netid[PANDO_NETID_MAX + 1];
	char uaddr[PANDO_UADDR_MAX + 1];
};

/* ---- ff_layout4 ---- */

struct pando_ff_data_server {
	uint8_t deviceid[PANDO_FF_DEVICEID_SIZE];
	uint32_t efficiency;
	struct pando_stateid stateid;
	uint32_t fh_count; /* one per ffda_versions entry */
	struct pando_ff_fh *fh_vers;
	char user[PANDO_FF_OWNER_MAX + 1];
	char group[PANDO_FF_OWNER_MAX + 1];
};

struct pando_ff_mirror {
	uint32_t ds_count; /* stripes */
	struct pando_ff_data_server *ds;
};

struct pando_ff_layout {
	uint64_t stripe_unit; /* 0 with one data server per mirror (RFC MUST) */
	uint32_t mirror_count;
	struct pando_ff_mirror *mirrors;
	uint32_t flags;              /* PANDO_FF_FLAGS_* */
	uint32_t stats_collect_hint; /* seconds */
};

/* -EINVAL: no mirror, mirrors with different stripe counts, no data
 * server, a stripe unit that is not 0 exactly when there is one stripe,
 * a data server without file handles, a file handle over 128 bytes. */
int pando_ff_layout_encode(const struct pando_ff_layout *layout, uint8_t *buf, size_t cap,
			   size_t *len);
int pando_ff_layout_decode(const uint8_t *buf, size_t len, struct pando_ff_layout *layout);
void pando_ff_layout_release(struct pando_ff_layout *layout);

/* ---- ff_device_addr4 ---- */

struct pando_ff_device_version {
	uint32_t version; /* 3: NFSv3 data server */
	uint32_t minorversion;
	uint32_t rsize;
	uint32_t wsize;
	bool tightly_coupled;
};

struct pando_ff_device_addr {
	uint32_t netaddr_count; /* multipath_list4 */
	struct pando_netaddr *netaddrs;
	uint32_t version_count;
	struct pando_ff_device_version *versions;
};

/* -EINVAL: no address, no version, version 3 with a minor version or
 * tight coupling (RFC 8435 section 4.1 MUSTs). */
int pando_ff_device_addr_encode(const struct pando_ff_device_addr *addr, uint8_t *buf, size_t cap,
				size_t *len);
int pando_ff_device_addr_decode(const uint8_t *buf, size_t len, struct pando_ff_device_addr *addr);
void pando_ff_device_addr_release(struct pando_ff_device_addr *addr);

/* ---- ff_layoutreturn4 ---- */

struct pando_device_error { /* device_error4, RFC 7862 */
	uint8_t deviceid[PANDO_FF_DEVICEID_SIZE];
	int32_t status; /* nfsstat4 */
	uint32_t opnum; /* nfs_opnum4 */
};

struct pando_ff_ioerr {
	uint64_t offset;
	uint64_t length;
	struct pando_stateid stateid;
	uint32_t error_count;
	struct pando_device_error *errors;
};

struct pando_io_info { /* io_info4, RFC 7862: both counts 64-bit */
	uint64_t count;
	uint64_t bytes;
};

struct pando_ff_io_latency {
	uint64_t ops_requested;
	uint64_t bytes_requested;
	uint64_t ops_completed;
	uint64_t bytes_completed;
	uint64_t bytes_not_delivered;
	struct pando_nfstime total_busy_time;
	struct pando_nfstime aggregate_completion_time;
};

struct pando_ff_layoutupdate {
	struct pando_netaddr addr;
	struct pando_ff_fh fhandle;
	struct pando_ff_io_latency read;
	struct pando_ff_io_latency write;
	struct pando_nfstime duration;
	bool local;
};

struct pando_ff_iostats {
	uint64_t offset;
	uint64_t length;
	struct pando_stateid stateid;
	struct pando_io_info read;
	struct pando_io_info write;
	uint8_t deviceid[PANDO_FF_DEVICEID_SIZE];
	struct pando_ff_layoutupdate layoutupdate;
};

struct pando_ff_layoutreturn {
	uint32_t ioerr_count;
	struct pando_ff_ioerr *ioerrs;
	uint32_t iostats_count;
	struct pando_ff_iostats *iostats;
};

int pando_ff_layoutreturn_encode(const struct pando_ff_layoutreturn *ret, uint8_t *buf, size_t cap,
				 size_t *len);
int pando_ff_layoutreturn_decode(const uint8_t *buf, size_t len, struct pando_ff_layoutreturn *ret);
void pando_ff_layoutreturn_release(struct pando_ff_layoutreturn *ret);

/* ---- universal addresses (RFC 5665 section 5.2.3) ---- */

/* IPv4 "h1.h2.h3.h4.p1.p2" with netid "tcp", IPv6 "x:x::x.p1.p2" with
 * "tcp6" (p1, p2: the port's high and low byte).  -EAFNOSUPPORT for
 * other families. */
int pando_netaddr_from_sockaddr(const struct sockaddr *sa, struct pando_netaddr *out);
/* The inverse; -EINVAL for a malformed address or an unknown netid. */
int pando_netaddr_to_sockaddr(const struct pando_netaddr *na, struct sockaddr_storage *out);

#endif
