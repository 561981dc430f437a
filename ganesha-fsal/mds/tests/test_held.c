/* A member's held record (held.h) on a real etcd: put when the position
 * moves and once more at stop, never while there is none; the trim
 * floor takes the lowest recent record but the active's own, leaves out
 * records past PANDO_HELD_KEEP_S, and counts malformed ones. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "held.h"

#define PREFIX "/pando/groups/g1/held/"

static struct etcd_fixture etcd;
static struct etcd_options eo;
static struct etcd_client *c;
static _Atomic uint64_t position;

static uint64_t seq_of(void *arg)
{
	(void)arg;
	return atomic_load(&position);
}

static void put(const char *name, const char *value)
{
	char key[128];

	snprintf(key, sizeof(key), PREFIX "%s", name);
	CHECK_EQ(etcd_put(c, key, value, strlen(value), 0), 0);
}

static uint64_t stored_seq(const char *name)
{
	char key[128], *v = NULL;
	size_t len = 0;
	int64_t rev = 0, at = 0;
	uint64_t seq = 0;

	snprintf(key, sizeof(key), PREFIX "%s", name);
	if (etcd_get(c, key, &v, &len, &rev) == 0)
		CHECK_EQ(pando_held_parse(v, len, &seq, &at), 0);
	free(v);
	return seq;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void test_a_record_is_put_as_the_position_moves_and_at_stop(void)
{
	struct pando_held *h = NULL;

	atomic_store(&position, 0);
	CHECK_EQ(pando_held_start(&eo, PREFIX "m1", seq_of, NULL, &h), 0);
	sleep_ms(1500);
	CHECK_EQ(stored_seq("m1"), 0); /* no position, no record */
	atomic_store(&position, 41);
	sleep_ms(1500);
	CHECK_EQ(stored_seq("m1"), 41);
	atomic_store(&position, 42);
	pando_held_stop(h);
	CHECK_EQ(stored_seq("m1"), 42);
	CHECK_EQ(etcd_delete(c, PREFIX "m1"), 0);
}

static void test_the_floor_is_the_lowest_recent_record_but_the_actives_own(void)
{
	char value[128];
	int64_t now = (int64_t)time(NULL);
	uint64_t floor = 1000;
	unsigned bad = 0;

	snprintf(value, sizeof(value), "{\"seq\":700,\"at\":%lld}", (long long)now - 5);
	put("down", value);
	snprintf(value, sizeof(value), "{\"seq\":300,\"at\":%lld}", (long long)now);
	put("self", value);
	snprintf(value, sizeof(value), "{\"seq\":100,\"at\":%lld}",
		 (long long)(now - PANDO_HELD_KEEP_S - 10));
	put("gone", value);
	put("junk", "{\"seq\":\"5\",\"at\":1}");
	CHECK_EQ(pando_held_floor(c, PREFIX, "self", now, &floor, &bad), 0);
	CHECK_EQ(floor, 700);
	CHECK_EQ(bad, 1);
	floor = 500;
	CHECK_EQ(pando_held_floor(c, PREFIX, "self", now, &floor, &bad), 0);
	CHECK_EQ(floor, 500); /* only ever lowered */
	CHECK_EQ(etcd_delete_range(c, PREFIX, PREFIX "\xff", NULL), 0);
}

static void test_malformed_values_are_refused(void)
{
	static const char *const bad[] = {
		"",
		"not json",
		"{\"seq\":5}",
		"{\"at\":5}",
		"{\"seq\":0,\"at\":5}",
		"{\"seq\":-3,\"at\":5}",
		"{\"seq\":5,\"at\":\"now\"}",
		"[5, 6]",
	};
	uint64_t seq = 0;
	int64_t at = 0;
	char big[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(pando_held_parse(bad[i], strlen(bad[i]), &seq, &at), -EINVAL);
	snprintf(big, sizeof(big), "{\"seq\":5,\"at\":5,\"pad\":\"%0150d\"}", 0);
	CHECK_EQ(pando_held_parse(big, strlen(big), &seq, &at), -EINVAL);
	snprintf(big, sizeof(big), "{\"seq\":5,\"at\":6}");
	CHECK_EQ(pando_held_parse(big, strlen(big), &seq, &at), 0);
	CHECK_EQ(seq, 5);
	CHECK_EQ(at, 6);
}

int main(void)
{
	test_malformed_values_are_refused();
	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: held records need one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	eo = (struct etcd_options){ .endpoints = etcd.url };
	CHECK_EQ(etcd_client_new(&eo, &c), 0);
	test_a_record_is_put_as_the_position_moves_and_at_stop();
	test_the_floor_is_the_lowest_recent_record_but_the_actives_own();
	etcd_client_free(c);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
