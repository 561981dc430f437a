/* IO500's find, parallel as pfind is: the client's --depth workers walk
 * the tree under --dir with READDIR (type, size and file handle of every
 * entry in the listing, no LOOKUP or GETATTR per name), taking
 * directories from one shared stack.  Every entry counts as an op; a
 * regular file of --find-size bytes (IO500: 3,901, mdtest-hard's) is a
 * match. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pnfsload.h"

#define NF4REG 1u
#define NF4DIR 2u

struct find {
	struct client *cl;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nfs4_fh *stack; /* directories still to list */
	size_t n, cap;
	unsigned busy; /* workers listing a directory */
};

/* What one worker counts while it lists a directory. */
struct listing {
	struct find *s;
	uint64_t entries;
	uint64_t matches;
};

void *find_setup(struct client *cl)
{
	struct find *s = calloc(1, sizeof(*s));

	if (!s)
		die("out of memory");
	s->cl = cl;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	return s;
}

/* Called with s->lock held. */
static void push(struct find *s, const struct nfs4_fh *fh)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct nfs4_fh *grown = realloc(s->stack, cap * sizeof(*grown));

		if (!grown)
			die("out of memory");
		s->stack = grown;
		s->cap = cap;
	}
	s->stack[s->n++] = *fh;
}

static void one_entry(void *arg, const struct nfs4_dirent *e)
{
	struct listing *l = arg;

	l->entries++;
	if (e->type == NF4REG && l->s->cl->opt->find_size && e->size == l->s->cl->opt->find_size)
		l->matches++;
	if (e->type == NF4DIR) {
		pthread_mutex_lock(&l->s->lock);
		push(l->s, &e->fh);
		pthread_cond_signal(&l->s->cond);
		pthread_mutex_unlock(&l->s->lock);
	}
}

/* Every entry of one directory, READDIR after READDIR to its end. */
static void list_dir(struct find *s, unsigned k, const struct nfs4_fh *dir)
{
	struct client *cl = s->cl;
	struct listing l = { .s = s };
	struct nfs4_readdir_res res = { 0 };
	uint32_t maxcount = CTL_BUF - 1024;
	uint8_t *rbuf = malloc(CTL_BUF);
	struct compound c;

	if (!rbuf)
		die("out of memory");
	do {
		cl_begin(cl, &c, k, 2, rbuf, CTL_BUF);
		c4_putfh(&c.w, dir);
		c4_readdir(&c.w, res.cookie, res.verifier, maxcount);
		cl_call(cl, &c, "READDIR");
		cl_op(cl, &c, OP_PUTFH, 0);
		cl_op(cl, &c, OP_READDIR, 0);
		cl_check(cl, d4_readdir(&c.r, one_entry, &l, &res), OP_READDIR);
		if (!res.eof && res.entries == 0)
			cl_die(cl, "READDIR: no entry and no end of the directory");
	} while (!res.eof);
	free(rbuf);
	stats_add(&cl->st->ops, l.entries);
	stats_add(&cl->st->matches, l.matches);
}

/* The next directory to list, or false once none is left and no worker
 * can find more. */
static bool take(struct find *s, struct nfs4_fh *fh)
{
	pthread_mutex_lock(&s->lock);
	while (s->n == 0 && s->busy > 0)
		pthread_cond_wait(&s->cond, &s->lock);
	if (s->n == 0) {
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	*fh = s->stack[--s->n];
	s->busy++;
	pthread_mutex_unlock(&s->lock);
	return true;
}

static void find_worker(void *arg, unsigned k)
{
	struct find *s = arg;
	struct nfs4_fh fh;

	while (take(s, &fh)) {
		list_dir(s, k, &fh);
		pthread_mutex_lock(&s->lock);
		s->busy--;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
}

void find_run(struct client *cl, void *state)
{
	struct find *s = state;

	push(s, &cl->dir);
	cl->t_start = realtime_now();
	run_workers(cl->nslots, find_worker, s);
	cl->t_end = realtime_now();
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s->stack);
	free(s);
}
