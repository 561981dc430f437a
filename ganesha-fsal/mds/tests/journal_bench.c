/* What the journal costs a store's creates: the same work on a store
 * whose batches go to the OSD journal (three copies, stable) and on one
 * without a journal, both synced before every reply (NFS's durability),
 * on the same real OSDs and etcd, in one process.  Runs alternate, which
 * goes first changing each round.  Prints one line per run:
 *   run N journal|plain CREATES SECONDS
 * Driven by tests/bench/journal_cost, which takes medians. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_fixture.h"
#include "journal.h"
#include "mds_fixture.h"
#include "ns_store.h"

static struct etcd_fixture etcd;

struct run {
	struct ns_store *s;
	uint64_t dir;
	int thread, files;
	int failures;
};

static void tune(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
}

static void *creator(void *arg)
{
	struct run *r = arg;
	struct ns_new mode = { .mode = 0644 };
	char name[32];

	for (int i = 0; i < r->files; i++) {
		snprintf(name, sizeof(name), "t%d.%d", r->thread, i);
		r->failures += ns_create(r->s, r->dir, name, &mode, NS_GUARDED, NULL, NULL, NULL) !=
			       0;
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* threads x files creates in a new directory of s: seconds, or -1. */
static double creates(struct ns_store *s, int round, int threads, int files)
{
	struct run r[64];
	pthread_t t[64];
	struct ns_attr d;
	char name[32];
	int failures = 0;
	double t0;

	snprintf(name, sizeof(name), "round%d", round);
	if (ns_mkdir(s, NS_ROOT_INO, name, &(struct ns_new){ .mode = 0755 }, &d))
		return -1;
	t0 = now_s();
	for (int i = 0; i < threads; i++) {
		r[i] = (struct run){ .s = s, .dir = d.ino, .thread = i, .files = files };
		pthread_create(&t[i], NULL, creator, &r[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		failures += r[i].failures;
	}
	return failures ? -1 : now_s() - t0;
}

static int bench(struct mds_fixture *f, int runs, int threads, int files)
{
	char plain_dir[160], journal_dir[160];
	struct ns_store *plain = NULL, *journaled = NULL;
	struct pando_journal *j = NULL;
	const struct pando_journal_options jo = { .group = "bench", .term = 1 };
	struct ns_options o = { 0 };

	snprintf(plain_dir, sizeof(plain_dir), "%s/plain", f->osds.root);
	snprintf(journal_dir, sizeof(journal_dir), "%s/journaled", f->osds.root);
	if (ns_format(plain_dir, NULL) || ns_format(journal_dir, NULL) ||
	    ns_open(plain_dir, NULL, &plain) || pando_journal_open(&f->mds, &jo, &j))
		return -1;
	o.journal = pando_journal_ns(j);
	if (ns_open(journal_dir, &o, &journaled))
		return -1;
	for (int i = 0; i < runs; i++) {
		for (int k = 0; k < 2; k++) {
			bool with = (i + k) % 2 == 0;
			double secs = creates(with ? journaled : plain, i, threads, files);

			printf("run %d %s %d %.4f\n", i, with ? "journal" : "plain",
			       threads * files, secs);
			fflush(stdout);
		}
	}
	ns_close(journaled);
	ns_close(plain);
	pando_journal_close(j);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5;
	int threads = argc > 2 ? atoi(argv[2]) : 16;
	int files = argc > 3 ? atoi(argv[3]) : 200;
	struct mds_fixture f;
	int rc = -1;

	if (runs < 1 || threads < 1 || threads > 64 || files < 1) {
		fprintf(stderr, "usage: journal_bench [RUNS [THREADS [FILES]]]\n");
		return 2;
	}
	if (etcd_fixture_start(&etcd) != 0)
		return 1;
	if (mds_fixture_start(&f, JOURNAL_COPIES, tune) == 0)
		rc = bench(&f, runs, threads, files);
	mds_fixture_finish(&f, rc != 0);
	etcd_fixture_stop(&etcd, rc != 0);
	return rc ? 1 : 0;
}
