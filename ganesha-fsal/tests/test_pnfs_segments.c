/* The layout segment arithmetic of the patched src/include/pnfs_utils.h
 * (patch 0130), which LAYOUTRETURN and recalls use to decide which
 * segments a range reaches and what is left of one after a return.
 * Segments are half-open byte ranges; a length of NFS4_UINT64_MAX reaches
 * the end of the file. */
#include "config.h"
#include "pnfs_utils.h"

#include "check.h"

#define EOF_LEN NFS4_UINT64_MAX

static struct pnfs_segment seg(layoutiomode4 mode, uint64_t offset, uint64_t length)
{
	struct pnfs_segment s = { .io_mode = mode, .offset = offset, .length = length };

	return s;
}

static void check_seg(struct pnfs_segment got, uint64_t offset, uint64_t length)
{
	CHECK_EQ(got.offset, offset);
	CHECK_EQ(got.length, length);
}

static void adjacent_segments_do_not_overlap(void)
{
	struct pnfs_segment a = seg(LAYOUTIOMODE4_RW, 0, 4096);
	struct pnfs_segment b = seg(LAYOUTIOMODE4_RW, 4096, 4096);
	struct pnfs_segment tail = seg(LAYOUTIOMODE4_RW, 4096, EOF_LEN);

	CHECK(!pnfs_segments_overlap(&a, &b));
	CHECK(!pnfs_segments_overlap(&b, &a));
	CHECK(!pnfs_segments_overlap(&a, &tail));
	CHECK(!pnfs_segments_overlap(&tail, &a));
}

static void overlapping_segments_overlap(void)
{
	struct pnfs_segment whole = seg(LAYOUTIOMODE4_RW, 0, EOF_LEN);
	struct pnfs_segment mid = seg(LAYOUTIOMODE4_RW, 8192, 1);
	struct pnfs_segment last_byte = seg(LAYOUTIOMODE4_RW, 4095, 1);
	struct pnfs_segment a = seg(LAYOUTIOMODE4_RW, 0, 4096);

	CHECK(pnfs_segments_overlap(&whole, &mid));
	CHECK(pnfs_segments_overlap(&mid, &whole));
	CHECK(pnfs_segments_overlap(&a, &last_byte));
	CHECK(pnfs_segments_overlap(&last_byte, &a));
}

static void other_io_modes_and_empty_segments_never_overlap(void)
{
	struct pnfs_segment rw = seg(LAYOUTIOMODE4_RW, 0, EOF_LEN);
	struct pnfs_segment rd = seg(LAYOUTIOMODE4_READ, 0, EOF_LEN);
	struct pnfs_segment any = seg(LAYOUTIOMODE4_ANY, 0, EOF_LEN);
	struct pnfs_segment empty = seg(LAYOUTIOMODE4_RW, 0, 0);

	CHECK(!pnfs_segments_overlap(&rw, &rd));
	CHECK(pnfs_segments_overlap(&rw, &any));
	CHECK(!pnfs_segments_overlap(&rw, &empty));
}

static void a_range_that_would_wrap_reaches_the_end(void)
{
	struct pnfs_segment wraps = seg(LAYOUTIOMODE4_RW, 10, EOF_LEN - 5);
	struct pnfs_segment far = seg(LAYOUTIOMODE4_RW, EOF_LEN - 1, 1);

	CHECK_EQ(pnfs_segment_end(&wraps), EOF_LEN);
	CHECK(pnfs_segments_overlap(&wraps, &far));
}

static void returning_the_head_leaves_the_tail(void)
{
	struct pnfs_segment whole = seg(LAYOUTIOMODE4_RW, 0, EOF_LEN);
	struct pnfs_segment ranged = seg(LAYOUTIOMODE4_RW, 0, 65536);
	struct pnfs_segment head = seg(LAYOUTIOMODE4_ANY, 0, 4096);

	check_seg(pnfs_segment_difference(&whole, &head), 4096, EOF_LEN);
	check_seg(pnfs_segment_difference(&ranged, &head), 4096, 61440);
	CHECK_EQ(pnfs_segment_difference(&whole, &head).io_mode, LAYOUTIOMODE4_RW);
}

static void returning_the_tail_leaves_the_head(void)
{
	struct pnfs_segment whole = seg(LAYOUTIOMODE4_RW, 0, EOF_LEN);
	struct pnfs_segment ranged = seg(LAYOUTIOMODE4_RW, 4096, 8192);
	struct pnfs_segment from_8k = seg(LAYOUTIOMODE4_RW, 8192, EOF_LEN);

	check_seg(pnfs_segment_difference(&whole, &from_8k), 0, 8192);
	check_seg(pnfs_segment_difference(&ranged, &from_8k), 4096, 4096);
}

static void returning_all_of_it_leaves_nothing(void)
{
	struct pnfs_segment ranged = seg(LAYOUTIOMODE4_RW, 4096, 8192);
	struct pnfs_segment whole = seg(LAYOUTIOMODE4_ANY, 0, EOF_LEN);

	check_seg(pnfs_segment_difference(&ranged, &whole), 0, 0);
	check_seg(pnfs_segment_difference(&ranged, &ranged), 0, 0);
}

static void a_return_inside_or_beside_or_of_another_mode_leaves_it_whole(void)
{
	struct pnfs_segment ranged = seg(LAYOUTIOMODE4_RW, 4096, 8192);
	struct pnfs_segment inside = seg(LAYOUTIOMODE4_RW, 8192, 1024);
	struct pnfs_segment beside = seg(LAYOUTIOMODE4_RW, 12288, 4096);
	struct pnfs_segment read = seg(LAYOUTIOMODE4_READ, 0, EOF_LEN);

	check_seg(pnfs_segment_difference(&ranged, &inside), 4096, 8192);
	check_seg(pnfs_segment_difference(&ranged, &beside), 4096, 8192);
	check_seg(pnfs_segment_difference(&ranged, &read), 4096, 8192);
}

int main(void)
{
	adjacent_segments_do_not_overlap();
	overlapping_segments_overlap();
	other_io_modes_and_empty_segments_never_overlap();
	a_range_that_would_wrap_reaches_the_end();
	returning_the_head_leaves_the_tail();
	returning_the_tail_leaves_the_head();
	returning_all_of_it_leaves_nothing();
	a_return_inside_or_beside_or_of_another_mode_leaves_it_whole();
	CHECK_DONE();
}
