/* The LAYOUTGET decision for inline files, case by case as Linux asks:
 * the OPEN-time whole-file ask, writeback asks of a page, a large folio
 * and one that ends past Inline_Max (sent only for files past the MDS
 * threshold), O_DIRECT asks, read asks, and files already on objects;
 * and a client that never fetched the threshold. */
#include <stdint.h>

#include "check.h"
#include "pando/inline_policy.h"

#define INLINE_MAX 65536u
#define PAGE 4096u
#define ALL UINT64_MAX

static enum pando_inline_verdict decide(bool write, uint64_t off, uint64_t len, uint64_t minlen,
					bool objects)
{
	struct pando_layout_ask ask = { .offset = off,
					.length = len,
					.minlength = minlen,
					.write = write,
					.knows_threshold = true };
	struct pando_inline_file f = { .objects = objects, .inline_max = INLINE_MAX };

	return pando_inline_decide(&ask, &f);
}

static enum pando_inline_verdict decide_unaware(bool write, uint64_t off, uint64_t len,
						uint64_t minlen, bool objects)
{
	struct pando_layout_ask ask = { .offset = off,
					.length = len,
					.minlength = minlen,
					.write = write,
					.knows_threshold = false };
	struct pando_inline_file f = { .objects = objects, .inline_max = INLINE_MAX };

	return pando_inline_decide(&ask, &f);
}

static void open_time_ask_on_an_empty_file_is_refused(void)
{
	/* pnfs_lgopen_prepare: offset 0, all ones, minlength one page. */
	CHECK_EQ(decide(true, 0, ALL, PAGE, false), PANDO_INLINE_REFUSE);
	CHECK_EQ(decide(true, 0, ALL, 0, false), PANDO_INLINE_REFUSE);
}

static void whole_file_ask_promising_more_than_inline_max_moves(void)
{
	/* A client that says it will use at least Inline_Max + 1 bytes. */
	CHECK_EQ(decide(true, 0, ALL, INLINE_MAX + 1, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide(true, 0, ALL, INLINE_MAX, false), PANDO_INLINE_REFUSE);
	CHECK_EQ(decide(true, INLINE_MAX, ALL, 1, false), PANDO_INLINE_MOVE);
}

static void writeback_ask_of_a_page_moves(void)
{
	/* 6.1's one-page ask for a file past the MDS threshold: the client
	 * asks for no file smaller than Inline_Max + 1. */
	CHECK_EQ(decide(true, 0, PAGE, PAGE, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide(true, INLINE_MAX - PAGE, PAGE, PAGE, false), PANDO_INLINE_MOVE);
}

static void writeback_ask_of_a_large_folio_moves(void)
{
	/* A large folio (1 MiB) from a dd bs=1M, or a page past Inline_Max. */
	CHECK_EQ(decide(true, 0, 1u << 20, PAGE, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide(true, INLINE_MAX, PAGE, PAGE, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide(true, INLINE_MAX - PAGE, 2 * PAGE, PAGE, false), PANDO_INLINE_MOVE);
}

static void o_direct_asks_follow_the_same_rule(void)
{
	/* O_DIRECT: one ask per direct request, at its first page. */
	CHECK_EQ(decide(true, 0, PAGE, PAGE, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide(true, 1u << 20, PAGE, PAGE, false), PANDO_INLINE_MOVE);
}

static void read_asks_on_inline_files_are_refused(void)
{
	/* With data to read: off pNFS for reads of this file a while. */
	CHECK_EQ(decide(false, 0, ALL, PAGE, false), PANDO_INLINE_UNAVAILABLE);
	CHECK_EQ(decide(false, 0, 1u << 20, PAGE, false), PANDO_INLINE_UNAVAILABLE);
	/* A read at or past the client's end of file: only that read. */
	CHECK_EQ(decide(false, 0, PAGE, 0, false), PANDO_INLINE_REFUSE);
}

static void files_on_objects_always_get_layouts(void)
{
	CHECK_EQ(decide(true, 0, ALL, PAGE, true), PANDO_INLINE_GRANT);
	CHECK_EQ(decide(true, 0, PAGE, PAGE, true), PANDO_INLINE_GRANT);
	CHECK_EQ(decide(false, 0, PAGE, 0, true), PANDO_INLINE_GRANT);
}

static void a_client_that_never_fetched_the_threshold_gets_what_it_asks_for(void)
{
	/* 8 KiB of a new file, read or write, whole file or not. */
	CHECK_EQ(decide_unaware(true, 0, 2 * PAGE, 2 * PAGE, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide_unaware(false, 0, 2 * PAGE, 2 * PAGE, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide_unaware(false, 0, PAGE, 0, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide_unaware(true, 0, ALL, 0, false), PANDO_INLINE_MOVE);
	CHECK_EQ(decide_unaware(false, 0, ALL, PAGE, true), PANDO_INLINE_GRANT);
}

static void reach_saturates(void)
{
	struct pando_layout_ask ask = {
		.offset = UINT64_MAX - 1, .length = 10, .minlength = 0, .write = true
	};
	struct pando_layout_ask whole = { .offset = 5, .length = ALL, .minlength = 7 };

	CHECK(pando_ask_reach(&ask) == UINT64_MAX);
	CHECK_EQ(pando_ask_reach(&whole), 12);
}

int main(void)
{
	open_time_ask_on_an_empty_file_is_refused();
	whole_file_ask_promising_more_than_inline_max_moves();
	writeback_ask_of_a_page_moves();
	writeback_ask_of_a_large_folio_moves();
	o_direct_asks_follow_the_same_rule();
	read_asks_on_inline_files_are_refused();
	files_on_objects_always_get_layouts();
	a_client_that_never_fetched_the_threshold_gets_what_it_asks_for();
	reach_saturates();
	CHECK_DONE();
}
