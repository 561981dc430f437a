/* LAYOUTGETs in a loop, for the MDS's memory per LAYOUTGET
 * (tests/bench/layoutget_leak): --layoutget N READ layouts of
 * <dir>/ior.<client> (a file --ior write made), one --transfer-sized
 * segment at a time as Linux asks for stripe units: the first of a pass
 * over the file's --block bytes with the open stateid, the rest with the
 * layout stateid (standalone LAYOUTGETs), then LAYOUTRETURN of the file. */
#include <stdio.h>
#include <stdlib.h>

#include "pnfsload.h"

struct lgloop {
	struct open_file f;
	char name[64];
};

void *layoutget_setup(struct client *cl)
{
	struct lgloop *s = calloc(1, sizeof(*s));

	if (!s)
		die("out of memory");
	snprintf(s->name, sizeof(s->name), "ior.%u", cl->idx);
	ns_open(cl, 0, &cl->dir, s->name, false, OPEN4_SHARE_ACCESS_READ, &s->f);
	if (!cl->pnfs)
		cl_die(cl, "--layoutget: the MDS hands out no layouts");
	return s;
}

/* LAYOUTGET of [off, off + len), decoded; the layout replaces the last. */
static void get_segment(struct client *cl, struct lgloop *s, uint64_t off, uint32_t len)
{
	const struct pando_stateid *sid = s->f.has_layout ? &s->f.layout_sid : &s->f.open_sid;
	uint8_t rbuf[CTL_BUF];
	struct nfs4_layout_res res;
	struct compound c;

	cl_begin(cl, &c, 0, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, &s->f.fh);
	c4_layoutget(&c.w, LAYOUTIOMODE4_READ, off, len, len, sid, CTL_BUF - 1024);
	cl_call(cl, &c, "LAYOUTGET");
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_op(cl, &c, OP_LAYOUTGET, 0);
	cl_check(cl, d4_layoutget(&c.r, &res), OP_LAYOUTGET);
	lo_forget(&s->f);
	if (pando_ff_layout_decode(res.body, res.body_len, &s->f.layout))
		cl_die(cl, "LAYOUTGET %s offset %llu: malformed ff_layout4", s->name,
		       (unsigned long long)off);
	s->f.has_layout = true;
	s->f.iomode = LAYOUTIOMODE4_READ;
	s->f.layout_sid = res.stateid;
	stats_add(&cl->st->layouts, 1);
	stats_add(&cl->st->ops, 1);
}

void layoutget_run(struct client *cl, void *state)
{
	struct lgloop *s = state;
	uint64_t left = cl->opt->layoutgets;

	cl->t_start = realtime_now();
	while (left) {
		for (uint64_t off = 0; off < cl->opt->block && left;
		     off += cl->opt->transfer, left--)
			get_segment(cl, s, off, cl->opt->transfer);
		lo_return(cl, 0, &s->f);
	}
	ns_close(cl, 0, &s->f);
	cl->t_end = realtime_now();
	free(s);
}
