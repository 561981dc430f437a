/* pando-rebuild-spread: how widely the rebuild of one failed OSD spreads
 * (Panasas FAST '08, figure 4 and Table 1).
 *
 * For each pool size N it places files the way the metadata manager would
 * (automatic group width, RS(k,m), two-level striping), fails one OSD, and
 * adds up what rebuilding its components reads from every survivor (k
 * surviving chunks of each affected stripe) and writes where replacement
 * puts them.  Prints one row per N. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pando/placement.h"
#include "pando/storage_map.h"

#define GIB (1ull << 30)

struct options {
	uint32_t min_osds, max_osds, step;
	uint32_t files_per_osd;
	uint64_t file_size;
	uint32_t parity;
	uint32_t stripe_unit;
	uint32_t spares;
	uint64_t seed;
};

struct spread {
	uint32_t width, groups;
	uint64_t *stored, *read, *written; /* bytes per OSD index */
	uint64_t affected;                 /* component objects lost */
};

static void usage(FILE *to)
{
	fprintf(to,
		"usage: pando-rebuild-spread [--min N] [--max N] [--step N] [--files-per-osd F]\n"
		"                            [--file-size BYTES] [--parity M] [--stripe-unit BYTES]\n"
		"                            [--spares S] [--seed S]\n"
		"defaults: 10..120 OSDs by 10, 200 files per OSD of 1 GiB, RS(k,1) with k from\n"
		"Panasas Table 1, 64 KiB stripe units, 1 distributed spare\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "min", 1, NULL, 'a' },
		{ "max", 1, NULL, 'b' },
		{ "step", 1, NULL, 'c' },
		{ "files-per-osd", 1, NULL, 'f' },
		{ "file-size", 1, NULL, 's' },
		{ "parity", 1, NULL, 'm' },
		{ "stripe-unit", 1, NULL, 'u' },
		{ "spares", 1, NULL, 'p' },
		{ "seed", 1, NULL, 'r' },
		{ "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*o = (struct options){ 10, 120, 10, 200, GIB, 1, 65536, 1, 1 };
	while ((opt = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		uint64_t v;

		if (opt == 'h') {
			usage(stdout);
			exit(0);
		}
		if (opt == '?' || parse_u64(optarg, &v))
			return -EINVAL;
		switch (opt) {
		case 'a':
			o->min_osds = (uint32_t)v;
			break;
		case 'b':
			o->max_osds = (uint32_t)v;
			break;
		case 'c':
			o->step = (uint32_t)v;
			break;
		case 'f':
			o->files_per_osd = (uint32_t)v;
			break;
		case 's':
			o->file_size = v;
			break;
		case 'm':
			o->parity = (uint32_t)v;
			break;
		case 'u':
			o->stripe_unit = (uint32_t)v;
			break;
		case 'p':
			o->spares = (uint32_t)v;
			break;
		case 'r':
			o->seed = v;
			break;
		}
	}
	if (optind != argc || o->step == 0 || o->min_osds == 0 || o->min_osds > o->max_osds ||
	    o->parity == 0 || o->parity > 8)
		return -EINVAL;
	return 0;
}

/* Bytes each component of group g holds for a file of `size` bytes: one
 * stripe unit for every stripe row of the group's visits. */
static uint64_t component_bytes(const struct pando_storage_map *map, uint64_t size, uint32_t g)
{
	uint64_t visit = pando_shape_visit_bytes(&map->shape);
	uint64_t row = (uint64_t)map->shape.data * map->shape.stripe_unit, rows = 0;

	for (uint64_t v = g; v * visit < size; v += map->groups) {
		uint64_t start = v * visit, end = start + visit < size ? start + visit : size;

		rows += (end - start + row - 1) / row;
	}
	return rows * map->shape.stripe_unit;
}

/* Rebuilding component `lost` of group g reads k survivors (the first k
 * in component order) and writes its replacement.  OSD ids are 1..n. */
static int rebuild_group(const struct pando_placement_view *c, const struct pando_storage_map *map,
			 uint32_t g, uint32_t lost, uint64_t bytes, uint64_t seed, struct spread *s)
{
	uint32_t read = 0, target;
	int rc;

	for (uint32_t k = 0; k < pando_map_width(map) && read < map->shape.data; k++) {
		if (k == lost)
			continue;
		s->read[pando_map_component(map, g, k)->osd_id - 1] += bytes;
		read++;
	}
	rc = pando_place_replacement(c, map, g, lost, seed, &target);
	if (rc)
		return rc;
	s->written[target - 1] += bytes;
	s->affected++;
	return 0;
}

static int account_file(const struct pando_placement_view *c, const struct pando_storage_map *map,
			const struct options *o, uint32_t failed, struct spread *s)
{
	for (uint32_t g = 0; g < map->groups; g++) {
		uint64_t bytes = component_bytes(map, o->file_size, g);

		for (uint32_t k = 0; k < pando_map_width(map); k++) {
			uint32_t osd = pando_map_component(map, g, k)->osd_id;
			int rc;

			s->stored[osd - 1] += bytes;
			if (osd != failed || !bytes)
				continue;
			rc = rebuild_group(c, map, g, k, bytes, map->seed ^ 0x5eed, s);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Places files on n OSDs (ids 1..n, alike, empty, each its own failure
 * domain), fails OSD 1. */
static int simulate(const struct options *o, uint32_t n, struct spread *s)
{
	struct pando_placement_policy policy = { .spares = o->spares,
						 .bias_limit_ppm = PANDO_BIAS_DEFAULT_PPM };
	struct cluster_map cluster = { .epoch = 1, .partition = 1, .nosds = n };
	struct pando_placement_view *c = NULL;
	int rc;

	cluster.osds = calloc(n, sizeof(*cluster.osds));
	rc = cluster.osds ? 0 : -ENOMEM;
	for (uint32_t i = 0; !rc && i < n; i++)
		cluster.osds[i] = (struct cluster_map_osd){
			.id = 1 + i, .weight = 1ull << 40, .up = true, .in = true
		};
	if (!rc)
		rc = pando_placement_view_new(&cluster, NULL, &policy, &c);
	for (uint64_t f = 0; !rc && f < (uint64_t)o->files_per_osd * n; f++) {
		struct pando_layout_request req = {
			.raid = PANDO_RS,
			.parity = (uint8_t)o->parity,
			.stripe_unit = o->stripe_unit,
			.seed = o->seed * 1000003 + f,
			.partition_id = 1,
			.first_object_id = 1 + f * 4096,
		};
		struct pando_storage_map *map;

		rc = pando_place(c, &req, &map);
		if (rc)
			break;
		s->width = pando_map_width(map);
		s->groups = map->groups;
		rc = account_file(c, map, o, 1, s);
		pando_map_free(map);
	}
	pando_placement_view_free(c);
	cluster_map_free(&cluster);
	return rc;
}

static void print_header(const struct options *o)
{
	printf("# rebuild of one failed OSD: %u files per OSD of %" PRIu64 " bytes, RS(k,%u), "
	       "%u-byte stripe units, %u spare(s)\n",
	       o->files_per_osd, o->file_size, o->parity, o->stripe_unit, o->spares);
	printf("# declustering ratio = group width / OSDs (Panasas); read share = bytes read from the\n"
	       "# survivors / bytes they hold; max/mean over the OSDs read from (or written to)\n");
	printf("%5s %5s %6s %8s %8s %8s %9s %9s %9s %8s %8s\n", "osds", "width", "groups",
	       "declust", "readers", "read/osd", "read max", "read min", "readshare", "writers",
	       "wr max");
	printf("%5s %5s %6s %8s %8s %8s %9s %9s %9s %8s %8s\n", "", "", "", "ratio", "", "GiB",
	       "/mean", "/mean", "", "", "/mean");
}

static void print_row(uint32_t n, const struct spread *s)
{
	uint64_t total_read = 0, total_stored = 0, max_read = 0, min_read = UINT64_MAX;
	uint64_t total_written = 0, max_written = 0;
	uint32_t readers = 0, writers = 0;

	for (uint32_t i = 1; i < n; i++) {
		total_stored += s->stored[i];
		total_written += s->written[i];
		writers += s->written[i] != 0;
		if (s->written[i] > max_written)
			max_written = s->written[i];
		if (!s->read[i])
			continue;
		readers++;
		total_read += s->read[i];
		max_read = s->read[i] > max_read ? s->read[i] : max_read;
		min_read = s->read[i] < min_read ? s->read[i] : min_read;
	}
	if (!readers || !writers) {
		printf("%5u %5u %6u  (nothing to rebuild)\n", n, s->width, s->groups);
		return;
	}
	printf("%5u %5u %6u %8.3f %8u %8.1f %9.2f %9.2f %9.3f %8u %8.2f\n", n, s->width, s->groups,
	       (double)s->width / n, readers, (double)total_read / readers / GIB,
	       (double)max_read * readers / total_read, (double)min_read * readers / total_read,
	       (double)total_read / total_stored, writers,
	       (double)max_written * writers / total_written);
}

int main(int argc, char **argv)
{
	struct options o;

	if (parse_options(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	print_header(&o);
	for (uint32_t n = o.min_osds; n <= o.max_osds; n += o.step) {
		struct spread s = { 0 };
		int rc;

		s.stored = calloc(n, sizeof(uint64_t));
		s.read = calloc(n, sizeof(uint64_t));
		s.written = calloc(n, sizeof(uint64_t));
		rc = s.stored && s.read && s.written ? simulate(&o, n, &s) : -ENOMEM;
		if (rc)
			fprintf(stderr, "pando-rebuild-spread: %u OSDs: %s\n", n, strerror(-rc));
		else
			print_row(n, &s);
		free(s.stored);
		free(s.read);
		free(s.written);
		if (rc)
			return 1;
	}
	return 0;
}
