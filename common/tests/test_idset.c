/* The bounded id set: what it holds, and that it forgets the oldest id
 * first once full, never one added again meanwhile. */
#include "check.h"
#include "idset.h"

static struct pando_idset set = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void an_added_id_is_held_and_others_are_not(void)
{
	pando_idset_add(&set, 7);
	pando_idset_add(&set, UINT64_MAX);
	CHECK(pando_idset_has(&set, 7));
	CHECK(pando_idset_has(&set, UINT64_MAX));
	CHECK(!pando_idset_has(&set, 8));
	CHECK(!pando_idset_has(&set, 0));
}

static void adding_an_id_again_takes_no_room(void)
{
	uint32_t before = set.count;

	pando_idset_add(&set, 7);
	CHECK_EQ(set.count, before);
}

static void a_full_set_forgets_its_oldest_id(void)
{
	/* 7 and UINT64_MAX are in; fill the rest, then one more. */
	for (uint64_t id = 1000; id < 1000 + PANDO_IDSET_CAP - 2; id++)
		pando_idset_add(&set, id);
	CHECK_EQ(set.count, PANDO_IDSET_CAP);
	CHECK(pando_idset_has(&set, 7));
	pando_idset_add(&set, 42);
	CHECK(!pando_idset_has(&set, 7));
	CHECK(pando_idset_has(&set, UINT64_MAX));
	CHECK(pando_idset_has(&set, 42));
	CHECK_EQ(set.count, PANDO_IDSET_CAP);
}

int main(void)
{
	an_added_id_is_held_and_others_are_not();
	adding_an_id_again_takes_no_room();
	a_full_set_forgets_its_oldest_id();
	CHECK_DONE();
}
