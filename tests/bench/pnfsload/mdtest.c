/* mdtest-like metadata rates: N files per client in the shared --dir
 * (mdtest.<client>.<n>) or in a directory per client (c<client>/mdtest.<n>):
 * create = OPEN(create) + CLOSE, stat = LOOKUP + GETATTR, remove = REMOVE.
 * With --write-bytes W (mdtest -w) a create also writes W bytes of the
 * pattern (seed 0) FILE_SYNC as Linux would: through the MDS when W is
 * below the file's MDS threshold, else a LAYOUTGET for [0, W), then the
 * data servers and LAYOUTCOMMIT, or through the MDS when refused.
 * The remove phase also removes the per-client directory, untimed. */
#include <stdio.h>
#include <stdlib.h>

#include "pnfsload.h"

struct mdtest {
	struct client *cl;
	uint8_t *data; /* --write-bytes of the pattern */
	struct nfs4_fh dir;
	char unique[32]; /* the per-client directory's name, or "" */
	uint64_t next;
};

void *mdtest_setup(struct client *cl)
{
	struct mdtest *s = calloc(1, sizeof(*s));

	if (!s)
		die("out of memory");
	s->cl = cl;
	s->dir = cl->dir;
	if (cl->opt->write_bytes) {
		s->data = malloc(cl->opt->write_bytes);
		if (!s->data)
			die("out of memory");
		pattern_fill(s->data, 0, cl->opt->write_bytes, 0);
	}
	if (cl->opt->unique_dir) {
		snprintf(s->unique, sizeof(s->unique), "c%u", cl->idx);
		ns_lookup_path(cl, &cl->dir, s->unique, cl->opt->phase == PH_CREATE, &s->dir);
	}
	return s;
}

static void write_data(struct mdtest *s, unsigned k, struct open_file *f, const char *name)
{
	struct client *cl = s->cl;
	uint32_t n = cl->opt->write_bytes;
	uint8_t rbuf[CTL_BUF];
	unsigned t;
	int err;

	if (cl->pnfs && !lo_below_threshold(f, true, n) &&
	    lo_get(cl, k, f, LAYOUTIOMODE4_RW, 0, n) > 0) {
		uint8_t rbufs[MAX_DEVICES * 1024];

		if ((err = ds_write_mirrors(f, k, 0, s->data, n, FILE_SYNC4, rbufs, &t))) {
			lo_return_error(cl, k, f, t, 0, n, err, OP_WRITE);
			cl_die(cl, "WRITE %s on %s: %s (%d)", name, f->targets[t].conn->name,
			       ds_strerror(err), err);
		}
		stats_add(&cl->st->ds_io_bytes, (uint64_t)n * f->mirrors);
		lo_commit(cl, k, f, 0, n);
		lo_return(cl, k, f);
	} else {
		mds_write(cl, k, f, name, 0, s->data, n, FILE_SYNC4, rbuf);
		stats_add(&cl->st->mds_io_bytes, n);
	}
	stats_add(&cl->st->bytes, n);
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
		if (cl->opt->write_bytes)
			write_data(s, k, &f, name);
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
	free(s->data);
	free(s);
}
