/* pando-fsck: the metadata manager's consistency checker and repairer.
 *
 *   pando-fsck --db DIR --cluster FILE [--repair] [--no-osds] [-v]
 *
 * 1. The namespace store: ns_check; with --repair, ns_repair and a second
 *    ns_check that says what is left.
 * 2. The objects (unless --no-osds): every storage map and every pending
 *    removal intent against what each OSD of cluster.conf (and of the
 *    cluster map kept beside the store) holds: fsck_objects, whose
 *    header (ganesha-fsal/fsck/fsck_check.h) lists what it finds and what
 *    --repair does about each.  Object tails and pending intents are not
 *    problems: -v lists them.
 *
 * This file keeps the command line, the output and the exit status.  One
 * line per problem on stdout, then a summary table; progress every
 * NS_PROGRESS_EVERY inodes or objects on stderr.  Exit status as e2fsck's:
 * 0 clean, 1 problems found and all repaired, 4 problems left (or found
 * without --repair), 8 operational error, 16 usage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_conf.h"
#include "cluster_map_json.h"
#include "fsck_check.h"
#include "ns_store.h"
#include "osd_conns.h"

#define PROG "pando-fsck"

enum {
	EXIT_CLEAN = 0,
	EXIT_REPAIRED = 1,
	EXIT_LEFT = 4,
	EXIT_OPERATIONAL = 8,
	EXIT_USAGE = 16,
};

#define OSD_TIMEOUT_MS 10000
#define MAX_OUT 64

struct fsck {
	const char *db;
	const char *cluster;
	bool repair;
	bool osds;
	bool verbose;
	const char *phase; /* for progress lines */
	struct ns_store *s;
	struct cluster_conf conf; /* its map: cluster.conf's, brought up to the kept map */
	struct osd_conns *conns;
	struct ns_check_result ns_found, ns_left;
	struct fsck_result objects;
	uint32_t out[MAX_OUT]; /* OSDs the kept cluster map has out */
	size_t nout;
};

/* ---- output ---------------------------------------------------------------- */

static void print_line(void *arg, const char *line)
{
	puts(line);
}

static void print_problem(void *arg, enum fsck_kind k, bool repaired, const char *line)
{
	puts(line);
}

static void print_detail(void *arg, const char *line)
{
	const struct fsck *f = arg;

	if (f->verbose)
		puts(line);
}

static void set_phase(void *arg, const char *name)
{
	struct fsck *f = arg;

	f->phase = name;
}

static void progress(void *arg, const char *what, uint64_t done)
{
	const struct fsck *f = arg;

	fprintf(stderr, PROG ": %s: %llu %s\n", f->phase, (unsigned long long)done, what);
}

static void store_log(void *arg, const char *msg)
{
	fprintf(stderr, PROG ": store: %s\n", msg);
}

/* ---- 1. the namespace ------------------------------------------------------ */

static void say_found(void *arg, const char *msg)
{
	printf("namespace: %s\n", msg);
}

static void say_fixed(void *arg, const char *msg)
{
	printf("namespace: repair: %s\n", msg);
}

static void say_left(void *arg, const char *msg)
{
	printf("namespace: left: %s\n", msg);
}

static int check_namespace(struct fsck *f)
{
	struct ns_check_result fixed;
	int rc;

	f->phase = "namespace";
	rc = ns_check(f->s, say_found, f, &f->ns_found);
	f->ns_left = f->ns_found;
	if (rc || !f->repair || !f->ns_found.problems)
		return rc;
	f->phase = "repair";
	rc = ns_repair(f->s, say_fixed, f, &fixed);
	/* Stopped by something it explained (lost+found taken): what is left
	 * is counted below. */
	if (rc && rc != -ENOTDIR)
		return rc;
	f->phase = "namespace again";
	return ns_check(f->s, say_left, f, &f->ns_left);
}

/* ---- 2. the objects ---------------------------------------------------------- */

static int check_objects(struct fsck *f)
{
	const struct fsck_options o = { .repair = f->repair, .out = f->out, .nout = f->nout };
	const struct fsck_hooks h = {
		.arg = f,
		.problem = print_problem,
		.detail = print_detail,
		.note = print_line,
		.phase = set_phase,
		.progress = progress,
	};
	int rc = osd_conns_new(&f->conf.key, &f->conf.map,
			       &(struct osd_conns_options){ .conns_per_osd = 1,
							    .timeout_ms = OSD_TIMEOUT_MS },
			       &f->conns);

	return rc ? rc : fsck_objects(f->s, &f->conf.map, f->conns, &o, &h, &f->objects);
}

/* ---- summary ----------------------------------------------------------------- */

struct row {
	const char *name;
	uint64_t found, left;
};

static void print_row(const struct row *r)
{
	uint64_t repaired = r->found > r->left ? r->found - r->left : 0;

	printf("  %-22s %10llu %10llu %10llu\n", r->name, (unsigned long long)r->found,
	       (unsigned long long)repaired, (unsigned long long)r->left);
}

static void add_row(const struct row *r, struct row *total)
{
	print_row(r);
	total->found += r->found;
	total->left += r->left;
}

/* Prints the table; the exit status it comes to. */
static int summary(struct fsck *f)
{
	const struct ns_check_result *a = &f->ns_found, *b = &f->ns_left;
	const struct row ns_rows[] = {
		{ "bad records", a->bad_records, b->bad_records },
		{ "dangling entries", a->dangling_dirents, b->dangling_dirents },
		{ "index mismatches", a->index_mismatches, b->index_mismatches },
		{ "wrong link counts", a->bad_links, b->bad_links },
		{ "orphan inodes", a->orphans, b->orphans },
		{ "stray keys", a->stray_keys, b->stray_keys },
		{ "bad counters", a->bad_counters, b->bad_counters },
	};
	struct row total = { "total", 0, 0 };

	printf("\n%s: %llu inodes, %llu entries\n", f->db, (unsigned long long)a->inodes,
	       (unsigned long long)a->dirents);
	printf("  %-22s %10s %10s %10s\n", "problem", "found", "repaired", "left");
	for (size_t i = 0; i < sizeof(ns_rows) / sizeof(ns_rows[0]); i++)
		add_row(&ns_rows[i], &total);
	for (int k = 0; f->osds && k < FSCK_NKINDS; k++) {
		const struct fsck_tally *t = &f->objects.t[k];
		struct row r = { fsck_kind_name(k), t->found, t->found - t->repaired };

		add_row(&r, &total);
	}
	print_row(&total);
	if (f->osds)
		printf("pending intents: %llu, finished: %llu; objects listed: %llu, the "
		       "journal's: %llu\n",
		       (unsigned long long)f->objects.intents,
		       (unsigned long long)f->objects.intents_done,
		       (unsigned long long)f->objects.listed,
		       (unsigned long long)f->objects.journal);
	if (!total.found)
		return EXIT_CLEAN;
	return total.left ? EXIT_LEFT : EXIT_REPAIRED;
}

/* ---- command line ------------------------------------------------------------- */

static int usage(FILE *out, int status)
{
	fprintf(out, "usage: " PROG " --db DIR --cluster FILE [--repair] [--no-osds] [-v]\n"
		     "  --db DIR        the metadata manager's namespace store (Ganesha stopped)\n"
		     "  --cluster FILE  cluster.conf (OSDs, key, partition)\n"
		     "  --repair        fix what can be fixed\n"
		     "  --no-osds       the namespace only (--cluster not needed)\n"
		     "  -v              list pending intents and each OSD listed\n"
		     "exit: 0 clean, 1 all repaired, 4 problems left, 8 operational error, "
		     "16 usage\n");
	return status;
}

static int parse_args(struct fsck *f, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "repair", no_argument, NULL, 'r' },
		{ "no-osds", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	f->osds = true;
	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			f->db = optarg;
			break;
		case 'c':
			f->cluster = optarg;
			break;
		case 'r':
			f->repair = true;
			break;
		case 'n':
			f->osds = false;
			break;
		case 'v':
			f->verbose = true;
			break;
		case 'h':
			exit(usage(stdout, EXIT_CLEAN));
		default:
			return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc || !f->db || (f->osds && !f->cluster))
		return usage(stderr, EXIT_USAGE);
	return 0;
}

/* cluster.conf's map brought up to m.  The partition stays cluster.conf's:
 * the manager makes its objects there whatever the map says. */
static int merge_map(struct fsck *f, const struct cluster_map *m)
{
	struct cluster_map merged;
	int rc = cluster_map_merge(&f->conf.map, m, &merged);

	if (rc)
		return rc;
	merged.partition = f->conf.map.partition;
	cluster_map_free(&f->conf.map);
	f->conf.map = merged;
	return 0;
}

/* OSDs the cluster map added since cluster.conf was written, and their
 * current addresses: the manager keeps the last map it applied beside the
 * store, and fsck runs while the manager is stopped. */
static int merge_kept_map(struct fsck *f)
{
	char path[PATH_MAX], why[512];
	struct cluster_map m;
	int rc;

	if (snprintf(path, sizeof(path), "%s.map.json", f->db) >= (int)sizeof(path))
		return 0;
	rc = cluster_map_load(path, &m, why, sizeof(why));
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		fprintf(stderr, PROG ": warning: ignoring the kept cluster map: %s\n", why);
		return 0;
	}
	for (size_t i = 0; i < m.nosds && f->nout < MAX_OUT; i++)
		if (!m.osds[i].in)
			f->out[f->nout++] = m.osds[i].id;
	rc = merge_map(f, &m);
	if (rc)
		fprintf(stderr, PROG ": %s: more OSDs than fsck can hold\n", path);
	else
		printf("OSDs from the cluster map %s (epoch %llu)\n", path,
		       (unsigned long long)m.epoch);
	cluster_map_free(&m);
	return rc;
}

static int open_all(struct fsck *f)
{
	struct ns_options o = { .log = store_log };
	char why[512];
	int rc;

	if (f->osds) {
		rc = cluster_conf_load(f->cluster, &f->conf, why, sizeof(why));
		if (!rc)
			rc = merge_kept_map(f);
		if (rc) {
			fprintf(stderr, PROG ": %s\n", why);
			return rc;
		}
	}
	rc = ns_open(f->db, &o, &f->s);
	if (rc == -EBUSY)
		fprintf(stderr, PROG ": %s: the store is in use (is ganesha.nfsd running?)\n",
			f->db);
	else if (rc == -ENOENT)
		fprintf(stderr, PROG ": %s: no namespace store there\n", f->db);
	else if (rc)
		fprintf(stderr, PROG ": %s: cannot open the store: %s\n", f->db, strerror(-rc));
	if (!rc)
		ns_set_progress(f->s, progress, f);
	return rc;
}

static void close_all(struct fsck *f)
{
	if (f->conns)
		osd_conns_free(f->conns);
	if (f->s)
		ns_close(f->s);
	if (f->osds)
		cluster_conf_free(&f->conf);
}

int main(int argc, char **argv)
{
	struct fsck f = { 0 };
	int status = parse_args(&f, argc, argv), rc;

	if (status)
		return status;
	rc = open_all(&f);
	if (!rc)
		rc = check_namespace(&f);
	if (!rc && f.osds)
		rc = check_objects(&f);
	if (rc && f.s)
		fprintf(stderr, PROG ": %s: check stopped: %s\n", f.db, strerror(-rc));
	status = rc ? EXIT_OPERATIONAL : summary(&f);
	close_all(&f);
	return status;
}
