/* The set of OSDs (cluster_map.h): lookup by id, which OSDs take new
 * components, sorting that refuses a duplicate id, and a newer map merged
 * over an older one: the newer one's epoch, partition and OSDs win, OSDs
 * only the older one lists stay known but removed, and the union is
 * bounded. */
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_map.h"

static struct cluster_map_osd osd(uint32_t id, const char *ctl)
{
	struct cluster_map_osd o = { .id = id, .weight = 100, .up = true, .in = true };

	strcpy(o.ctl, ctl);
	return o;
}

static void test_lookup_and_takes(void)
{
	struct cluster_map_osd osds[] = { osd(2, "a:1"), osd(5, "b:1"), osd(9, "c:1") };
	struct cluster_map m = { .epoch = 3, .partition = 1, .nosds = 3, .osds = osds };

	CHECK(cluster_map_osd(&m, 5) == &osds[1]);
	CHECK(cluster_map_osd(&m, 1) == NULL);
	CHECK(cluster_map_osd(&m, 10) == NULL);
	CHECK(cluster_map_osd_takes(&osds[0]));
	osds[0].up = false;
	osds[1].in = false;
	osds[2].weight = 0;
	for (int i = 0; i < 3; i++)
		CHECK(!cluster_map_osd_takes(&osds[i]));
	osds[2] = osd(9, "c:1");
	osds[2].removed = true;
	CHECK(!cluster_map_osd_takes(&osds[2]));
}

static void test_sort_orders_by_id_and_refuses_a_duplicate(void)
{
	struct cluster_map_osd osds[] = { osd(7, "a:1"), osd(3, "b:1"), osd(5, "c:1") };
	struct cluster_map m = { .nosds = 3, .osds = osds };
	uint32_t dup = 0;

	CHECK_EQ(cluster_map_sort(&m, &dup), 0);
	CHECK(osds[0].id == 3 && osds[1].id == 5 && osds[2].id == 7);
	osds[1].id = 3;
	CHECK_EQ(cluster_map_sort(&m, &dup), -EINVAL);
	CHECK_EQ(dup, 3);
}

static void test_merge_keeps_what_only_the_older_lists_as_removed(void)
{
	struct cluster_map_osd a[] = { osd(1, "old:1"), osd(3, "old:3"), osd(4, "old:4") };
	struct cluster_map_osd b[] = { osd(1, "new:1"), osd(2, "new:2"), osd(4, "new:4") };
	struct cluster_map older = { .epoch = 0, .partition = 1, .nosds = 3, .osds = a };
	struct cluster_map newer = { .epoch = 7, .partition = 2, .nosds = 3, .osds = b };
	struct cluster_map out;

	b[2].in = false;
	CHECK_EQ(cluster_map_merge(&older, &newer, &out), 0);
	CHECK_EQ(out.epoch, 7);
	CHECK_EQ(out.partition, 2);
	CHECK_EQ(out.nosds, 4);
	for (uint32_t id = 1; id <= 4; id++)
		CHECK_EQ(out.osds[id - 1].id, id);
	CHECK(!strcmp(cluster_map_osd(&out, 1)->ctl, "new:1"));
	CHECK(!cluster_map_osd(&out, 4)->in && !cluster_map_osd(&out, 4)->removed);
	CHECK(!strcmp(cluster_map_osd(&out, 3)->ctl, "old:3"));
	CHECK(cluster_map_osd(&out, 3)->removed);
	CHECK(!cluster_map_osd(&out, 3)->up && !cluster_map_osd(&out, 3)->in);
	CHECK_EQ(cluster_map_osd(&out, 3)->weight, 0);
	cluster_map_free(&out);
	CHECK_EQ(out.nosds, 0);
}

static void test_merge_past_the_bound_is_refused_and_writes_nothing(void)
{
	size_t n = CLUSTER_MAP_MAX_OSDS;
	struct cluster_map_osd *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	struct cluster_map older = { .nosds = n, .osds = a }, newer = { .nosds = n, .osds = b };
	struct cluster_map out = { .epoch = 42 };

	for (size_t i = 0; i < n; i++) {
		a[i].id = (uint32_t)(2 * i + 1);
		b[i].id = (uint32_t)(2 * i + 2);
	}
	CHECK_EQ(cluster_map_merge(&older, &newer, &out), -E2BIG);
	CHECK_EQ(out.epoch, 42);
	CHECK(out.osds == NULL);
	free(a);
	free(b);
}

static void test_pool_names_are_short_lowercase_words(void)
{
	const char *good[] = { "fast", "ssd-1", "rack_a", "0", "abcdefghijklmnopqrstuvwxyz01234" };
	const char *bad[] = { "",       "Fast",  "-x",
			      "_x",     "a b",   "a/b",
			      "a.b",    "ssd\n", "abcdefghijklmnopqrstuvwxyz012345",
			      "default" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(cluster_map_pool_name_ok(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!cluster_map_pool_name_ok(bad[i]));
}

static void test_no_pool_takes_every_osd_and_a_pool_only_its_own(void)
{
	struct cluster_map_osd plain = osd(1, "a:1"), fast = osd(2, "a:2");

	strcpy(fast.pool, "fast");
	CHECK(cluster_map_osd_in_pool(&plain, NULL) && cluster_map_osd_in_pool(&plain, ""));
	CHECK(cluster_map_osd_in_pool(&fast, NULL) && cluster_map_osd_in_pool(&fast, ""));
	CHECK(cluster_map_osd_in_pool(&fast, "fast"));
	CHECK(!cluster_map_osd_in_pool(&plain, "fast"));
	CHECK(!cluster_map_osd_in_pool(&fast, "fas"));
}

int main(void)
{
	test_pool_names_are_short_lowercase_words();
	test_no_pool_takes_every_osd_and_a_pool_only_its_own();
	test_lookup_and_takes();
	test_sort_orders_by_id_and_refuses_a_duplicate();
	test_merge_keeps_what_only_the_older_lists_as_removed();
	test_merge_past_the_bound_is_refused_and_writes_nothing();
	CHECK_DONE();
}
