/* pando_grants: a holder's write handles end with its last write segment
 * of the file, against a fake clock and recording callbacks. */
#include "check.h"
#include "fake_ops.h"

#include <errno.h>

static void the_last_write_segment_back_revokes_its_holders_write_handles(void)
{
	struct fake fk;
	struct pando_grant *s;

	fake_grants(&fk);
	CHECK_EQ(fake_grant(&fk, 5, 3, true, &s), 0);
	pando_grants_committed(fk.g, 5); /* no size check keeps the file */
	pando_grant_end(s);
	CHECK_EQ(fk.nrevokes, 1);
	CHECK_EQ(fk.revoked_ino[0], 5);
	CHECK_EQ(fk.revoked_cur[0], 1); /* the version it was granted with */
	CHECK_EQ(fk.nfences, 0);
	CHECK_EQ(fake_stats(&fk).files, 0);
	fake_free(&fk);
}

static void a_holder_keeps_its_write_handles_while_it_holds_another_write_segment(void)
{
	struct fake fk;
	struct pando_grant *a, *b, *r;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &a);
	fake_grant(&fk, 5, 3, true, &b);
	fake_grant(&fk, 5, 3, false, &r);
	pando_grant_end(a);
	CHECK_EQ(fk.nrevokes, 0);
	pando_grant_end(r); /* a read segment revokes nothing */
	CHECK_EQ(fk.nrevokes, 0);
	pando_grant_end(b);
	CHECK_EQ(fk.nrevokes, 1);
	fake_free(&fk);
}

/* Their handles are the same version as mine: revoking mine would take
 * theirs too, in the middle of their writes. */
static void a_return_while_another_holder_writes_leaves_the_revocation_to_the_last_writer(void)
{
	struct fake fk;
	struct pando_grant *mine, *theirs;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &mine);
	fake_grant(&fk, 5, 4, true, &theirs);
	pando_grant_end(mine);
	CHECK_EQ(fk.nrevokes, 0);
	CHECK_EQ(fk.nfences, 0);
	pando_grant_end(theirs); /* takes mine with it */
	CHECK_EQ(fk.nrevokes, 1);
	CHECK_EQ(fk.revoked_cur[0], 1);
	fake_free(&fk);
}

/* A recall must see nothing of the recalled holder land once its
 * segment is back, also while a holder the recall spared writes on. */
static void a_recalled_holders_return_revokes_while_another_holder_writes(void)
{
	struct fake fk;
	struct pando_grant *mine, *theirs;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &mine);
	fake_grant(&fk, 5, 4, true, &theirs);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 4, true, "test"), -EBUSY);
	pando_grant_end(mine);
	CHECK_EQ(fk.nrevokes, 1);
	pando_grant_end(theirs);
	fake_free(&fk);
}

static void a_return_of_handles_revoked_already_revokes_nothing(void)
{
	struct fake fk;
	struct pando_grant *a, *b;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &a);
	fake_grant(&fk, 5, 4, true, &b);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, true, "test"), -EBUSY);
	pando_grant_end(a); /* revokes b's handles too */
	CHECK_EQ(fk.nrevokes, 1);
	pando_grant_end(b); /* b gives back what the OSDs refuse */
	CHECK_EQ(fk.nrevokes, 1);
	fake_free(&fk);
}

static void grants_after_a_revocation_carry_the_new_version(void)
{
	struct fake fk;
	struct pando_grant *w, *r;

	fake_grants(&fk);
	fake_grant(&fk, 5, 4, false, &r); /* keeps the file known */
	fake_grant(&fk, 5, 3, true, &w);
	pando_grant_end(w);
	CHECK_EQ(fk.next_version, 2);
	CHECK_EQ(pando_grants_cap_version(fk.g, 5), 2);
	pando_grant_end(r);
	fake_free(&fk);
}

static void read_segments_and_fenced_segments_revoke_nothing(void)
{
	struct fake fk;
	struct pando_grant *r, *w;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, false, &r);
	pando_grant_end(r);
	fake_grant(&fk, 5, 3, true, &w);
	CHECK_EQ(pando_grants_recall_file(fk.g, 5, 0, false, "test"), -EBUSY);
	fk.now += 11;
	pando_grants_tick(fk.g); /* not back in time: fenced */
	CHECK_EQ(fk.nfences, 1);
	pando_grant_end(w);
	CHECK_EQ(fk.nrevokes, 0);
	fake_free(&fk);
}

static void a_segment_ganesha_took_is_fenced_not_revoked(void)
{
	struct fake fk;
	struct pando_grant *w;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &w);
	pando_grant_revoked(w);
	CHECK_EQ(fk.nrevokes, 0);
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 1);
	fake_free(&fk);
}

static void a_revocation_that_fails_fences_the_file_at_the_next_tick(void)
{
	struct fake fk;
	struct pando_grant *w, *r, *again = NULL;

	fake_grants(&fk);
	fake_grant(&fk, 5, 4, false, &r); /* keeps the file known */
	fake_grant(&fk, 5, 3, true, &w);
	fk.revoke_rc = -EHOSTDOWN;
	pando_grant_end(w);
	CHECK_EQ(fk.nrevokes, 1);
	CHECK_EQ(fake_grant(&fk, 5, 3, true, &again), -EAGAIN);
	pando_grants_tick(fk.g);
	CHECK_EQ(fk.nfences, 1);
	CHECK_EQ(fake_grant(&fk, 5, 3, true, &again), 0);
	pando_grant_end(again);
	pando_grant_end(r);
	fake_free(&fk);
}

static int during_revoke_rc;

static void grant_in_revocation(struct fake *fk, uint64_t ino, bool write)
{
	struct pando_grant *s = NULL;

	during_revoke_rc = fake_grant(fk, ino, 4, write, &s);
	if (s)
		pando_grant_end(s);
}

static void grant_a_writer(struct fake *fk, uint64_t ino)
{
	grant_in_revocation(fk, ino, true);
}

static void grant_a_reader(struct fake *fk, uint64_t ino)
{
	grant_in_revocation(fk, ino, false);
}

static void write_grants_wait_while_writers_are_revoked(void)
{
	struct fake fk;
	struct pando_grant *w;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &w);
	fk.during_revoke = grant_a_writer;
	pando_grant_end(w);
	CHECK_EQ(during_revoke_rc, -EAGAIN);
	fake_free(&fk);
}

static void read_grants_go_on_while_writers_are_revoked(void)
{
	struct fake fk;
	struct pando_grant *w;

	fake_grants(&fk);
	fake_grant(&fk, 5, 3, true, &w);
	fk.during_revoke = grant_a_reader;
	during_revoke_rc = -1;
	pando_grant_end(w);
	CHECK_EQ(during_revoke_rc, 0);
	fake_free(&fk);
}

int main(void)
{
	the_last_write_segment_back_revokes_its_holders_write_handles();
	a_holder_keeps_its_write_handles_while_it_holds_another_write_segment();
	a_return_while_another_holder_writes_leaves_the_revocation_to_the_last_writer();
	a_recalled_holders_return_revokes_while_another_holder_writes();
	a_return_of_handles_revoked_already_revokes_nothing();
	grants_after_a_revocation_carry_the_new_version();
	read_segments_and_fenced_segments_revoke_nothing();
	a_segment_ganesha_took_is_fenced_not_revoked();
	a_revocation_that_fails_fences_the_file_at_the_next_tick();
	write_grants_wait_while_writers_are_revoked();
	read_grants_go_on_while_writers_are_revoked();
	CHECK_DONE();
}
