/* pando-ns-bench: namespace store throughput on this machine.
 *
 *   pando-ns-bench [-n FILES] [-t THREADS] [--nosync] [--journal] DIR
 *
 * Formats a store in DIR (which must not hold one), then times, in one
 * directory: creating FILES files from THREADS threads, reading the whole
 * directory back in pages of 1,000 by cookie, looking every name up, and
 * unlinking them all.  --journal opens the store with a journal that
 * copies each batch into a ring in memory and syncs at once: what the
 * journal hook costs the store, without a journal's own cost. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ns_store.h"

enum phase { CREATE, LOOKUP, UNLINK };

#define RING_BYTES (64u << 20)

struct ring {
	uint8_t *buf;
	size_t off;
	uint64_t batches, bytes;
};

/* Called under the store's commit lock: no lock of its own. */
static int ring_append(void *arg, uint64_t seq, const void *batch, size_t len)
{
	struct ring *r = arg;

	if (len > RING_BYTES)
		return -EMSGSIZE;
	if (r->off + len > RING_BYTES)
		r->off = 0;
	memcpy(r->buf + r->off, batch, len);
	r->off += len;
	r->batches++;
	r->bytes += len;
	return 0;
}

static int ring_sync(void *arg, uint64_t seq)
{
	return 0;
}

struct worker {
	struct ns_store *s;
	uint64_t dir;
	enum phase phase;
	long first, count;
	int rc;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int one(struct worker *w, const char *name)
{
	struct ns_new in = { .mode = 0644 };
	struct ns_attr a;

	switch (w->phase) {
	case CREATE:
		return ns_create(w->s, w->dir, name, &in, NS_GUARDED, NULL, NULL, NULL);
	case LOOKUP:
		return ns_lookup(w->s, w->dir, name, &a);
	default:
		return ns_unlink(w->s, w->dir, name);
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char name[32];

	for (long i = w->first; !w->rc && i < w->first + w->count; i++) {
		snprintf(name, sizeof(name), "file-%08ld", i);
		w->rc = one(w, name);
	}
	return NULL;
}

static int run_phase(struct worker *ws, int threads, enum phase phase, long files, const char *what)
{
	pthread_t th[threads];
	double t0 = now_s(), dt;

	for (int i = 0; i < threads; i++) {
		ws[i].phase = phase;
		pthread_create(&th[i], NULL, work, &ws[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	dt = now_s() - t0;
	for (int i = 0; i < threads; i++) {
		if (ws[i].rc) {
			fprintf(stderr, "%s: %s\n", what, strerror(-ws[i].rc));
			return 1;
		}
	}
	printf("%-8s %9ld in %7.3f s  %9.0f/s\n", what, files, dt, files / dt);
	return 0;
}

static int count_entry(void *arg, const struct ns_dirent *de)
{
	uint64_t *last = arg;

	*last = de->cookie;
	return ++last[1] % 1000 == 0;
}

static int run_readdir(struct ns_store *s, uint64_t dir, long files)
{
	uint64_t state[2] = { 0, 0 };
	double t0 = now_s(), dt;
	bool eof = false;
	int rc = 0;

	while (!rc && !eof)
		rc = ns_readdir(s, dir, state[0], count_entry, state, &eof);
	dt = now_s() - t0;
	if (rc || state[1] != (uint64_t)files) {
		fprintf(stderr, "readdir: %s, %llu entries\n", strerror(-rc),
			(unsigned long long)state[1]);
		return 1;
	}
	printf("%-8s %9ld in %7.3f s  %9.0f/s\n", "readdir", files, dt, files / dt);
	return 0;
}

static int bench(struct ns_store *s, long files, int threads)
{
	struct ns_new in = { .mode = 0755 };
	struct worker ws[threads];
	struct ns_attr d;
	int rc = ns_mkdir(s, NS_ROOT_INO, "bench", &in, &d);

	if (rc) {
		fprintf(stderr, "mkdir: %s\n", strerror(-rc));
		return 1;
	}
	for (int i = 0; i < threads; i++)
		ws[i] = (struct worker){ .s = s,
					 .dir = d.ino,
					 .first = files * i / threads,
					 .count = files * (i + 1) / threads - files * i / threads };
	return run_phase(ws, threads, CREATE, files, "create") || run_readdir(s, d.ino, files) ||
	       run_phase(ws, threads, LOOKUP, files, "lookup") ||
	       run_phase(ws, threads, UNLINK, files, "unlink");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "nosync", no_argument, NULL, 'S' },
						  { "journal", no_argument, NULL, 'J' },
						  { 0 } };
	struct ring ring = { 0 };
	struct ns_journal journal = { .append = ring_append, .sync = ring_sync, .arg = &ring };
	struct ns_options o = { 0 };
	struct ns_store *s;
	long files = 100000;
	int threads = 1, c, rc;

	while ((c = getopt_long(argc, argv, "n:t:", longopts, NULL)) != -1) {
		if (c == 'n')
			files = atol(optarg);
		else if (c == 't')
			threads = atoi(optarg);
		else if (c == 'S')
			o.nosync = true;
		else if (c == 'J')
			o.journal = &journal;
		else
			goto usage;
	}
	if (optind != argc - 1 || files < 1 || threads < 1 || threads > 256)
		goto usage;
	if (o.journal && !(ring.buf = malloc(RING_BYTES))) {
		fprintf(stderr, "no memory for the journal\n");
		return 1;
	}
	rc = ns_format(argv[optind], &o);
	if (!rc)
		rc = ns_open(argv[optind], &o, &s);
	if (rc) {
		fprintf(stderr, "%s: %s\n", argv[optind], strerror(-rc));
		return 1;
	}
	printf("%ld files, %d threads, %s, %s\n", files, threads, o.nosync ? "no sync" : "synced",
	       o.journal ? "journal in memory" : "no journal");
	rc = bench(s, files, threads);
	ns_close(s);
	if (o.journal)
		printf("journal: %llu batches, %llu bytes\n", (unsigned long long)ring.batches,
		       (unsigned long long)ring.bytes);
	free(ring.buf);
	return rc;
usage:
	fprintf(stderr, "usage: %s [-n FILES] [-t THREADS] [--nosync] [--journal] DIR\n", argv[0]);
	return 2;
}
