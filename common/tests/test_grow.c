/* pando_grow(): room for what is asked, contents kept, overflow refused. */
#include <stdint.h>

#include "check.h"
#include "grow.h"

static void test_grow_makes_room_and_keeps_what_was_there(void)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	for (uint32_t i = 0; i < 1000; i++) {
		CHECK_EQ(pando_grow((void **)&v, &cap, i + 1, sizeof(*v)), 0);
		CHECK(cap >= i + 1);
		v[i] = i * 7;
	}
	for (uint32_t i = 0; i < 1000; i++)
		CHECK_EQ(v[i], i * 7);
	free(v);
}

static void test_grow_within_capacity_does_not_move_the_array(void)
{
	uint8_t *v = NULL;
	size_t cap = 0;
	void *before;

	CHECK_EQ(pando_grow((void **)&v, &cap, 100, 1), 0);
	before = v;
	CHECK_EQ(pando_grow((void **)&v, &cap, cap, 1), 0);
	CHECK(v == before);
	free(v);
}

static void test_grow_refuses_a_size_that_overflows_and_keeps_the_array(void)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	CHECK_EQ(pando_grow((void **)&v, &cap, 4, sizeof(*v)), 0);
	v[3] = 42;
	CHECK_EQ(pando_grow((void **)&v, &cap, SIZE_MAX / 4, sizeof(*v)), -ENOMEM);
	CHECK_EQ(pando_grow((void **)&v, &cap, SIZE_MAX, 1), -ENOMEM);
	CHECK(cap >= 4 && cap < SIZE_MAX / 8);
	CHECK_EQ(v[3], 42);
	free(v);
}

int main(void)
{
	test_grow_makes_room_and_keeps_what_was_there();
	test_grow_within_capacity_does_not_move_the_array();
	test_grow_refuses_a_size_that_overflows_and_keeps_the_array();
	CHECK_DONE();
}
