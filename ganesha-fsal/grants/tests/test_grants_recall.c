/* pando_grants: recalls, deadlines, fences and recall counts, on a fake clock. */
#include "check.h"
#include "fake_ops.h"

#include <errno.h>

static void a_recall_with_nothing_out_sends_nothing(void)
{
	struct fake fk;

	fake_grants(&fk);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "test"), 0);
	CHECK_EQ(fk.nrecalls, 0);
	CHECK_EQ(fake_stats(&fk).recalls, 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void a_recall_sends_one_up_call_and_refuses_grants_until_returned(void)
{
	struct fake fk;
	struct pando_grant *s, *t = NULL;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "truncate"), -EBUSY);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "truncate"), -EBUSY);
	CHECK_EQ(fk.nrecalls, 1); /* one up-call per recall */
	CHECK_EQ(fk.recalls[0].ino, 5);
	CHECK_EQ(fk.recalls[0].gen, 7);
	CHECK_EQ(fk.recalls[0].scope, PANDO_RECALL_ALL);
	CHECK(fk.recalls[0].client == NULL);
	CHECK_EQ(fake_stats(&fk).recalls, 1);
	CHECK(s->recalled);
	CHECK(pando_grants_busy(fk.g, 5));
	CHECK_EQ(fake_grant(&fk, 5, 4, false, &t), -EAGAIN);
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &t), -EAGAIN);
	CHECK_EQ(fk.nmarks, 1); /* refused before any record */
	CHECK_EQ(fake_stats(&fk).segments, 1);
	pando_grant_end(s);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "truncate"), 0);
	/* Back before the deadline: granted again at once, nobody fenced. */
	CHECK_EQ(fake_grant(&fk, 5, 4, false, &t), 0);
	fk.now += 60;
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 0);
	CHECK_EQ(fake_stats(&fk).fenced, 0);
	pando_grant_end(t);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void a_recall_leaves_the_callers_own_segments_out(void)
{
	struct fake fk;
	struct pando_grant *mine, *theirs;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &mine);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 3, false, "setattr"), 0);
	CHECK_EQ(fk.nrecalls, 0);
	fake_grant(&fk, 5, 4, true, &theirs);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 3, false, "setattr"), -EBUSY);
	CHECK_EQ(fk.recalls[0].scope, PANDO_RECALL_ALL_BUT);
	CHECK_EQ(fk.recalls[0].clientid, 3);
	CHECK(!mine->recalled && theirs->recalled);
	pando_grant_end(theirs);
	pando_grant_end(mine);
	fake_free(&fk);
}

static void a_writers_only_recall_leaves_readers_alone(void)
{
	struct fake fk;
	struct pando_grant *r;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &r);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, true, "set-id"), 0);
	CHECK(!r->recalled);
	CHECK_EQ(fake_stats(&fk).recalls, 0);
	pando_grant_end(r);
	fake_free(&fk);
}

static void a_holder_past_the_deadline_is_fenced_and_no_longer_counts(void)
{
	struct fake fk;
	struct pando_grant *s, *t;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &s);
	pando_grants_recall_file(fk.g, 5, 0, false, "truncate");
	fk.now += 9;
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 0); /* not yet */
	fk.now += 1;
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 1);
	CHECK_EQ(fk.fenced_ino[0], 5);
	CHECK_EQ(fk.fenced_cur[0], 1); /* the version its handles carry */
	CHECK(s->fenced);
	CHECK_EQ(fake_stats(&fk).fenced, 1);
	CHECK(fk.logs > 0);
	CHECK(pando_grants_stale(fk.g, s));
	/* A fenced segment holds nothing back: the change proceeds... */
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "truncate"), 0);
	/* ... and new grants carry the new version. */
	CHECK_EQ(fake_grant(&fk, 5, 4, false, &t), 0);
	CHECK_EQ(pando_grants_cap_version(fk.g, 5), 2);
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 1); /* once */
	/* Its late return counts, and asks for no size check. */
	pando_grant_end(s);
	CHECK_EQ(fk.settles[5], 0);
	CHECK_EQ(fake_stats(&fk).returned, 1);
	CHECK_EQ(fake_stats(&fk).segments, 1);
	pando_grant_end(t);
	CHECK_EQ(fake_stats(&fk).files, 0);
	CHECK_EQ(fk.marked[5], 0);
	fake_free(&fk);
}

static void a_fence_that_cannot_read_the_map_is_tried_again(void)
{
	struct fake fk;
	struct pando_grant *s;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &s);
	pando_grants_recall_file(fk.g, 5, 0, false, "truncate");
	fk.now += 10;
	fk.fence_rc = -EIO;
	pando_grants_tick(fk.g);
	CHECK(!s->fenced);
	CHECK(pando_grants_busy(fk.g, 5));
	fk.fence_rc = 0;
	pando_grants_tick(fk.g);
	CHECK(s->fenced);
	CHECK(!pando_grants_busy(fk.g, 5));
	pando_grant_end(s);
	fake_free(&fk);
}

static void a_recall_makes_older_segments_unable_to_grow_the_file(void)
{
	struct fake fk;
	struct pando_grant *old, *young;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &old);
	CHECK(!pando_grants_stale(fk.g, old));
	/* A map change (rebuild, transcode) recalls the file. */
	pando_grants_recall_file(fk.g, 5, 0, false, "rebuilt");
	CHECK(pando_grants_stale(fk.g, old));
	/* The old segment is not returned yet; another client's grant waits. */
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &young), -EAGAIN);
	fk.now += 10;
	pando_grants_tick(fk.g);
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &young), 0);
	CHECK(!pando_grants_stale(fk.g, young));
	CHECK(pando_grants_stale(fk.g, old));
	/* A segment from before the recall ends without a size check. */
	pando_grant_end(old);
	CHECK_EQ(fk.settles[5], 0);
	pando_grants_committed(fk.g, 5);
	pando_grant_end(young);
	CHECK_EQ(fk.settles[5], 0);
	fake_free(&fk);
}

static void an_unreachable_osd_recalls_the_files_that_use_it(void)
{
	struct fake fk;
	struct pando_grant *a, *b;

	fake_grants(&fk);
	fk.down_osd = 2;
	fake_grant(&fk, 5, 3, false, &a);   /* uses OSD 2 (fake: ino < 100) */
	fake_grant(&fk, 500, 3, false, &b); /* does not */
	pando_grants_recall_osd(fk.g, 2, "osd down");
	CHECK_EQ(fk.nrecalls, 1);
	CHECK_EQ(fk.recalls[0].ino, 5);
	CHECK(a->recalled && !b->recalled);
	pando_grants_recall_osd(fk.g, 9, "osd down");
	CHECK_EQ(fk.nrecalls, 1);
	pando_grant_end(a);
	pando_grant_end(b);
	fake_free(&fk);
}

static void a_client_recall_names_the_holder_in_each_file(void)
{
	struct fake fk;
	struct pando_grant *a, *b, *c;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &a);
	fake_grant(&fk, 6, 3, true, &b);
	fake_grant(&fk, 7, 4, true, &c);
	CHECK_EQ(pando_grants_recall_client(fk.g, "10.0.0.3", "admin"), 2);
	CHECK_EQ(fk.nrecalls, 2);
	CHECK_EQ(fk.recalls[0].scope, PANDO_RECALL_ONLY);
	CHECK_EQ(fk.recalls[0].clientid, 3);
	CHECK(!c->recalled);
	CHECK_EQ(pando_grants_recall_client(fk.g, "", "admin"), 3);
	CHECK_EQ(fk.recalls[fk.nrecalls - 1].scope, PANDO_RECALL_ALL);
	CHECK(c->recalled);
	CHECK_EQ(fake_stats(&fk).recalls, 3); /* one per file */
	pando_grant_end(a);
	pando_grant_end(b);
	pando_grant_end(c);
	fake_free(&fk);
}

/* A recall arriving while a write grant's record is being written. */
static void recall_during_mark(struct fake *fk, uint64_t ino)
{
	CHECK_EQ(pando_grants_recall_file(fk->g, ino, 0, false, "race"), -EBUSY);
}

static void a_recall_racing_a_write_grant_refuses_it_and_drops_its_record(void)
{
	struct fake fk;
	struct pando_grant *r, *w = NULL;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &r);
	fk.during_mark = recall_during_mark;
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &w), -EAGAIN);
	CHECK(w == NULL);
	CHECK_EQ(fk.marked[5], 0);
	/* Refused at once while the recall runs: no record written. */
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &w), -EAGAIN);
	CHECK_EQ(fk.nmarks, 1);
	CHECK_EQ(fake_stats(&fk).segments, 1);
	pando_grant_end(r);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

/* Another client's write segment that comes and goes while a grant's
 * record is being written must not delete the record under it. */
static void grant_and_end_during_mark(struct fake *fk, uint64_t ino)
{
	struct pando_grant *s;

	CHECK_EQ(fake_grant(fk, ino, 3, true, &s), 0);
	pando_grants_committed(fk->g, ino);
	pando_grant_end(s);
}

static void a_write_segment_ending_while_another_is_recorded_keeps_the_record(void)
{
	struct fake fk;
	struct pando_grant *w;

	fake_grants(&fk);
	fk.during_mark = grant_and_end_during_mark;
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &w), 0);
	CHECK_EQ(fk.marked[5], 1);
	pando_grants_committed(fk.g, 5);
	pando_grant_end(w);
	CHECK_EQ(fk.marked[5], 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

/* Ganesha revoked a write segment (its recall could not be delivered):
 * the holder never returned it and may write on with its handles, so the
 * file is fenced at the next tick, and nothing is granted before. */
static void a_revoked_write_segment_is_fenced_before_the_next_grant(void)
{
	struct fake fk;
	struct pando_grant *w, *r, *t = NULL;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &w);
	fake_grant(&fk, 6, 3, false, &r);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "gateway write"), -EBUSY);
	pando_grant_revoked(w);
	pando_grant_revoked(r); /* a read segment writes nothing */
	CHECK_EQ(fake_stats(&fk).segments, 0);
	CHECK_EQ(fake_grant(&fk, 5, 4, true, &t), -EAGAIN);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "gateway write"), -EBUSY);
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 1);
	CHECK_EQ(fk.fenced_ino[0], 5);
	CHECK_EQ(fake_stats(&fk).fenced, 1);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "gateway write"), 0);
	CHECK_EQ(fake_grant(&fk, 5, 4, false, &t), 0);
	pando_grant_end(t);
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 1);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

int main(void)
{
	a_recall_with_nothing_out_sends_nothing();
	a_recall_sends_one_up_call_and_refuses_grants_until_returned();
	a_recall_leaves_the_callers_own_segments_out();
	a_writers_only_recall_leaves_readers_alone();
	a_holder_past_the_deadline_is_fenced_and_no_longer_counts();
	a_fence_that_cannot_read_the_map_is_tried_again();
	a_recall_makes_older_segments_unable_to_grow_the_file();
	an_unreachable_osd_recalls_the_files_that_use_it();
	a_client_recall_names_the_holder_in_each_file();
	a_recall_racing_a_write_grant_refuses_it_and_drops_its_record();
	a_write_segment_ending_while_another_is_recorded_keeps_the_record();
	a_revoked_write_segment_is_fenced_before_the_next_grant();
	CHECK_DONE();
}
