/* Storage policies (include/pando/policy.h): their rules, their encoding,
 * and the layout request they make for a new file.
 *
 * Encoding, integers big-endian; version 1 (16 bytes) for a policy
 * without a pool, version 2 (17 bytes and the pool's name) with one:
 *    0 u8 version       1 u8 scheme   2 u8 copies   3 u8 k   4 u8 m
 *    5 u8 width         6 u32 stripe_unit          10 u32 cold_after_s
 *   14 u8 cold_k       15 u8 cold_m
 *   16 u8 pool length (1..31)       17 the pool's name, no NUL */
#include "pando/policy.h"

#include <errno.h>
#include <string.h>

#include "pando/ec.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RS(k, m) as a policy may name it; k 0 lets placement pick the width. */
static const char *rs_problem(uint32_t k, uint32_t m)
{
	if (m < 1 || m > PANDO_POLICY_MAX_M)
		return "m must be 1 to 4";
	if (k + m > PANDO_MAP_MAX_WIDTH)
		return "k + m is wider than a group may be (64 components)";
	if (k > PANDO_EC_MAX_K)
		return "k must be at most 32 (0: automatic width)";
	return NULL;
}

static const char *scheme_problem(const struct pando_policy *p)
{
	switch (p->scheme) {
	case PANDO_RAID0:
		if (p->copies > 1 || p->k || p->m)
			return "raid0 takes no copies, k or m";
		return NULL;
	case PANDO_RAID1:
		if (p->copies < 2 || p->copies > 3)
			return "mirror copies must be 2 or 3";
		if (p->k || p->m)
			return "mirror takes no k or m";
		if ((uint32_t)p->copies * p->width > PANDO_MAP_MAX_WIDTH)
			return "copies x width is wider than a group may be (64 components)";
		return NULL;
	case PANDO_RS:
		if (p->copies > 1 || p->width)
			return "rs takes no copies or width (k is its width)";
		return rs_problem(p->k, p->m);
	default:
		return "unknown scheme (mirror, raid0 or rs)";
	}
}

static const char *cold_problem(const struct pando_policy *p)
{
	if (p->cold_after_s == 0)
		return p->cold_k || p->cold_m ? "a cold scheme needs cold_after_s" : NULL;
	return rs_problem(p->cold_k, p->cold_m) ? "cold scheme: k + m as for rs (m 1 to 4)" : NULL;
}

const char *pando_policy_problem(const struct pando_policy *p)
{
	const char *why = scheme_problem(p);

	if (why)
		return why;
	if (p->width > PANDO_MAP_MAX_WIDTH)
		return "width must be at most 64";
	if (p->stripe_unit &&
	    (p->stripe_unit % PANDO_POLICY_UNIT || p->stripe_unit > PANDO_MAP_MAX_STRIPE_UNIT))
		return "stripe unit must be a multiple of 4 KiB, 4 KiB to 1 GiB";
	if (memchr(p->pool, 0, sizeof(p->pool)) == NULL ||
	    (p->pool[0] && !cluster_map_pool_name_ok(p->pool)))
		return "pool must be 1 to 31 of a-z, 0-9, - and _, not starting with - or _, "
		       "and not default";
	return cold_problem(p);
}

int pando_policy_validate(const struct pando_policy *p)
{
	return pando_policy_problem(p) ? -EINVAL : 0;
}

int pando_policy_encode(const struct pando_policy *p, uint8_t *buf, size_t cap, size_t *len)
{
	size_t pool;

	*len = PANDO_POLICY_LEN;
	if (pando_policy_validate(p))
		return -EINVAL;
	pool = strlen(p->pool);
	*len += pool ? 1 + pool : 0;
	if (cap < *len)
		return -ENOSPC;
	buf[0] = pool ? PANDO_POLICY_VERSION_POOL : PANDO_POLICY_VERSION;
	buf[1] = p->scheme;
	buf[2] = p->copies;
	buf[3] = p->k;
	buf[4] = p->m;
	buf[5] = p->width;
	put32(buf + 6, p->stripe_unit);
	put32(buf + 10, p->cold_after_s);
	buf[14] = p->cold_k;
	buf[15] = p->cold_m;
	if (pool) {
		buf[16] = (uint8_t)pool;
		memcpy(buf + 17, p->pool, pool);
	}
	return 0;
}

/* The pool of a version 2 encoding into p->pool: -EBADMSG unless the
 * length byte is 1..31 and the name fills the rest exactly. */
static int decode_pool(const uint8_t *buf, size_t len, struct pando_policy *p)
{
	if (len < PANDO_POLICY_LEN + 2 || buf[16] == 0 || buf[16] >= sizeof(p->pool) ||
	    len != PANDO_POLICY_LEN + 1u + buf[16])
		return -EBADMSG;
	memcpy(p->pool, buf + 17, buf[16]);
	p->pool[buf[16]] = 0;
	return strlen(p->pool) == buf[16] ? 0 : -EBADMSG;
}

int pando_policy_decode(const uint8_t *buf, size_t len, struct pando_policy *out)
{
	struct pando_policy p;

	if (len == 0)
		return -EBADMSG;
	if (buf[0] != PANDO_POLICY_VERSION && buf[0] != PANDO_POLICY_VERSION_POOL)
		return -ENOTSUP;
	if (len < PANDO_POLICY_LEN || (buf[0] == PANDO_POLICY_VERSION && len != PANDO_POLICY_LEN))
		return -EBADMSG;
	p = (struct pando_policy){
		.scheme = buf[1],
		.copies = buf[2],
		.k = buf[3],
		.m = buf[4],
		.width = buf[5],
		.stripe_unit = get32(buf + 6),
		.cold_after_s = get32(buf + 10),
		.cold_k = buf[14],
		.cold_m = buf[15],
	};
	if (buf[0] == PANDO_POLICY_VERSION_POOL && decode_pool(buf, len, &p))
		return -EBADMSG;
	if (pando_policy_validate(&p))
		return -EBADMSG;
	*out = p;
	return 0;
}

void pando_policy_request(const struct pando_policy *p, const struct pando_policy_defaults *d,
			  struct pando_layout_request *req)
{
	uint32_t width = p && p->width ? p->width : d->stripe_width;

	req->stripe_unit = p && p->stripe_unit ? p->stripe_unit : d->stripe_unit;
	req->parity = 0;
	if (!p) {
		req->raid = d->mirrors > 1 ? PANDO_RAID1 : PANDO_RAID0;
		req->copies = (uint8_t)(d->mirrors > 1 ? d->mirrors : 1);
		req->data = (uint8_t)width;
	} else if (p->scheme == PANDO_RS) {
		req->raid = PANDO_RS;
		req->copies = 1;
		req->data = p->k;
		req->parity = p->m;
	} else {
		req->raid = p->scheme;
		req->copies = p->scheme == PANDO_RAID1 ? p->copies : 1;
		req->data = (uint8_t)width;
	}
}

uint32_t pando_request_max_width(const struct pando_layout_request *req)
{
	if (req->data == 0)
		return PANDO_MAP_MAX_WIDTH;
	if (req->raid == PANDO_RS)
		return (uint32_t)req->data + req->parity;
	return (uint32_t)req->data * (req->raid == PANDO_RAID1 ? req->copies : 1);
}
