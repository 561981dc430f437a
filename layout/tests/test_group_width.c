/* Automatic group width: Panasas Table 1 ("Default Parity Group Size",
 * Welch et al., FAST '08, section 4.2) reproduced exactly, and the rule
 * behind it at the edges. */
#include <errno.h>

#include "check.h"
#include "pando/placement.h"

static const struct {
	uint32_t osds, width, groups;
} table1[] = {
	{ 10, 9, 1 },  { 20, 9, 2 },   { 40, 9, 4 },   { 60, 8, 7 },
	{ 80, 11, 7 }, { 100, 11, 9 }, { 120, 9, 13 },
};

static void test_table1(void)
{
	for (size_t i = 0; i < sizeof(table1) / sizeof(table1[0]); i++) {
		uint32_t w = 0, g = 0;

		CHECK_EQ(pando_group_width_auto(table1[i].osds, 1, 1, UINT32_MAX, &w, &g), 0);
		CHECK_EQ(w, table1[i].width);
		CHECK_EQ(g, table1[i].groups);
		printf("  %3u OSDs: width %2u, %2u groups, %u unused\n", table1[i].osds, w, g,
		       table1[i].osds - w * g);
	}
}

/* Every pool from 9 to 500 OSDs: width in [8, 11], at least one spare,
 * and no width in range leaves fewer OSDs unused. */
static void test_rule(void)
{
	int bad = 0;

	for (uint32_t n = 9; n <= 500; n++) {
		uint32_t w, g;

		if (pando_group_width_auto(n, 1, 1, UINT32_MAX, &w, &g) || w < 8 || w > 11 ||
		    n - w * g < 1) {
			bad++;
			continue;
		}
		for (uint32_t other = 8; other <= 11; other++) {
			uint32_t og = (n - 1) / other;

			if (og && n - og * other < n - w * g)
				bad++;
		}
	}
	CHECK_EQ(bad, 0);
}

static void test_edges(void)
{
	uint32_t w, g;

	/* pools below Table 1's range: one group of all but the spares */
	CHECK_EQ(pando_group_width_auto(8, 1, 1, UINT32_MAX, &w, &g), 0);
	CHECK_EQ(w, 7);
	CHECK_EQ(g, 1);
	CHECK_EQ(pando_group_width_auto(3, 1, 1, UINT32_MAX, &w, &g), 0);
	CHECK_EQ(w, 2);
	CHECK_EQ(pando_group_width_auto(3, 1, 3, UINT32_MAX, &w, &g), -ENOSPC);
	CHECK_EQ(pando_group_width_auto(1, 1, 1, UINT32_MAX, &w, &g), -ENOSPC);
	CHECK_EQ(pando_group_width_auto(0, 1, 1, UINT32_MAX, &w, &g), -ENOSPC);
	/* two spares: 20 OSDs still take two groups of 9 */
	CHECK_EQ(pando_group_width_auto(20, 2, 1, UINT32_MAX, &w, &g), 0);
	CHECK_EQ(w, 9);
	CHECK_EQ(g, 2);
	/* ten failure domains cap the width at 10 even with 100 OSDs */
	CHECK_EQ(pando_group_width_auto(100, 1, 1, 10, &w, &g), 0);
	CHECK_EQ(w, 9);
	CHECK_EQ(g, 11);
	/* fewer domains than 8: as wide as the domains allow, as many as fit */
	CHECK_EQ(pando_group_width_auto(100, 1, 1, 6, &w, &g), 0);
	CHECK_EQ(w, 6);
	CHECK_EQ(g, 16);
}

int main(void)
{
	test_table1();
	test_rule();
	test_edges();
	CHECK_DONE();
}
