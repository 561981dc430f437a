/* mdtest-like metadata rates: N files per client in the shared --dir
 * (mdtest.<client>.<n>) or in a directory per client (c<client>/mdtest.<n>):
 * create = OPEN(create) + CLOSE, stat = LOOKUP + GETATTR, remove = REMOVE.
 * The remove phase also removes the per-client directory, untimed. */
#include <stdio.h>
#include <stdlib.h>

#include "pnfsload.h"

struct mdtest {
	struct client *cl;
	struct nfs4_fh dir;
	char unique[32];	/* the per-client directory's name, or "" */
	uint64_t next;
};

void *mdtest_setup(struct client *cl)
{
	struct mdtest *s = calloc(1, sizeof(*s));

	if (!s)
		die("out of memory");
	s->cl = cl;
	s->dir = cl->dir;
	if (cl->opt->unique_dir) {
		snprintf(s->unique, sizeof(s->unique), "c%u", cl->idx);
		ns_lookup_path(cl, &cl->dir, s->unique, cl->opt->phase == PH_CREATE, &s->dir);
	}
	return s;
}

static void one_file(struct mdtest *s, unsigned k, uint64_t n)
{
	struct client *cl = s->cl;
	struct open_file f;
	struct nfs4_attrs attrs;
	char name[64];

	if (s->unique[0])
		snprintf(name, sizeof(name), "mdtest.%llu", (unsigned long long)n);
	else
		snprintf(name, sizeof(name), "mdtest.%u.%llu", cl->idx, (unsigned long long)n);
	switch (cl->opt->phase) {
	case PH_CREATE:
		ns_open(cl, k, &s->dir, name, true, OPEN4_SHARE_ACCESS_WRITE, &f);
		ns_close(cl, k, &f);
		break;
	case PH_STAT:
		ns_stat(cl, k, &s->dir, name, &attrs);
		break;
	default:
		ns_remove(cl, k, &s->dir, name);
		break;
	}
}

static void mdtest_worker(void *arg, unsigned k)
{
	struct mdtest *s = arg;

	for (;;) {
		uint64_t n = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);

		if (n >= s->cl->opt->files)
			return;
		one_file(s, k, n);
		stats_add(&s->cl->st->ops, 1);
	}
}

void mdtest_run(struct client *cl, void *state)
{
	struct mdtest *s = state;

	cl->t_start = realtime_now();
	run_workers(cl->nslots, mdtest_worker, s);
	cl->t_end = realtime_now();
	if (cl->opt->phase == PH_REMOVE && s->unique[0])
		ns_remove(cl, 0, &cl->dir, s->unique);
	free(s);
}
