/* A writer that rides through failures as a kernel client's application
 * does (tests/bench/mds_restart, tests/bench/soak).  Each client writes
 * <dir>/ior.<client> (pattern seed client + 1) or, with --shared, its
 * part [client * block, (client + 1) * block) of <dir>/ior.shared (seed
 * 0), one --transfer at a time: FILE_SYNC to every mirror, then
 * LAYOUTCOMMIT (what an fsync is over pNFS), then a line `progress CLIENT
 * SECONDS BYTES` on stdout (CLOCK_MONOTONIC, bytes of its part
 * acknowledged so far).  Where Linux would, it goes through the MDS
 * instead (FILE_SYNC WRITE): a refused layout (an RS file; none is asked
 * for again for LAYOUT_RETRY_S), and a data server that failed, which is
 * reported in LAYOUTRETURN first (the next transfer asks for a new
 * layout).  When the MDS lost the session, cl_call makes a new one; the
 * writer then opens the file again and writes the unacknowledged transfer
 * again.  A recalled layout is returned between transfers.  Anything else
 * the MDS refuses is an error an application would see: the writer dies
 * with it.  Stops after --block bytes or at SIGTERM/SIGINT; --pace MS: at
 * most one transfer per MS. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pnfsload.h"

/* After a refused LAYOUTGET, writes go through the MDS this long before
 * the next ask (Linux waits 120 s after LAYOUTUNAVAILABLE and asks again
 * at the next pass after the other refusals: this is in between). */
#define LAYOUT_RETRY_S 10.0

struct writer {
	struct client *cl;
	struct open_file f;
	char name[64];
	uint64_t base; /* file offset of the client's part */
	uint64_t seed;
	bool open;
	uint64_t done;    /* bytes of the part acknowledged */
	double ask_after; /* monotonic: no LAYOUTGET before then */
	int recalled;     /* atomic */
	struct recall_hook hook;
	uint8_t *buf;
	uint8_t rbufs[MAX_DEVICES * 1024];
};

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static bool recall_matches(void *arg, const struct nfs4_fh *fh, const struct pando_stateid *sid)
{
	struct writer *s = arg;

	if (!lo_recall_is_ours(&s->f, fh, sid))
		return false;
	__atomic_store_n(&s->recalled, 1, __ATOMIC_RELEASE);
	return true;
}

void *writer_setup(struct client *cl)
{
	struct writer *s = calloc(1, sizeof(*s));

	if (!s || !(s->buf = malloc(cl->opt->transfer)))
		die("out of memory");
	s->cl = cl;
	if (cl->opt->shared) {
		snprintf(s->name, sizeof(s->name), "ior.shared");
		s->base = (uint64_t)cl->idx * cl->opt->block;
	} else {
		snprintf(s->name, sizeof(s->name), "ior.%u", cl->idx);
		s->seed = (uint64_t)cl->idx + 1;
	}
	/* No renewer runs (this thread alone owns the session, to make it
	 * again): the writer returns a recalled layout itself. */
	s->hook = (struct recall_hook){ recall_matches, NULL, s };
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	return s;
}

/* The OPEN (made at the first) and, unless refused lately, a RW layout of
 * the rest of the part: 0, or -ESTALE when the session was lost. */
static int open_with_layout(struct writer *s)
{
	struct client *cl = s->cl;
	int got;

	if (!s->open && ns_open(cl, 0, &cl->dir, s->name, true, OPEN4_SHARE_ACCESS_BOTH, &s->f))
		return -ESTALE;
	s->open = true;
	if (s->f.has_layout || monotonic_now() < s->ask_after)
		return 0;
	__atomic_store_n(&s->recalled, 0, __ATOMIC_RELEASE);
	got = lo_get(cl, 0, &s->f, LAYOUTIOMODE4_RW, s->base + s->done, cl->opt->block - s->done);
	if (got < 0)
		return got;
	if (got == 0)
		s->ask_after = monotonic_now() + LAYOUT_RETRY_S;
	return 0;
}

/* What the MDS forgot (it restarted): open file and layout. */
static void forget_state(struct writer *s)
{
	lo_forget(&s->f);
	s->open = false;
}

static int write_through_mds(struct writer *s, uint64_t off, uint32_t n)
{
	if (mds_write(s->cl, 0, &s->f, s->name, off, s->buf, n, FILE_SYNC4, s->rbufs))
		return -ESTALE;
	stats_add(&s->cl->st->mds_io_bytes, n);
	return 0;
}

/* A data server failed under a write: reported in LAYOUTRETURN, then the
 * transfer goes through the MDS, as Linux resends it. */
static int ds_failed(struct writer *s, unsigned t, uint64_t off, uint32_t n, int err)
{
	cl_note(s->cl,
		"WRITE %s offset %" PRIu64 " on %s: %s (%d); reported, written through "
		"the MDS",
		s->name, off, s->f.targets[t].conn->name, ds_strerror(err), err);
	stats_add(&s->cl->st->ds_errors, 1);
	if (lo_return_error(s->cl, 0, &s->f, t, off, n, err, OP_WRITE))
		return -ESTALE;
	return write_through_mds(s, off, n);
}

static int write_through_layout(struct writer *s, uint64_t off, uint32_t n)
{
	unsigned t;
	int err;

	if ((err = ds_write_mirrors(&s->f, 0, off, s->buf, n, FILE_SYNC4, s->rbufs, &t)))
		return ds_failed(s, t, off, n, err);
	if (lo_commit(s->cl, 0, &s->f, off, n))
		return -ESTALE;
	stats_add(&s->cl->st->ds_io_bytes, (uint64_t)n * s->f.mirrors);
	return 0;
}

/* The next transfer, made durable one way or the other. */
static int write_next(struct writer *s)
{
	struct client *cl = s->cl;
	uint64_t off = s->base + s->done, left = cl->opt->block - s->done;
	uint32_t n = left < cl->opt->transfer ? (uint32_t)left : cl->opt->transfer;
	int err;

	pattern_fill(s->buf, off, n, s->seed);
	err = s->f.has_layout ? write_through_layout(s, off, n) : write_through_mds(s, off, n);
	if (err)
		return err;
	s->done += n;
	stats_add(&cl->st->bytes, n);
	stats_add(&cl->st->ops, 1);
	printf("progress %u %.6f %" PRIu64 "\n", cl->idx, monotonic_now(), s->done);
	fflush(stdout);
	return 0;
}

/* Waits for *next, then sets it pace_ms from now: a writer back from a
 * stall does not catch up in a burst. */
static void pace(const struct options *o, struct timespec *next)
{
	if (!o->pace_ms)
		return;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
	clock_gettime(CLOCK_MONOTONIC, next);
	next->tv_nsec += (long)o->pace_ms * 1000000L;
	next->tv_sec += next->tv_nsec / 1000000000L;
	next->tv_nsec %= 1000000000L;
}

static int step(struct writer *s)
{
	if (__atomic_load_n(&s->recalled, __ATOMIC_ACQUIRE) && lo_return(s->cl, 0, &s->f))
		return -ESTALE;
	if (open_with_layout(s))
		return -ESTALE;
	return write_next(s);
}

void writer_run(struct client *cl, void *state)
{
	struct writer *s = state;
	struct timespec next;

	cl->t_start = realtime_now();
	cl_set_recall_hook(cl, &s->hook);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stopping && s->done < cl->opt->block) {
		pace(cl->opt, &next);
		if (step(s))
			forget_state(s);
	}
	cl_set_recall_hook(cl, NULL);
	lo_return(cl, 0, &s->f);
	if (s->open)
		ns_close(cl, 0, &s->f);
	cl->t_end = realtime_now();
	free(s->buf);
	free(s);
}
