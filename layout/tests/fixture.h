/* Test clusters and random maps shared by the layout tests. */
#ifndef PANDO_LAYOUT_FIXTURE_H
#define PANDO_LAYOUT_FIXTURE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pando/placement.h"

#define TB (1ull << 40)

static uint64_t fixture_rng = 0x9e3779b97f4a7c15ull;

static inline uint64_t fixture_rand(void)
{
	fixture_rng ^= fixture_rng << 13;
	fixture_rng ^= fixture_rng >> 7;
	fixture_rng ^= fixture_rng << 17;
	return fixture_rng;
}

/* n OSDs with ids first_id.., 1 TB each, up and in; domains "d0", "d1"..
 * of per_domain OSDs (0: none declared).  No OSDs if out of memory. */
static inline struct cluster_map fixture_map(uint32_t n, uint32_t first_id, uint32_t per_domain)
{
	struct cluster_map map = { .epoch = 1, .partition = 1 };

	map.osds = calloc(n ? n : 1, sizeof(*map.osds));
	for (uint32_t i = 0; map.osds && i < n; i++) {
		struct cluster_map_osd *o = &map.osds[i];

		o->id = first_id + i;
		if (per_domain)
			snprintf(o->domain, sizeof(o->domain), "d%u", i / per_domain);
		o->weight = TB;
		o->up = o->in = true;
	}
	map.nosds = map.osds ? n : 0;
	return map;
}

/* The bytes each of n OSDs holds: half of fixture_map's 1 TB. */
static inline uint64_t *fixture_used(uint32_t n)
{
	uint64_t *used = calloc(n ? n : 1, sizeof(*used));

	for (uint32_t i = 0; used && i < n; i++)
		used[i] = TB / 2;
	return used;
}

static inline void fixture_free(struct cluster_map *map, uint64_t *used)
{
	cluster_map_free(map);
	free(used);
}

static inline struct pando_placement_view *fixture_view(const struct cluster_map *map,
							const uint64_t *used)
{
	struct pando_placement_policy policy = { .spares = 1,
						 .bias_limit_ppm = PANDO_BIAS_DEFAULT_PPM };
	struct pando_placement_view *c = NULL;

	if (pando_placement_view_new(map, used, &policy, &c))
		return NULL;
	return c;
}

/* A random request that a cluster of at least 16 OSDs can always meet. */
static inline struct pando_layout_request fixture_request(uint64_t seed)
{
	static const uint32_t units[] = { 512, 4096, 65536, 1u << 20 };
	struct pando_layout_request req = {
		.stripe_unit = units[fixture_rand() % 4],
		.seed = seed,
		.partition_id = 1 + seed % 7,
		.first_object_id = 1 + fixture_rand() % (1ull << 40),
		.visit_bytes = (1 + fixture_rand() % 64) << 20,
		.max_groups = (uint32_t)(fixture_rand() % 4),
	};

	switch (fixture_rand() % 3) {
	case 0:
		req.raid = PANDO_RAID0;
		req.data = (uint8_t)(fixture_rand() % 6);
		break;
	case 1:
		req.raid = PANDO_RAID1;
		req.copies = (uint8_t)(2 + fixture_rand() % 2);
		req.data = (uint8_t)(1 + fixture_rand() % 3);
		break;
	default:
		req.raid = PANDO_RS;
		req.parity = (uint8_t)(1 + fixture_rand() % 3);
		req.data = (uint8_t)(fixture_rand() % 2 ? 0 : 2 + fixture_rand() % 6);
		break;
	}
	return req;
}

/* A codec under fixture_codec_holds: encode a value into buf, decode buf
 * into a value, release what a decode allocated. */
struct fixture_codec {
	int (*encode)(const void *v, uint8_t *buf, size_t cap, size_t *len);
	int (*decode)(const uint8_t *buf, size_t len, void *out);
	void (*release)(void *v);
};

/* Encodes v, decodes it into back and encodes that again: the same bytes;
 * then 20 copies with one byte corrupted, some also cut there, each
 * decoded cleanly or refused with -EBADMSG.  The number of failures.
 * buf and again hold cap bytes each. */
static inline int fixture_codec_holds(const struct fixture_codec *c, const void *v, void *back,
				      uint8_t *buf, uint8_t *again, size_t cap)
{
	size_t len, len2;
	int bad = 0;

	if (c->encode(v, buf, cap, &len) || c->decode(buf, len, back) ||
	    c->encode(back, again, cap, &len2) || len != len2 || memcmp(buf, again, len))
		return 1;
	c->release(back);
	for (int f = 0; f < 20; f++) {
		size_t at = (size_t)(fixture_rand() % len);
		int rc;

		buf[at] ^= (uint8_t)(1 + fixture_rand() % 255);
		rc = c->decode(buf, len - (size_t)(fixture_rand() % 2) * (len - at), back);
		bad += rc != 0 && rc != -EBADMSG;
		c->release(back);
	}
	return bad;
}

#endif
