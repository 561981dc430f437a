/* A reader that checks what --writer clients left while they write, and
 * rides through the same failures (tests/bench/soak).  Each client opens
 * <dir>/ior.<client> (pattern seed client + 1) or, with --shared, reads
 * its part [client * block, (client + 1) * block) of <dir>/ior.shared
 * (seed 0), up to the file's size when it opened it (and at most --block
 * bytes), one --transfer at a time: through a READ layout from one mirror
 * ((client + row) % mirrors, as ior), or through the MDS without one.  A
 * data server that fails is reported in LAYOUTRETURN and the transfer
 * read through the MDS, as Linux resends it; a short reply from a data
 * server (the object ends sooner) is read through the MDS too, whose size
 * is the file's.  When the MDS lost the session the file is opened again
 * and the reading goes on where it was.
 *
 * Every byte must be the pattern or zero: a writer's part it has not
 * reached yet reads as a hole.  At the end `verified CLIENT BYTES` says
 * how much of the part is the pattern from its start, so a byte lost
 * below what the writer had acknowledged before shows as a smaller
 * number.  A byte that is neither is wrong data: the client dies naming
 * its offset. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnfsload.h"

/* After a refused LAYOUTGET, reads go through the MDS this long before
 * the next ask (as writer.c). */
#define LAYOUT_RETRY_S 10.0

struct verifier {
	struct client *cl;
	struct open_file f;
	char name[64];
	uint64_t base; /* file offset of the client's part */
	uint64_t seed;
	bool open;
	bool sized;
	uint64_t limit;   /* bytes of the part to read */
	uint64_t off;     /* bytes of the part read */
	uint64_t prefix;  /* bytes of the pattern from the part's start */
	bool holed;       /* a byte that is not the pattern came (prefix is final) */
	double ask_after; /* monotonic: no LAYOUTGET before then */
	int recalled;     /* atomic */
	struct recall_hook hook;
	uint8_t *buf;
};

static bool recall_matches(void *arg, const struct nfs4_fh *fh, const struct pando_stateid *sid)
{
	struct verifier *s = arg;

	if (!lo_recall_is_ours(&s->f, fh, sid))
		return false;
	__atomic_store_n(&s->recalled, 1, __ATOMIC_RELEASE);
	return true;
}

void *verifier_setup(struct client *cl)
{
	struct verifier *s = calloc(1, sizeof(*s));

	if (!s || !(s->buf = malloc(cl->opt->transfer + REPLY_SLACK)))
		die("out of memory");
	s->cl = cl;
	if (cl->opt->shared) {
		snprintf(s->name, sizeof(s->name), "ior.shared");
		s->base = (uint64_t)cl->idx * cl->opt->block;
	} else {
		snprintf(s->name, sizeof(s->name), "ior.%u", cl->idx);
		s->seed = (uint64_t)cl->idx + 1;
	}
	s->hook = (struct recall_hook){ recall_matches, NULL, s };
	return s;
}

/* The OPEN (and at the first, the size: what is read), then unless
 * refused lately a READ layout of the rest: 0, or -ESTALE when the
 * session was lost. */
static int open_with_layout(struct verifier *s)
{
	struct client *cl = s->cl;
	struct nfs4_attrs a;
	int got;

	if (!s->open && ns_open(cl, 0, &cl->dir, s->name, false, OPEN4_SHARE_ACCESS_READ, &s->f))
		return -ESTALE;
	s->open = true;
	if (!s->sized) {
		if (ns_getattr(cl, 0, &s->f, &a))
			return -ESTALE;
		s->limit = a.size > s->base ? a.size - s->base : 0;
		if (s->limit > cl->opt->block)
			s->limit = cl->opt->block;
		s->sized = true;
	}
	if (s->f.has_layout || monotonic_now() < s->ask_after || s->off >= s->limit)
		return 0;
	__atomic_store_n(&s->recalled, 0, __ATOMIC_RELEASE);
	got = lo_get(cl, 0, &s->f, LAYOUTIOMODE4_READ, s->base + s->off, s->limit - s->off);
	if (got < 0)
		return got;
	if (got == 0)
		s->ask_after = monotonic_now() + LAYOUT_RETRY_S;
	return 0;
}

/* Up to n bytes at off through the MDS into s->buf: how many (fewer at
 * the end of the file), or -ESTALE. */
static int64_t read_through_mds(struct verifier *s, uint64_t off, uint32_t n, const uint8_t **data)
{
	uint32_t len;
	bool eof;

	if (mds_read(s->cl, 0, &s->f, off, n, s->buf, data, &len, &eof))
		return -ESTALE;
	stats_add(&s->cl->st->mds_io_bytes, len);
	return len;
}

/* n bytes at off from one mirror of the layout; a data server that fails
 * is reported (the layout goes back) and the MDS asked instead. */
static int64_t read_through_layout(struct verifier *s, uint64_t off, uint32_t n,
				   const uint8_t **data)
{
	struct open_file *f = &s->f;
	uint64_t row = f->stripe_unit ? off / f->stripe_unit / f->columns : 0;
	unsigned t = lo_target(f, (unsigned)((s->cl->idx + row) % f->mirrors), off);
	uint32_t piece = ds_piece(f, off, n);
	int err = ds_read(&f->targets[t], 0, off, piece, s->buf, piece + REPLY_SLACK, data);

	if (!err) {
		stats_add(&s->cl->st->ds_io_bytes, piece);
		return piece;
	}
	if (err != -EREMOTEIO) {
		cl_note(s->cl,
			"READ %s offset %" PRIu64 " on %s: %s (%d); reported, read through "
			"the MDS",
			s->name, off, f->targets[t].conn->name, ds_strerror(err), err);
		stats_add(&s->cl->st->ds_errors, 1);
		if (lo_return_error(s->cl, 0, f, t, off, piece, err, OP_READ))
			return -ESTALE;
	}
	return read_through_mds(s, off, piece, data);
}

/* Each byte of [off, off + n) is the pattern or zero; the prefix grows
 * while it is all the pattern. */
static void check(struct verifier *s, const uint8_t *data, uint64_t off, uint32_t n)
{
	uint64_t hole = pattern_check(data, off, n, s->seed), bad;

	if (hole == UINT64_MAX) {
		if (!s->holed)
			s->prefix = off + n - s->base;
		return;
	}
	if (!s->holed) {
		s->prefix = hole - s->base;
		s->holed = true;
	}
	bad = pattern_or_zero_check(data + (hole - off), hole, (uint32_t)(off + n - hole), s->seed);
	if (bad != UINT64_MAX)
		cl_die(s->cl,
		       "READ %s: data mismatch at file offset %" PRIu64
		       " (neither the pattern nor a hole)",
		       s->name, bad);
}

/* The next transfer read and checked: 0, 1 at the end of the file, or
 * -ESTALE when the session was lost. */
static int step(struct verifier *s)
{
	struct client *cl = s->cl;
	const uint8_t *data;
	uint64_t off, left;
	uint32_t n;
	int64_t got;

	if (__atomic_load_n(&s->recalled, __ATOMIC_ACQUIRE) && lo_return(cl, 0, &s->f))
		return -ESTALE;
	if (open_with_layout(s))
		return -ESTALE;
	if (s->off >= s->limit)
		return 1;
	off = s->base + s->off;
	left = s->limit - s->off;
	n = left < cl->opt->transfer ? (uint32_t)left : cl->opt->transfer;
	got = s->f.has_layout ? read_through_layout(s, off, n, &data)
			      : read_through_mds(s, off, n, &data);
	if (got < 0)
		return -ESTALE;
	check(s, data, off, (uint32_t)got);
	s->off += (uint64_t)got;
	stats_add(&cl->st->bytes, (uint64_t)got);
	stats_add(&cl->st->ops, 1);
	return got == 0;
}

void verifier_run(struct client *cl, void *state)
{
	struct verifier *s = state;
	int end = 0;

	cl->t_start = realtime_now();
	cl_set_recall_hook(cl, &s->hook);
	while (!s->sized || (s->off < s->limit && end != 1)) {
		end = step(s);
		if (end < 0) {
			lo_forget(&s->f);
			s->open = false;
		}
	}
	cl_set_recall_hook(cl, NULL);
	if (!lo_return(cl, 0, &s->f) && s->open)
		ns_close(cl, 0, &s->f);
	printf("verified %u %" PRIu64 "\n", cl->idx, s->prefix);
	fflush(stdout);
	cl->t_end = realtime_now();
	free(s->buf);
	free(s);
}
