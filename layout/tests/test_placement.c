/* Placement: determinism, hard constraints over many random files and
 * clusters, balance over 100,000 files against the stated bounds, the
 * passive-balancing bias, failure domains (by the map's domain names),
 * replacements, OSDs the cluster map says take nothing, and refusals. */
#include <errno.h>

#include "check.h"
#include "fixture.h"
#include "pando/placement.h"

#define FILES 100000
/* Stated balance bound (README.md): every OSD's share of components
 * within 3% of its expected share.  The expected share is exact by
 * construction; sampling noise over 100,000 files is about 0.6% (one
 * standard deviation) for the mixes below. */
#define BALANCE_BOUND 0.03

/* Whether OSDs a and b are in one failure domain, by the cluster map's
 * domain strings: the same OSD, or the same non-empty string (two OSDs
 * the map does not know count as one domain, so that is caught too). */
static int same_domain(const struct cluster_map *cluster, uint32_t a, uint32_t b)
{
	const struct cluster_map_osd *x = cluster_map_osd(cluster, a);
	const struct cluster_map_osd *y = cluster_map_osd(cluster, b);

	if (!x || !y)
		return x == y;
	return a == b || (x->domain[0] && !strcmp(x->domain, y->domain));
}

/* The hard rules, checked from outside. */
static int check_map(const struct pando_storage_map *map, const struct cluster_map *cluster,
		     const struct pando_layout_request *req)
{
	uint32_t width = pando_map_width(map);
	int bad = pando_map_validate(map) != 0;

	for (uint32_t i = 0; i < map->groups * width; i++) {
		bad += map->comp[i].object_id != req->first_object_id + i;
		for (uint32_t j = 0; j < i; j++) {
			uint32_t a = map->comp[i].osd_id, b = map->comp[j].osd_id;

			bad += a == b; /* groups of one file use distinct OSDs */
			if (i / width == j / width)
				bad += same_domain(cluster, a, b);
		}
	}
	for (uint32_t s = 0; s < map->spare_count; s++)
		bad += cluster_map_osd(cluster, map->spares[s]) == NULL;
	bad += map->spare_count != 1 || map->seed != req->seed ||
	       map->partition_id != req->partition_id;
	return bad;
}

static void test_constraints(void)
{
	int bad = 0, placed = 0;

	for (int round = 0; round < 40; round++) {
		uint32_t n = 16 + (uint32_t)(fixture_rand() % 150);
		uint32_t per_domain = round % 2 ? 1 + (uint32_t)(fixture_rand() % 8) : 0;
		struct cluster_map cluster =
			fixture_map(n, 1 + (uint32_t)(fixture_rand() % 1000), per_domain);
		uint64_t *used = fixture_used(n);
		struct pando_placement_view *c;

		for (uint32_t i = 0; i < n; i++) {
			cluster.osds[i].weight = TB * (1 + fixture_rand() % 4);
			used[i] = fixture_rand() % cluster.osds[i].weight;
		}
		c = fixture_view(&cluster, used);
		for (uint64_t seed = 0; seed < 250; seed++) {
			struct pando_layout_request req =
				fixture_request(seed * 7919 + (uint64_t)round);
			struct pando_storage_map *map;
			int rc = pando_place(c, &req, &map);

			/* few domains may not hold a wide group: that is the only refusal */
			if (rc == -ENOSPC && per_domain && n / per_domain < 16)
				continue;
			bad += rc != 0;
			if (rc)
				continue;
			bad += check_map(map, &cluster, &req);
			placed++;
			pando_map_free(map);
		}
		pando_placement_view_free(c);
		fixture_free(&cluster, used);
	}
	CHECK_EQ(bad, 0);
	CHECK(placed > 5000);
}

static int maps_same(const struct pando_storage_map *a, const struct pando_storage_map *b)
{
	size_t n = (size_t)a->groups * pando_map_width(a);

	return a->groups == b->groups && !memcmp(&a->shape, &b->shape, sizeof(a->shape)) &&
	       !memcmp(a->comp, b->comp, n * sizeof(a->comp[0])) &&
	       !memcmp(a->spares, b->spares, a->spare_count * sizeof(a->spares[0]));
}

/* Same seed, same map, whatever order the OSDs were listed in (the view
 * takes them as the map keeps them, sorted: a list in another order is
 * refused until sorted); another seed, (almost surely) another map. */
static void test_determinism(void)
{
	struct cluster_map cluster = fixture_map(60, 1, 6), reversed = fixture_map(60, 1, 6);
	uint64_t *used = fixture_used(60);
	struct pando_placement_view *a, *b;
	uint32_t dup;
	struct pando_layout_request req = { .raid = PANDO_RS,
					    .parity = 2,
					    .stripe_unit = 65536,
					    .seed = 12345,
					    .partition_id = 9,
					    .first_object_id = 1 };
	struct pando_storage_map *m1, *m2, *m3;

	for (uint32_t i = 0; i < 60; i++)
		reversed.osds[i] = cluster.osds[59 - i];
	CHECK_EQ(pando_placement_view_new(
			 &reversed, used,
			 &(struct pando_placement_policy){ .spares = 1, .bias_limit_ppm = 0 }, &b),
		 -EINVAL);
	CHECK_EQ(cluster_map_sort(&reversed, &dup), 0);
	a = fixture_view(&cluster, used);
	b = fixture_view(&reversed, used);
	CHECK_EQ(pando_place(a, &req, &m1), 0);
	CHECK_EQ(pando_place(b, &req, &m2), 0);
	CHECK(maps_same(m1, m2));
	req.seed++;
	CHECK_EQ(pando_place(a, &req, &m3), 0);
	CHECK(!maps_same(m1, m3));
	/* Table 1 for 60 OSDs: 7 groups of 8, here RS(6,2) */
	CHECK_EQ(m1->groups, 7);
	CHECK_EQ(m1->shape.data, 6);
	CHECK_EQ(m1->shape.parity, 2);
	/* 1 GiB visits: 2048 rows of 6 x 64 KiB, rounded down */
	CHECK_EQ(m1->shape.visit_rows, (1u << 30) / (6 * 65536));
	pando_map_free(m1);
	pando_map_free(m2);
	pando_map_free(m3);
	pando_placement_view_free(a);
	pando_placement_view_free(b);
	fixture_free(&cluster, used);
	cluster_map_free(&reversed);
}

/* The file mix of the balance runs: mirrored small files, single-group
 * RS(8,2) files, and large files striped over all groups. */
static struct pando_layout_request mixed_request(uint64_t seed)
{
	struct pando_layout_request req = { .stripe_unit = 65536,
					    .seed = seed,
					    .partition_id = 1,
					    .first_object_id = 1 + seed * 256 };

	switch (seed % 3) {
	case 0:
		req.raid = PANDO_RAID1;
		req.copies = 2;
		break;
	case 1:
		req.raid = PANDO_RS;
		req.data = 8;
		req.parity = 2;
		req.max_groups = 1;
		break;
	default:
		req.raid = PANDO_RS;
		req.parity = 1;
		break;
	}
	return req;
}

/* Places FILES files; counts components per OSD (by index). */
static uint64_t place_many(const struct pando_placement_view *c, const struct cluster_map *cluster,
			   uint32_t n, struct pando_layout_request (*request)(uint64_t),
			   uint64_t *count)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		count[i] = 0;
	for (uint64_t f = 0; f < FILES; f++) {
		struct pando_layout_request req = request(f);
		struct pando_storage_map *map;

		if (pando_place(c, &req, &map)) {
			CHECK(0);
			continue;
		}
		for (uint32_t k = 0; k < map->groups * pando_map_width(map); k++) {
			count[map->comp[k].osd_id - cluster->osds[0].id]++;
			total++;
		}
		pando_map_free(map);
	}
	return total;
}

static double share_ratio(uint64_t count, uint64_t total, double share)
{
	return (double)count / ((double)total * share);
}

static void test_balance_uniform(void)
{
	const uint32_t n = 40;
	struct cluster_map cluster = fixture_map(n, 1, 0);
	uint64_t *used = fixture_used(n);
	struct pando_placement_view *c = fixture_view(&cluster, used);
	uint64_t count[40], total = place_many(c, &cluster, n, mixed_request, count);
	double worst = 0;

	for (uint32_t i = 0; i < n; i++) {
		double dev = share_ratio(count[i], total, 1.0 / n) - 1;

		worst = dev < 0 ? (-dev > worst ? -dev : worst) : (dev > worst ? dev : worst);
	}
	printf("  uniform, %u OSDs, %d files, %llu components: worst OSD %.2f%% off its share "
	       "(bound %.0f%%)\n",
	       n, FILES, (unsigned long long)total, worst * 100, BALANCE_BOUND * 100);
	CHECK(worst < BALANCE_BOUND);
	pando_placement_view_free(c);
	fixture_free(&cluster, used);
}

static struct pando_layout_request small_request(uint64_t seed)
{
	return (struct pando_layout_request){ .raid = PANDO_RS,
					      .data = 4,
					      .parity = 2,
					      .max_groups = 1,
					      .stripe_unit = 65536,
					      .seed = seed,
					      .partition_id = 1,
					      .first_object_id = 1 };
}

/* Half the OSDs twice the size: twice the share, within the bound. */
static void test_balance_weighted(void)
{
	const uint32_t n = 40;
	struct cluster_map cluster = fixture_map(n, 1, 0);
	uint64_t *used = fixture_used(n);
	struct pando_placement_view *c;
	uint64_t count[40], total;
	double worst = 0;

	for (uint32_t i = 0; i < n; i += 2) {
		cluster.osds[i].weight = 2 * TB;
		used[i] = TB; /* the same utilisation: no bias */
	}
	c = fixture_view(&cluster, used);
	total = place_many(c, &cluster, n, small_request, count);
	for (uint32_t i = 0; i < n; i++) {
		double dev = share_ratio(count[i], total, (i % 2 ? 1.0 : 2.0) / 60) - 1;

		worst = dev < 0 ? (-dev > worst ? -dev : worst) : (dev > worst ? dev : worst);
	}
	printf("  capacities 2:1, %d RS(4,2) files: worst OSD %.2f%% off its share\n", FILES,
	       worst * 100);
	CHECK(worst < BALANCE_BOUND);
	pando_placement_view_free(c);
	fixture_free(&cluster, used);
}

/* One OSD just replaced (empty) among half-full ones: passive balancing
 * favours it, by at most the bias limit (5%), not more. */
static void test_empty_osd_bias(void)
{
	const uint32_t n = 40;
	struct cluster_map cluster = fixture_map(n, 1, 0);
	uint64_t *used = fixture_used(n);
	struct pando_placement_view *c;
	uint64_t count[40], total, rest = 0;
	uint32_t ppm;
	double ratio;

	used[7] = 0;
	used[8] = TB * 9 / 10;
	c = fixture_view(&cluster, used);
	CHECK_EQ(pando_placement_view_bias_ppm(c, cluster.osds[7].id, &ppm), 0);
	CHECK_EQ(ppm, 1000000 + PANDO_BIAS_DEFAULT_PPM);
	CHECK_EQ(pando_placement_view_bias_ppm(c, cluster.osds[8].id, &ppm), 0);
	CHECK_EQ(ppm, 1000000 - PANDO_BIAS_DEFAULT_PPM);
	CHECK_EQ(pando_placement_view_bias_ppm(c, 999, &ppm), -ENOENT);
	total = place_many(c, &cluster, n, small_request, count);
	for (uint32_t i = 0; i < n; i++)
		if (i != 7 && i != 8)
			rest += count[i];
	/* the empty OSD against the average of the untouched ones */
	ratio = (double)count[7] / ((double)rest / (n - 2));
	printf("  one empty OSD: %.3f x the others' components (bias limit %.2f)\n", ratio,
	       1 + PANDO_BIAS_DEFAULT_PPM / 1e6);
	CHECK(ratio > 1.02);
	CHECK(ratio < 1 + PANDO_BIAS_DEFAULT_PPM / 1e6 + BALANCE_BOUND);
	ratio = (double)count[8] / ((double)rest / (n - 2));
	CHECK(ratio < 0.98 && ratio > 1 - PANDO_BIAS_DEFAULT_PPM / 1e6 - BALANCE_BOUND);
	CHECK(total > 0);
	pando_placement_view_free(c);
	fixture_free(&cluster, used);
}

/* 12 shelves of 10 (Panasas' 120-blade system): groups of 9 over 9
 * shelves, 13 groups, and shelves balanced. */
static void test_domains(void)
{
	struct cluster_map cluster = fixture_map(120, 1, 10), first90 = cluster;
	uint64_t *used = fixture_used(120);
	struct pando_placement_view *c = fixture_view(&cluster, used);
	struct pando_layout_request req = { .raid = PANDO_RS,
					    .parity = 1,
					    .stripe_unit = 65536,
					    .partition_id = 1,
					    .first_object_id = 1 };
	uint64_t shelf[12] = { 0 }, total = 0;
	int bad = 0;

	for (uint64_t seed = 0; seed < 2000; seed++) {
		struct pando_storage_map *map;

		req.seed = seed;
		if (pando_place(c, &req, &map)) {
			bad++;
			continue;
		}
		bad += map->groups != 13 || pando_map_width(map) != 9;
		bad += check_map(map, &cluster, &req);
		for (uint32_t k = 0; k < map->groups * 9; k++) {
			shelf[(map->comp[k].osd_id - 1) / 10]++;
			total++;
		}
		pando_map_free(map);
	}
	CHECK_EQ(bad, 0);
	for (int s = 0; s < 12; s++)
		CHECK(share_ratio(shelf[s], total, 1.0 / 12) > 1 - BALANCE_BOUND &&
		      share_ratio(shelf[s], total, 1.0 / 12) < 1 + BALANCE_BOUND);
	/* nine shelves cannot hold a group of ten */
	pando_placement_view_free(c);
	first90.nosds = 90;
	c = fixture_view(&first90, used);
	req.data = 9;
	CHECK_EQ(pando_place(c, &req, &(struct pando_storage_map *){ NULL }), -ENOSPC);
	pando_placement_view_free(c);
	fixture_free(&cluster, used);
}

/* A failed OSD's components move: never into their group, never into a
 * domain the group already uses; without domains the file's own spare
 * always qualifies, so the first move of a file takes it. */
static void test_replacement(void)
{
	struct cluster_map cluster = fixture_map(50, 1, 0), domained = fixture_map(50, 1, 5);
	uint64_t *used = fixture_used(50);
	struct pando_placement_view *c = fixture_view(&cluster, used);
	struct pando_placement_view *cd = fixture_view(&domained, used);
	int bad = 0, moved = 0;

	for (uint64_t seed = 0; seed < 500; seed++) {
		const struct pando_placement_view *cl = seed % 2 ? cd : c;
		const struct cluster_map *list = seed % 2 ? &domained : &cluster;
		struct pando_layout_request req = fixture_request(seed);
		struct pando_storage_map *map;

		if (pando_place(cl, &req, &map))
			continue;
		for (uint32_t g = 0; g < map->groups; g++) {
			uint32_t lost = (uint32_t)(seed % pando_map_width(map)), osd;

			bad += pando_place_replacement(cl, map, g, lost, seed, &osd) != 0;
			if (g == 0 && cl == c)
				bad += osd != map->spares[0];
			for (uint32_t k = 0; k < pando_map_width(map); k++) {
				uint32_t other = pando_map_component(map, g, k)->osd_id;

				bad += other == osd;
				bad += k != lost && same_domain(list, other, osd);
			}
			bad += pando_map_replace_component(map, g, lost, osd, 1u << 30) != 0;
			bad += pando_map_validate(map) != 0;
			moved++;
		}
		pando_map_free(map);
	}
	CHECK_EQ(bad, 0);
	CHECK(moved > 500);
	pando_placement_view_free(c);
	pando_placement_view_free(cd);
	fixture_free(&cluster, used);
	cluster_map_free(&domained);
}

static void test_replacement_tiers(void)
{
	struct cluster_map cluster = fixture_map(3, 1, 0);
	uint64_t *used = fixture_used(3);
	struct pando_placement_view *c = fixture_view(&cluster, used), *two;
	struct pando_layout_request req = { .raid = PANDO_RAID1,
					    .copies = 2,
					    .stripe_unit = 4096,
					    .seed = 1,
					    .partition_id = 1,
					    .first_object_id = 1 };
	struct pando_storage_map *map;
	uint32_t osd;

	CHECK_EQ(pando_place(c, &req, &map), 0);
	/* three OSDs: two mirrors and the spare; the spare is the only home */
	CHECK_EQ(pando_place_replacement(c, map, 0, 1, 77, &osd), 0);
	CHECK_EQ(osd, map->spares[0]);
	CHECK_EQ(pando_place_replacement(c, map, 1, 0, 77, &osd), -EINVAL);
	/* without the spare in the cluster, nowhere to go */
	cluster.osds[map->spares[0] - 1].in = false;
	CHECK_EQ(pando_placement_view_new(&cluster, used,
					  &(struct pando_placement_policy){ .spares = 1,
									    .bias_limit_ppm = 0 },
					  &two),
		 0);
	CHECK_EQ(pando_place_replacement(two, map, 0, 1, 77, &osd), -ENOSPC);
	pando_placement_view_free(two);
	pando_map_free(map);
	pando_placement_view_free(c);
	fixture_free(&cluster, used);
}

/* 32 OSDs in domains of two, 1..12 in pool "fast": a view of the pool
 * places every component and spare there, and so does every replacement;
 * the view of no pool uses the others too; a pool without OSDs places
 * nothing; a name that is not a pool's is refused. */
static void test_pools(void)
{
	struct cluster_map cluster = fixture_map(32, 1, 2);
	uint64_t *used = fixture_used(32);
	struct pando_placement_policy fast = { .spares = 1, .pool = "fast" };
	struct pando_placement_policy empty = { .spares = 1, .pool = "slow" };
	struct pando_placement_view *c = NULL, *all = fixture_view(&cluster, used), *none = NULL;
	int bad = 0, outside = 0;

	for (uint32_t i = 0; i < 12; i++)
		strcpy(cluster.osds[i].pool, "fast");
	CHECK_EQ(pando_placement_view_new(&cluster, used, &fast, &c), 0);
	CHECK_EQ(pando_placement_view_new(&cluster, used, &empty, &none), 0);
	for (uint64_t seed = 0; seed < 400; seed++) {
		struct pando_layout_request req = fixture_request(seed);
		struct pando_storage_map *map;

		req.data = req.raid == PANDO_RAID0 ? req.data : (uint8_t)(req.data % 3);
		if (pando_place(c, &req, &map))
			continue;
		for (uint32_t k = 0; k < map->groups * pando_map_width(map); k++)
			bad += map->comp[k].osd_id > 12;
		for (uint32_t s = 0; s < map->spare_count; s++)
			bad += map->spares[s] > 12;
		for (uint32_t g = 0; g < map->groups; g++) {
			uint32_t osd = 0;

			if (!pando_place_replacement(c, map, g, 0, seed, &osd))
				bad += osd > 12;
		}
		pando_map_free(map);
		CHECK_EQ(pando_place(none, &req, &map), -ENOSPC);
		if (!pando_place(all, &req, &map)) {
			for (uint32_t k = 0; k < map->groups * pando_map_width(map); k++)
				outside += map->comp[k].osd_id > 12;
			pando_map_free(map);
		}
	}
	CHECK_EQ(bad, 0);
	CHECK(outside > 0);
	fast.pool = "Fast";
	CHECK_EQ(pando_placement_view_new(&cluster, used, &fast,
					  &(struct pando_placement_view *){ NULL }),
		 -EINVAL);
	pando_placement_view_free(c);
	pando_placement_view_free(none);
	pando_placement_view_free(all);
	fixture_free(&cluster, used);
}

/* The cluster map with OSD `id` no longer taking components: how 0 down,
 * 1 out, 2 without weight, 3 dropped by a newer map (merged: removed). */
static int cluster_without(const struct cluster_map *cluster, uint32_t id, int how,
			   struct cluster_map *out)
{
	struct cluster_map newer = *cluster;
	size_t at = id - cluster->osds[0].id, size = sizeof(*newer.osds);
	int rc = 0;

	newer.osds = malloc(cluster->nosds * size);
	if (!newer.osds)
		return -ENOMEM;
	memcpy(newer.osds, cluster->osds, cluster->nosds * size);
	newer.osds[at].up = how != 0;
	newer.osds[at].in = how != 1;
	newer.osds[at].weight = how == 2 ? 0 : newer.osds[at].weight;
	if (how == 3) {
		memmove(&newer.osds[at], &newer.osds[at + 1], (--newer.nosds - at) * size);
		newer.epoch++;
		rc = cluster_map_merge(cluster, &newer, out);
		cluster_map_free(&newer);
		return rc;
	}
	*out = newer;
	return 0;
}

/* Moves every component of OSD `gone` in a map placed before it stopped
 * taking any; the number of moves that break a rule. */
static int move_off(const struct pando_placement_view *now, const struct cluster_map *cluster,
		    struct pando_storage_map *map, uint32_t gone, int *moved)
{
	uint32_t width = pando_map_width(map), osd;
	int bad = 0;

	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t k = 0; k < width; k++) {
			if (pando_map_component(map, g, k)->osd_id != gone)
				continue;
			if (pando_place_replacement(now, map, g, k, map->seed, &osd)) {
				bad++;
				continue;
			}
			bad += osd == gone;
			for (uint32_t j = 0; j < width; j++)
				bad += j != k &&
				       same_domain(cluster, pando_map_component(map, g, j)->osd_id,
						   osd);
			(*moved)++;
		}
	}
	return bad;
}

/* An OSD that is down, out, without weight or removed gets no component
 * of a new file, nor a spare; the view still knows it (its bias is found,
 * no bias), and the components of maps that name it move elsewhere. */
static void test_not_taking(void)
{
	const uint32_t gone = 6; /* in domain "d2" with OSD 5 */
	struct cluster_map cluster = fixture_map(24, 1, 2);
	uint64_t *used = fixture_used(24);
	struct pando_placement_view *all = fixture_view(&cluster, used);

	for (int how = 0; how < 4; how++) {
		struct cluster_map now;
		struct pando_placement_view *c;
		int bad = 0, moved = 0;
		uint32_t ppm = 0;

		CHECK_EQ(cluster_without(&cluster, gone, how, &now), 0);
		CHECK_EQ(now.nosds, 24);
		c = fixture_view(&now, used);
		CHECK(c != NULL);
		CHECK_EQ(pando_placement_view_bias_ppm(c, gone, &ppm), 0);
		CHECK_EQ(ppm, 1000000);
		for (uint64_t seed = 0; seed < 1000; seed++) {
			struct pando_layout_request req = mixed_request(seed);
			struct pando_storage_map *map;

			bad += pando_place(c, &req, &map) != 0 || check_map(map, &now, &req);
			for (uint32_t k = 0; map && k < map->groups * pando_map_width(map); k++)
				bad += map->comp[k].osd_id == gone;
			for (uint32_t s = 0; map && s < map->spare_count; s++)
				bad += map->spares[s] == gone;
			pando_map_free(map);
			if (pando_place(all, &req, &map))
				continue;
			bad += move_off(c, &now, map, gone, &moved);
			pando_map_free(map);
		}
		CHECK_EQ(bad, 0);
		CHECK(moved > 100);
		pando_placement_view_free(c);
		cluster_map_free(&now);
	}
	pando_placement_view_free(all);
	fixture_free(&cluster, used);
}

/* How many failure domains the view has, seen from outside: the widest
 * single group it places (one OSD of each domain at most). */
static uint32_t widest_group(const struct pando_placement_view *c)
{
	struct pando_layout_request req = { .raid = PANDO_RAID0,
					    .max_groups = 1,
					    .stripe_unit = 65536,
					    .partition_id = 1,
					    .first_object_id = 1 };
	struct pando_storage_map *map;
	uint32_t w = 0;

	for (; w < PANDO_MAP_MAX_WIDTH; w++) {
		req.data = (uint8_t)(w + 1);
		req.seed = w;
		if (pando_place(c, &req, &map))
			break;
		pando_map_free(map);
	}
	return w;
}

/* Domains are the OSDs that share a name, whatever the names: OSD i in
 * domain i % 12 (so a domain's ids are not contiguous, and "d10" sorts
 * before "d2"), every seventh undeclared; then the same domains under
 * names that sort the other way.  Both views hold 12 + 9 domains, and
 * no group of either puts two OSDs of one domain together, by either
 * naming. */
static void test_domain_names(void)
{
	struct cluster_map a = fixture_map(60, 1, 0), b = fixture_map(60, 1, 0);
	uint64_t *used = fixture_used(60);
	struct pando_placement_view *va, *vb;
	int bad = 0;

	for (uint32_t i = 0; i < 60; i++) {
		if (i % 7 == 3)
			continue;
		snprintf(a.osds[i].domain, sizeof(a.osds[i].domain), "d%u", i % 12);
		snprintf(b.osds[i].domain, sizeof(b.osds[i].domain), "%c-rack", 'z' - i % 12);
	}
	va = fixture_view(&a, used);
	vb = fixture_view(&b, used);
	CHECK_EQ(widest_group(va), 21);
	CHECK_EQ(widest_group(vb), 21);
	for (uint64_t seed = 0; seed < 1000; seed++) {
		struct pando_layout_request req = fixture_request(seed);
		const struct pando_placement_view *v = seed % 2 ? vb : va;
		struct pando_storage_map *map;

		if (pando_place(v, &req, &map)) {
			bad++;
			continue;
		}
		bad += check_map(map, &a, &req) + check_map(map, &b, &req);
		pando_map_free(map);
	}
	CHECK_EQ(bad, 0);
	pando_placement_view_free(va);
	pando_placement_view_free(vb);
	fixture_free(&a, used);
	cluster_map_free(&b);
}

/* The most OSDs a view takes, in many domains (grouped in n log n), and
 * one more refused. */
static void test_max_osds(void)
{
	struct cluster_map cluster = fixture_map(PANDO_MAX_OSDS + 1, 1, 16);
	struct pando_layout_request req = small_request(3);
	struct pando_placement_view *c;
	struct pando_storage_map *map;

	CHECK_EQ(cluster.nosds, PANDO_MAX_OSDS + 1);
	CHECK_EQ(pando_placement_view_new(
			 &cluster, NULL,
			 &(struct pando_placement_policy){ .spares = 1, .bias_limit_ppm = 0 }, &c),
		 -EINVAL);
	cluster.nosds--;
	CHECK_EQ(pando_placement_view_new(
			 &cluster, NULL,
			 &(struct pando_placement_policy){ .spares = 1, .bias_limit_ppm = 0 }, &c),
		 0);
	CHECK_EQ(pando_place(c, &req, &map), 0);
	CHECK_EQ(check_map(map, &cluster, &req), 0);
	pando_map_free(map);
	pando_placement_view_free(c);
	cluster_map_free(&cluster);
}

static void test_refusals(void)
{
	struct cluster_map cluster = fixture_map(12, 1, 0);
	uint64_t *used = fixture_used(12);
	struct pando_placement_view *c = fixture_view(&cluster, used), *bad_view;
	struct pando_layout_request ok = { .raid = PANDO_RS,
					   .data = 8,
					   .parity = 3,
					   .stripe_unit = 4096,
					   .seed = 1,
					   .partition_id = 1,
					   .first_object_id = 1 };
	struct pando_layout_request req;
	struct pando_storage_map *map;

	CHECK_EQ(pando_place(c, &ok, &map), 0); /* 11 + a spare = 12 */
	CHECK_EQ(map->spare_count, 1);
	pando_map_free(map);
	req = ok;
	req.data = 9; /* as wide as the cluster: placed, no spare left */
	CHECK_EQ(pando_place(c, &req, &map), 0);
	CHECK_EQ(map->spare_count, 0);
	pando_map_free(map);
	req.data = 10; /* 13 > 12 */
	CHECK_EQ(pando_place(c, &req, &map), -ENOSPC);
	CHECK(map == NULL);
	req = ok;
	req.first_object_id = 0;
	CHECK_EQ(pando_place(c, &req, &map), -EINVAL);
	req = ok;
	req.first_object_id = UINT64_MAX - 5; /* ids would wrap */
	CHECK_EQ(pando_place(c, &req, &map), -EINVAL);
	req = ok;
	req.partition_id = 0;
	CHECK_EQ(pando_place(c, &req, &map), -EINVAL);
	req = ok;
	req.stripe_unit = 1000;
	CHECK_EQ(pando_place(c, &req, &map), -EINVAL);
	req = ok;
	req.raid = PANDO_RAID1;
	req.copies = 1;
	CHECK_EQ(pando_place(c, &req, &map), -EINVAL);
	req = ok;
	req.parity = 0;
	CHECK_EQ(pando_place(c, &req, &map), -EINVAL);
	cluster.osds[3].id = cluster.osds[2].id; /* a duplicate id */
	CHECK_EQ(pando_placement_view_new(&cluster, used,
					  &(struct pando_placement_policy){ .spares = 1,
									    .bias_limit_ppm = 0 },
					  &bad_view),
		 -EINVAL);
	CHECK(bad_view == NULL);
	cluster.osds[3].id = 40; /* distinct, but out of order: not sorted here */
	CHECK_EQ(pando_placement_view_new(&cluster, used,
					  &(struct pando_placement_policy){ .spares = 1,
									    .bias_limit_ppm = 0 },
					  &bad_view),
		 -EINVAL);
	cluster.osds[3].id = 4;
	/* No spare: a file may then take every OSD (a cluster as small as a file). */
	CHECK_EQ(pando_placement_view_new(&cluster, used,
					  &(struct pando_placement_policy){ .spares = 0,
									    .bias_limit_ppm = 0 },
					  &bad_view),
		 0);
	req = ok;
	req.data = 9;
	CHECK_EQ(pando_place(bad_view, &req, &map), 0);
	CHECK_EQ(map->spare_count, 0);
	pando_map_free(map);
	pando_placement_view_free(bad_view);
	CHECK_EQ(pando_placement_view_new(
			 &cluster, used,
			 &(struct pando_placement_policy){ .spares = 1, .bias_limit_ppm = 1000000 },
			 &bad_view),
		 -EINVAL);
	pando_placement_view_free(c);
	fixture_free(&cluster, used);
}

int main(void)
{
	test_determinism();
	test_constraints();
	test_balance_uniform();
	test_balance_weighted();
	test_empty_osd_bias();
	test_domains();
	test_replacement();
	test_replacement_tiers();
	test_pools();
	test_not_taking();
	test_domain_names();
	test_max_osds();
	test_refusals();
	CHECK_DONE();
}
