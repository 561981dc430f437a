/* A storage policy: how the files of a directory are to be laid out, set
 * on the directory and copied to every file and subdirectory made in it
 * (the namespace store does the copying; a file's policy is fixed when it
 * is made, as Lustre fixes a layout at create).  Pure: no I/O.
 *
 *   - scheme: RAID-0, RAID-1 (2 or 3 copies) or RS(k,m) (m 1..4; k 0:
 *     automatic width, Panasas Table 1, as pando_layout_request.data = 0);
 *   - stripe_unit and width (RAID-0/RAID-1 data columns), 0: the export's;
 *   - a cold rule: once closed cold_after_s seconds, a file is to be
 *     transcoded to RS(cold_k, cold_m) (0 s: never);
 *   - a pool: the named subset of OSDs its files are placed on ("": any
 *     OSD, cluster_map_osd_in_pool).
 *
 * The blob kept in the store is the versioned encoding below (README.md,
 * "Storage policies").  Every function that can fail returns 0 or a
 * negative errno. */
#ifndef PANDO_POLICY_H
#define PANDO_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "pando/placement.h"
#include "pando/storage_map.h"

#define PANDO_POLICY_VERSION 1u      /* no pool */
#define PANDO_POLICY_VERSION_POOL 2u /* version 1's fields, then the pool */
#define PANDO_POLICY_LEN 16u         /* encoded size, version 1 */
#define PANDO_POLICY_MAX_LEN (PANDO_POLICY_LEN + CLUSTER_MAP_POOL_MAX)
#define PANDO_POLICY_UNIT 4096u /* stripe units are multiples of this */
#define PANDO_POLICY_MAX_M 4u

struct pando_policy {
	uint8_t scheme;        /* enum pando_raid */
	uint8_t copies;        /* RAID-1: 2 or 3; otherwise 0 or 1 */
	uint8_t k;             /* RS data chunks; 0: automatic width */
	uint8_t m;             /* RS parity chunks, 1..4 */
	uint8_t width;         /* RAID-0/RAID-1 data columns; 0: the export's */
	uint32_t stripe_unit;  /* bytes; 0: the export's */
	uint32_t cold_after_s; /* 0: no cold rule */
	uint8_t cold_k;        /* RS(cold_k, cold_m) once cold; cold_k 0: automatic */
	uint8_t cold_m;
	char pool[CLUSTER_MAP_POOL_MAX]; /* "": any OSD */
};

/* The export's configuration, what a file without a policy gets. */
struct pando_policy_defaults {
	uint32_t mirrors; /* 1: RAID-0, 2 or 3: RAID-1 */
	uint32_t stripe_width;
	uint32_t stripe_unit;
};

/* NULL when the policy is valid, otherwise why not, in words for an
 * administrator ("m must be 1 to 4"). */
const char *pando_policy_problem(const struct pando_policy *p);

/* -EINVAL when pando_policy_problem has something to say. */
int pando_policy_validate(const struct pando_policy *p);

/* encode: PANDO_POLICY_LEN bytes into buf, more with a pool, at most
 * PANDO_POLICY_MAX_LEN (-ENOSPC when cap is short,
 * -EINVAL for an invalid policy).  decode: -ENOTSUP for an unknown
 * version, -EBADMSG for anything malformed, truncated or invalid. */
int pando_policy_encode(const struct pando_policy *p, uint8_t *buf, size_t cap, size_t *len);
int pando_policy_decode(const uint8_t *buf, size_t len, struct pando_policy *out);

/* The shape part of a layout request (raid, copies, data, parity,
 * stripe_unit) for a file with policy p, or with none (p NULL): the
 * export's defaults, filling in what the policy leaves at 0. */
void pando_policy_request(const struct pando_policy *p, const struct pando_policy_defaults *d,
			  struct pando_layout_request *req);

/* Components one group of such a request can have: its width, or
 * PANDO_MAP_MAX_WIDTH when placement picks it (data 0). */
uint32_t pando_request_max_width(const struct pando_layout_request *req);

#endif
