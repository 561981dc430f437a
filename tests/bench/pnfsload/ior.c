/* IOR-like sequential I/O: a file per client (<dir>/ior.<client>, pattern
 * seed client + 1) or one shared file (<dir>/ior.shared, seed 0) where
 * client i owns bytes [i * block, (i + 1) * block), or, with --interleave
 * R (IO500's ior-hard), transfer j of client i is at (j * R + i) *
 * transfer, every client's transfers between the others'.  Through a layout
 * writes go to every mirror and reads to one; without one, through the
 * MDS.  A recalled layout is given back once the data-server calls in
 * flight are done (after COMMIT and LAYOUTCOMMIT of what it wrote); the
 * rest of the transfers go through the MDS. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnfsload.h"

struct ior {
	struct client *cl;
	struct open_file f;
	char name[64];
	uint64_t base;
	uint64_t seed;
	bool layout;
	uint64_t next; /* next transfer, taken atomically */
	uint64_t ntransfers;
	double stop_at;           /* CLOCK_REALTIME of the stonewall, 0: none */
	pthread_rwlock_t ds_lock; /* read: a DS transfer; write: giving the layout back */
	int holding;              /* atomic: a layout is out and not recalled */
	uint64_t ds_end;          /* atomic: end of the highest DS write */
	bool mds_wrote;
	pthread_mutex_t slot_lock[MAX_DEPTH]; /* MDS slots of the workers */
	struct recall_hook hook;
};

void *ior_setup(struct client *cl)
{
	const struct options *o = cl->opt;
	struct ior *s = calloc(1, sizeof(*s));
	bool write = o->phase == PH_WRITE;

	if (!s)
		die("out of memory");
	s->cl = cl;
	if (o->shared)
		snprintf(s->name, sizeof(s->name), "ior.shared");
	else
		snprintf(s->name, sizeof(s->name), "ior.%u", cl->idx);
	s->base = !o->shared      ? 0
		  : o->interleave ? (uint64_t)cl->idx * o->transfer
				  : (uint64_t)cl->idx * o->block;
	s->seed = o->shared ? 0 : (uint64_t)cl->idx + 1;
	s->ntransfers = (o->block + o->transfer - 1) / o->transfer;
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	/* Workers keep taking the read side: the return must not starve. */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->ds_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	for (unsigned k = 0; k < MAX_DEPTH; k++)
		pthread_mutex_init(&s->slot_lock[k], NULL);
	ns_open(cl, 0, &cl->dir, s->name, write,
		write ? OPEN4_SHARE_ACCESS_BOTH : OPEN4_SHARE_ACCESS_READ, &s->f);
	return s;
}

static uint32_t transfer_at(const struct ior *s, uint64_t i, uint64_t *off)
{
	const struct options *o = s->cl->opt;
	uint64_t rel = i * o->transfer, left = o->block - rel;

	*off = s->base + (o->interleave ? rel * o->interleave : rel);
	return left < o->transfer ? (uint32_t)left : o->transfer;
}

/* Bytes from the client's first to past its last: its segment, or with
 * --interleave the span its transfers are spread over. */
static uint64_t span(const struct ior *s)
{
	uint64_t off;
	uint32_t count = transfer_at(s, s->ntransfers - 1, &off);

	return off + count - s->base;
}

static void verify(const struct ior *s, const uint8_t *data, uint64_t off, uint32_t count,
		   const char *via)
{
	uint64_t bad = pattern_check(data, off, count, s->seed);

	if (bad != UINT64_MAX)
		cl_die(s->cl,
		       "READ %s offset %" PRIu64 " (%s): data mismatch at file offset %" PRIu64,
		       s->name, off, via, bad);
}

static void ds_fail(struct ior *s, unsigned k, unsigned t, uint64_t off, uint32_t count, int err,
		    uint32_t opnum)
{
	lo_return_error(s->cl, k, &s->f, t, off, count, err, opnum);
	cl_die(s->cl, "%s %s offset %" PRIu64 " on %s: %s (%d)", nfs4_op_name(opnum), s->name, off,
	       s->f.targets[t].conn->name, ds_strerror(err), err);
}

static void ds_read_piece(struct ior *s, unsigned k, uint64_t off, uint32_t count, uint8_t *buf)
{
	struct client *cl = s->cl;
	/* Clients, and rows of stripe units, take turns over the mirrors:
	 * each client reads every component of the file equally. */
	uint64_t row = s->f.stripe_unit ? off / s->f.stripe_unit / s->f.columns : 0;
	unsigned t = lo_target(&s->f, (unsigned)((cl->idx + row) % s->f.mirrors), off);
	const uint8_t *data;
	int err;

	if ((err = ds_read(&s->f.targets[t], k, off, count, buf, count + REPLY_SLACK, &data)))
		ds_fail(s, k, t, off, count, err, OP_READ);
	if (cl->opt->verify)
		verify(s, data, off, count, s->f.targets[t].conn->name);
}

/* One transfer through the layout, split at stripe-unit boundaries. */
static void ds_transfer(struct ior *s, unsigned k, uint64_t off, uint32_t count, uint8_t *buf,
			uint8_t *rbufs)
{
	struct client *cl = s->cl;
	bool read = cl->opt->phase == PH_READ;
	uint64_t end;

	if (read) {
		for (uint32_t done = 0, n; done < count; done += n) {
			n = ds_piece(&s->f, off + done, count - done);
			ds_read_piece(s, k, off + done, n, buf);
		}
	} else {
		uint32_t stable = cl->opt->fsync ? FILE_SYNC4 : UNSTABLE4;
		unsigned t;
		int err;

		pattern_fill(buf, off, count, s->seed);
		if ((err = ds_write_mirrors(&s->f, k, off, buf, count, stable, rbufs, &t)))
			ds_fail(s, k, t, off, count, err, OP_WRITE);
	}
	stats_add(&cl->st->ds_io_bytes, (uint64_t)count * (read ? 1 : s->f.mirrors));
	if (read)
		return;
	end = __atomic_load_n(&s->ds_end, __ATOMIC_RELAXED);
	while (end < off + count &&
	       !__atomic_compare_exchange_n(&s->ds_end, &end, off + count, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

static void mds_transfer(struct ior *s, unsigned k, uint64_t off, uint32_t count, uint8_t *buf,
			 uint8_t *rbuf)
{
	struct client *cl = s->cl;
	struct compound c;

	if (cl->opt->phase == PH_READ) {
		const uint8_t *data;
		uint32_t len;
		bool eof;

		cl_begin(cl, &c, k, 2, buf, count + REPLY_SLACK);
		c4_putfh(&c.w, &s->f.fh);
		c4_read(&c.w, &s->f.open_sid, off, count);
		cl_call(cl, &c, "READ");
		cl_op(cl, &c, OP_PUTFH, 0);
		cl_op(cl, &c, OP_READ, 0);
		cl_check(cl, d4_read(&c.r, &eof, &data, &len), OP_READ);
		if (len != count)
			cl_die(cl, "READ %s offset %" PRIu64 ": %u of %u bytes (file too short?)",
			       s->name, off, len, count);
		if (cl->opt->verify)
			verify(s, data, off, count, "MDS");
	} else {
		s->mds_wrote = true;
		pattern_fill(buf, off, count, s->seed);
		mds_write(cl, k, &s->f, s->name, off, buf, count,
			  cl->opt->fsync ? FILE_SYNC4 : UNSTABLE4, rbuf);
	}
	stats_add(&cl->st->mds_io_bytes, count);
}

/* A transfer through the layout while it is held; false when there is
 * none (never granted, or recalled). */
static bool ds_transfer_if_held(struct ior *s, unsigned k, uint64_t off, uint32_t count,
				uint8_t *buf, uint8_t *rbufs)
{
	bool held;

	if (!__atomic_load_n(&s->holding, __ATOMIC_ACQUIRE))
		return false;
	pthread_rwlock_rdlock(&s->ds_lock);
	held = s->f.has_layout && __atomic_load_n(&s->holding, __ATOMIC_ACQUIRE);
	if (held)
		ds_transfer(s, k, off, count, buf, rbufs);
	pthread_rwlock_unlock(&s->ds_lock);
	return held;
}

static void ior_worker(void *arg, unsigned k)
{
	struct ior *s = arg;
	uint32_t cap = s->cl->opt->transfer + REPLY_SLACK;
	uint8_t *buf = malloc(cap), *rbufs = malloc((size_t)(s->f.ntargets + 1) * CTL_BUF);

	if (!buf || !rbufs)
		die("out of memory");
	for (;;) {
		uint64_t i, off;
		uint32_t count;

		/* Checked before taking a transfer: one taken is always done,
		 * so a stonewalled write leaves no hole. */
		if (s->stop_at > 0 && realtime_now() >= s->stop_at)
			break;
		i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
		if (i >= s->ntransfers)
			break;
		count = transfer_at(s, i, &off);
		if (!ds_transfer_if_held(s, k, off, count, buf, rbufs)) {
			unsigned slot = k % s->cl->nslots;

			pthread_mutex_lock(&s->slot_lock[slot]);
			mds_transfer(s, slot, off, count, buf, rbufs);
			pthread_mutex_unlock(&s->slot_lock[slot]);
		}
		stats_add(&s->cl->st->bytes, count);
		stats_add(&s->cl->st->ops, 1);
	}
	free(buf);
	free(rbufs);
}

/* COMMIT and LAYOUTCOMMIT what went to the data servers, then
 * LAYOUTRETURN; once no DS call is in flight. */
static void finish_layout(struct ior *s, unsigned slot)
{
	struct client *cl = s->cl;
	uint8_t rbuf[CTL_BUF];
	uint64_t end;
	int err;

	__atomic_store_n(&s->holding, 0, __ATOMIC_RELEASE);
	pthread_rwlock_wrlock(&s->ds_lock);
	end = __atomic_load_n(&s->ds_end, __ATOMIC_RELAXED);
	if (s->f.has_layout && end > s->base) {
		for (unsigned m = 0; m < s->f.ntargets && !cl->opt->fsync; m++)
			if ((err = ds_commit(&s->f.targets[m], 0, rbuf, sizeof(rbuf))))
				ds_fail(s, slot, m, 0, 0, err, OP_COMMIT);
		lo_commit(cl, slot, &s->f, s->base, end - s->base);
	}
	lo_return(cl, slot, &s->f);
	pthread_rwlock_unlock(&s->ds_lock);
}

static bool recall_matches(void *arg, const struct nfs4_fh *fh, const struct pando_stateid *sid)
{
	struct ior *s = arg;

	if (!lo_recall_is_ours(&s->f, fh, sid))
		return false;
	return __atomic_exchange_n(&s->holding, 0, __ATOMIC_ACQ_REL) == 1;
}

static void recall_give_back(void *arg, unsigned slot)
{
	finish_layout(arg, slot);
}

static void commit_through_mds(struct ior *s)
{
	struct client *cl = s->cl;
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	if (cl->opt->fsync || !s->mds_wrote)
		return;
	cl_begin(cl, &c, 0, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, &s->f.fh);
	c4_commit(&c.w, 0, 0);
	cl_call(cl, &c, "COMMIT");
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_op(cl, &c, OP_COMMIT, 0);
	cl_check(cl, d4_commit(&c.r), OP_COMMIT);
}

void ior_run(struct client *cl, void *state)
{
	struct ior *s = state;
	bool write = cl->opt->phase == PH_WRITE;

	s->hook = (struct recall_hook){ recall_matches, recall_give_back, s };
	cl->t_start = realtime_now();
	if (cl->opt->stonewall_s > 0)
		s->stop_at = (cl->opt->start_at > 0 ? cl->opt->start_at : cl->t_start) +
			     cl->opt->stonewall_s;
	cl_set_recall_hook(cl, &s->hook);
	/* The size Linux would weigh against the threshold: the file's end
	 * after this client's segment. */
	s->layout = cl->pnfs && !lo_below_threshold(&s->f, write, s->base + span(s)) &&
		    lo_get(cl, 0, &s->f, write ? LAYOUTIOMODE4_RW : LAYOUTIOMODE4_READ, s->base,
			   span(s)) > 0;
	__atomic_store_n(&s->holding, s->layout, __ATOMIC_RELEASE);
	if (cl->opt->transfer + 512 > (write ? cl->maxrequest : cl->maxresponse))
		cl_die(cl, "--transfer %u is more than the MDS session takes (%u)",
		       cl->opt->transfer, write ? cl->maxrequest : cl->maxresponse);
	run_workers(s->layout ? cl->opt->depth : cl->nslots, ior_worker, s);
	finish_layout(s, 0);
	cl_set_recall_hook(cl, NULL);
	commit_through_mds(s);
	ns_close(cl, 0, &s->f);
	cl->t_end = realtime_now();
	free(s);
}
