/* ec_codec_bench: erasure-coding throughput on one core, jerasure against
 * ISA-L kernels, beside memcpy; and how fast maps are placed and layouts
 * encoded.  Run through tests/bench/ec_codec, which builds it first.
 *
 * Each figure is the best of `--reps` timed runs of `--seconds` each (the
 * machine is shared, and the best run is the one least disturbed).  EC
 * stripes are laid end to end in a pool of `--pool-mib` MiB, so with the
 * default 64 MiB the data comes from memory, not from the caches.
 * GB/s are 10^9 bytes of stripe data (k chunks) a second, for decode as
 * for encode; memcpy's are bytes copied. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pando/ec.h"
#include "pando/ff_xdr.h"
#include "pando/placement.h"

struct options {
	double seconds;
	int reps;
	size_t chunk;
	size_t pool;
};

struct pool {
	uint8_t *data;   /* stripes of k chunks, end to end */
	uint8_t *parity; /* m chunks a stripe */
	size_t stripes;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs step(arg, i) for i = 0, 1, ... until `seconds` pass, `reps` times;
 * returns the best rate in units (of step's return) a second. */
static double best_rate(const struct options *o, double (*step)(void *, size_t), void *arg)
{
	double best = 0;

	for (int r = 0; r < o->reps; r++) {
		double start = now(), units = 0, elapsed;
		size_t i = 0;

		do {
			for (int batch = 0; batch < 16; batch++)
				units += step(arg, i++);
			elapsed = now() - start;
		} while (elapsed < o->seconds);
		if (units / elapsed > best)
			best = units / elapsed;
	}
	return best;
}

struct ec_case {
	const struct pando_ec *ec;
	struct pool *pool;
	size_t chunk;
};

static void stripe_ptrs(const struct ec_case *t, size_t s, uint8_t **chunks)
{
	unsigned k = pando_ec_k(t->ec), m = pando_ec_m(t->ec);

	for (unsigned j = 0; j < k; j++)
		chunks[j] = t->pool->data + (s * k + j) * t->chunk;
	for (unsigned j = 0; j < m; j++)
		chunks[k + j] = t->pool->parity + (s * m + j) * t->chunk;
}

static double encode_step(void *arg, size_t i)
{
	struct ec_case *t = arg;
	uint8_t *chunks[PANDO_EC_MAX_K + PANDO_EC_MAX_M];
	unsigned k = pando_ec_k(t->ec);

	stripe_ptrs(t, i % t->pool->stripes, chunks);
	if (pando_ec_encode(t->ec, (const uint8_t *const *)chunks, chunks + k, t->chunk))
		return 0;
	return (double)k * t->chunk;
}

/* The worst case: m data chunks lost, rebuilt from the rest. */
static double decode_step(void *arg, size_t i)
{
	struct ec_case *t = arg;
	uint8_t *chunks[PANDO_EC_MAX_K + PANDO_EC_MAX_M];
	unsigned erased[PANDO_EC_MAX_M], k = pando_ec_k(t->ec), m = pando_ec_m(t->ec);

	for (unsigned e = 0; e < m; e++)
		erased[e] = e;
	stripe_ptrs(t, i % t->pool->stripes, chunks);
	if (pando_ec_decode(t->ec, chunks, erased, m, t->chunk))
		return 0;
	return (double)k * t->chunk;
}

struct copy_case {
	uint8_t *src, *dst;
	size_t len, chunk;
};

static double copy_step(void *arg, size_t i)
{
	struct copy_case *t = arg;
	size_t at = i * t->chunk % (t->len - t->chunk + 1);

	memcpy(t->dst + at, t->src + at, t->chunk);
	return (double)t->chunk;
}

static int pool_new(struct pool *p, size_t bytes, unsigned k, unsigned m, size_t chunk)
{
	p->stripes = bytes / (k * chunk);
	if (p->stripes == 0)
		p->stripes = 1;
	p->data = aligned_alloc(64, p->stripes * k * chunk);
	p->parity = aligned_alloc(64, p->stripes * m * chunk);
	if (!p->data || !p->parity)
		return -ENOMEM;
	for (size_t i = 0; i < p->stripes * k * chunk; i++)
		p->data[i] = (uint8_t)(i * 2654435761u >> 13);
	memset(p->parity, 0, p->stripes * m * chunk);
	return 0;
}

static void pool_free(struct pool *p)
{
	free(p->data);
	free(p->parity);
}

static const char *backend_name(enum pando_ec_backend b)
{
	return b == PANDO_EC_ISAL ? "isal" : "jerasure";
}

/* Encode and decode GB/s of RS(k,m) with one backend; encode's returned. */
static double bench_rs(const struct options *o, unsigned k, unsigned m, enum pando_ec_backend b)
{
	struct pando_ec *ec;
	struct pool pool;
	struct ec_case t;
	double enc, dec;

	if (pando_ec_new(k, m, b, &ec) || pool_new(&pool, o->pool, k, m, o->chunk)) {
		fprintf(stderr, "ec_codec_bench: RS(%u,%u) %s: cannot set up\n", k, m,
			backend_name(b));
		exit(1);
	}
	t = (struct ec_case){ ec, &pool, o->chunk };
	enc = best_rate(o, encode_step, &t) / 1e9;
	dec = best_rate(o, decode_step, &t) / 1e9;
	printf("RS(%2u,%u) %-8s encode %6.2f GB/s   decode (%u data chunks lost) %6.2f GB/s\n", k,
	       m, backend_name(b), enc, m, dec);
	fflush(stdout);
	pool_free(&pool);
	pando_ec_free(ec);
	return enc;
}

static double bench_memcpy(const struct options *o)
{
	struct copy_case t = { malloc(o->pool), malloc(o->pool), o->pool, o->chunk };
	double rate;

	if (!t.src || !t.dst)
		exit(1);
	memset(t.src, 0x5a, o->pool);
	memset(t.dst, 0, o->pool);
	rate = best_rate(o, copy_step, &t) / 1e9;
	printf("memcpy                 %6.2f GB/s (%zu KiB copies)\n", rate, o->chunk >> 10);
	fflush(stdout);
	free(t.src);
	free(t.dst);
	return rate;
}

struct place_case {
	const struct pando_placement_view *view;
};

/* The file mix: mirrored small files, RS(8,2) in one group, and large
 * files over every group (Table 1 width). */
static double place_step(void *arg, size_t i)
{
	struct place_case *t = arg;
	struct pando_layout_request req = {
		.stripe_unit = 65536, .seed = i, .partition_id = 1, .first_object_id = 1 + i * 256
	};
	struct pando_storage_map *map;

	req.raid = i % 3 == 0 ? PANDO_RAID1 : PANDO_RS;
	req.copies = 2;
	req.parity = i % 3 == 0 ? 0 : i % 3 == 1 ? 2 : 1;
	req.data = i % 3 == 1 ? 8 : 0;
	req.max_groups = i % 3 == 1 ? 1 : 0;
	if (pando_place(t->view, &req, &map))
		return 0;
	pando_map_free(map);
	return 1;
}

static double bench_placement(const struct options *o)
{
	struct pando_placement_policy policy = { .spares = 1,
						 .bias_limit_ppm = PANDO_BIAS_DEFAULT_PPM };
	static struct cluster_map_osd osds[120];
	struct cluster_map cluster = { .epoch = 1, .partition = 1, .nosds = 120, .osds = osds };
	uint64_t used[120];
	struct place_case t;
	struct pando_placement_view *c;
	double rate;

	for (uint32_t i = 0; i < 120; i++) {
		osds[i] = (struct cluster_map_osd){
			.id = 1 + i, .weight = 1ull << 40, .up = true, .in = true
		};
		snprintf(osds[i].domain, sizeof(osds[i].domain), "shelf%u", i / 10);
		used[i] = (1ull << 39) + i * (1ull << 32);
	}
	if (pando_placement_view_new(&cluster, used, &policy, &c))
		exit(1);
	t.view = c;
	rate = best_rate(o, place_step, &t);
	printf("maps created           %8.0f /s (120 OSDs in 12 domains; "
	       "mirrored, RS(8,2), RS(8,1) x 13 groups)\n",
	       rate);
	pando_placement_view_free(c);
	return rate;
}

struct layout_case {
	const struct pando_ff_layout *layout;
	uint8_t buf[4096];
};

static double layout_step(void *arg, size_t i)
{
	struct layout_case *t = arg;
	size_t len;

	return pando_ff_layout_encode(&t->layout[i % 2], t->buf, sizeof(t->buf), &len) ? 0 : 1;
}

static double bench_layouts(const struct options *o)
{
	static struct pando_ff_fh fh = { 64, { 1 } };
	struct pando_ff_data_server ds[11];
	struct pando_ff_mirror mirrors[2] = { { 1, &ds[0] }, { 1, &ds[1] } },
			       striped = { 9, &ds[2] };
	struct pando_ff_layout layouts[2] = {
		{ 0, 2, mirrors, 0, 60 },      /* whole-file mirror pair */
		{ 65536, 1, &striped, 0, 60 }, /* 9 data servers, 6.18+ */
	};
	struct layout_case t = { layouts, { 0 } };
	double rate;

	memset(ds, 0, sizeof(ds));
	for (int i = 0; i < 11; i++) {
		ds[i].deviceid[0] = (uint8_t)i;
		ds[i].efficiency = 1;
		ds[i].fh_count = 1;
		ds[i].fh_vers = &fh;
		strcpy(ds[i].user, "0");
		strcpy(ds[i].group, "0");
	}
	rate = best_rate(o, layout_step, &t);
	printf("layouts encoded        %8.0f /s (ff_layout4: 2 mirrors x 1 DS, "
	       "1 mirror x 9 DS, 64-byte handles)\n",
	       rate);
	return rate;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "seconds", 1, NULL, 's' },   { "reps", 1, NULL, 'r' },
		{ "chunk-kib", 1, NULL, 'c' }, { "pool-mib", 1, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*o = (struct options){ 0.4, 3, 64 << 10, 64 << 20 };
	while ((opt = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->seconds = atof(optarg);
			break;
		case 'r':
			o->reps = atoi(optarg);
			break;
		case 'c':
			o->chunk = (size_t)atol(optarg) << 10;
			break;
		case 'p':
			o->pool = (size_t)atol(optarg) << 20;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || o->seconds <= 0 || o->reps < 1 || o->chunk == 0 || o->pool < o->chunk)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned shapes[][2] = { { 4, 2 }, { 8, 2 }, { 10, 4 } };
	double rs82_isal = -1, rs82_jer = 0, copy;
	bool isal = pando_ec_backend_available(PANDO_EC_ISAL);
	struct options o;

	if (parse_options(argc, argv, &o)) {
		fprintf(stderr, "usage: ec_codec_bench [--seconds S] [--reps N] [--chunk-kib K] "
				"[--pool-mib M]\n");
		return 2;
	}
	printf("one core; chunks of %zu KiB, %zu MiB of stripes; best of %d x %.1f s\n",
	       o.chunk >> 10, o.pool >> 20, o.reps, o.seconds);
	copy = bench_memcpy(&o);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		double jer = bench_rs(&o, shapes[s][0], shapes[s][1], PANDO_EC_JERASURE);
		double fast = isal ? bench_rs(&o, shapes[s][0], shapes[s][1], PANDO_EC_ISAL) : -1;

		if (shapes[s][0] == 8) {
			rs82_jer = jer;
			rs82_isal = fast;
		}
	}
	if (!isal)
		printf("ISA-L not built in: jerasure only\n");
	bench_placement(&o);
	bench_layouts(&o);
	if (isal)
		printf("ec_rs82_encode_isal_gbps: %.2f\n", rs82_isal);
	else
		printf("ec_rs82_encode_isal_gbps: n/a (ISA-L not built in)\n");
	printf("ec_rs82_encode_jerasure_gbps: %.2f\n", rs82_jer);
	printf("memcpy_gbps: %.2f\n", copy);
	return 0;
}
