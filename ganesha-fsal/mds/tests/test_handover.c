/* The planned switchover's watcher on a real etcd: a request naming this
 * active in its term stops it, once, and is deleted; one for an earlier
 * term is deleted unheeded; one for another member or a later term is
 * left alone; a value that is no request is logged once and ignored.
 * And what makes a value a request, on its own. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "etcd_client.h"
#include "etcd_fixture.h"
#include "handover.h"

#define KEY "/pando/groups/g1/handover"
#define POLL_MS 20

static struct etcd_fixture etcd;
static struct etcd_options eo;
static struct etcd_client *c;

struct watched {
	atomic_int stops;
	atomic_int warnings;
};

static void on_stop(void *arg)
{
	atomic_fetch_add(&((struct watched *)arg)->stops, 1);
}

static void on_log(void *arg, int level, const char *msg)
{
	(void)msg;
	if (level)
		atomic_fetch_add(&((struct watched *)arg)->warnings, 1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static struct pando_handover *watch(struct watched *w, int64_t term)
{
	const struct pando_handover_options o = { .etcd = &eo,
						  .key = KEY,
						  .name = "a",
						  .term = term,
						  .poll_ms = POLL_MS,
						  .stop = on_stop,
						  .log = on_log,
						  .arg = w };
	struct pando_handover *h = NULL;

	CHECK_EQ(pando_handover_start(&o, &h), 0);
	return h;
}

static void put(const char *value)
{
	CHECK_EQ(etcd_put(c, KEY, value, strlen(value), 0), 0);
}

static int key_exists(void)
{
	char *value = NULL;
	size_t len;
	int rc = etcd_get(c, KEY, &value, &len, NULL);

	free(value);
	return rc == 0;
}

static void test_a_request_for_this_active_in_its_term_stops_it_once(void)
{
	struct watched w = { 0 };
	struct pando_handover *h = watch(&w, 41);

	put("{\"from\":\"a\",\"term\":41}");
	for (int i = 0; i < 100 && !atomic_load(&w.stops); i++)
		sleep_ms(POLL_MS);
	sleep_ms(10 * POLL_MS);
	CHECK_EQ(atomic_load(&w.stops), 1);
	CHECK(!key_exists());
	pando_handover_stop(h);
}

static void test_requests_for_others_are_left_and_stale_ones_deleted(void)
{
	struct watched w = { 0 };
	struct pando_handover *h = watch(&w, 41);

	put("{\"from\":\"b\",\"term\":41}");
	sleep_ms(10 * POLL_MS);
	CHECK(key_exists());
	put("{\"from\":\"a\",\"term\":42}"); /* a later active named a */
	sleep_ms(10 * POLL_MS);
	CHECK(key_exists());
	put("{\"from\":\"a\",\"term\":40}"); /* for an earlier term of a */
	for (int i = 0; i < 100 && key_exists(); i++)
		sleep_ms(POLL_MS);
	CHECK(!key_exists());
	CHECK_EQ(atomic_load(&w.stops), 0);
	pando_handover_stop(h);
}

static void test_a_value_that_is_no_request_is_logged_once_and_ignored(void)
{
	struct watched w = { 0 };
	struct pando_handover *h = watch(&w, 41);

	put("{\"from\":\"a\"}");
	sleep_ms(10 * POLL_MS);
	CHECK_EQ(atomic_load(&w.warnings), 1);
	put("not json");
	sleep_ms(10 * POLL_MS);
	CHECK_EQ(atomic_load(&w.warnings), 2);
	CHECK_EQ(atomic_load(&w.stops), 0);
	CHECK(key_exists());
	CHECK_EQ(etcd_delete(c, KEY), 0);
	pando_handover_stop(h);
}

static enum pando_handover_request classify(const char *value, size_t len)
{
	return pando_handover_classify("mds-a", 41, value, len);
}

static void test_a_request_is_for_the_active_it_names_in_its_term(void)
{
	const char *me = "{\"from\":\"mds-a\",\"term\":41}";

	CHECK_EQ(classify(me, strlen(me)), PANDO_HANDOVER_FOR_ME);
	CHECK_EQ(classify("{\"from\":\"mds-a\",\"term\":40}", 26), PANDO_HANDOVER_STALE);
	CHECK_EQ(classify("{\"from\":\"mds-a\",\"term\":42}", 26), PANDO_HANDOVER_FOR_ANOTHER);
	CHECK_EQ(classify("{\"from\":\"mds-b\",\"term\":41}", 26), PANDO_HANDOVER_FOR_ANOTHER);
	CHECK_EQ(classify("{\"from\":\"mds-a\",\"term\":\"41\"}", 28), PANDO_HANDOVER_NONE);
	CHECK_EQ(classify("{\"term\":41}", 11), PANDO_HANDOVER_NONE);
}

/* Compared as C strings, "mds-a\0b" would be mds-a's. */
static void test_a_name_with_a_nul_inside_is_no_request(void)
{
	const char *v = "{\"from\":\"mds-a\\u0000b\",\"term\":41}";

	CHECK_EQ(classify(v, strlen(v)), PANDO_HANDOVER_NONE);
}

static void test_a_value_past_the_bound_is_no_request(void)
{
	char v[PANDO_HANDOVER_VALUE_MAX + 64];
	int n = snprintf(v, sizeof(v), "{\"from\":\"mds-a\",\"term\":41,\"pad\":\"%0*d\"}",
			 PANDO_HANDOVER_VALUE_MAX, 0);

	CHECK_EQ(classify(v, (size_t)n), PANDO_HANDOVER_NONE);
}

int main(void)
{
	test_a_request_is_for_the_active_it_names_in_its_term();
	test_a_name_with_a_nul_inside_is_no_request();
	test_a_value_past_the_bound_is_no_request();
	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the handover watcher needs one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	eo = (struct etcd_options){ .endpoints = etcd.url };
	CHECK_EQ(etcd_client_new(&eo, &c), 0);
	test_a_request_for_this_active_in_its_term_stops_it_once();
	test_requests_for_others_are_left_and_stale_ones_deleted();
	test_a_value_that_is_no_request_is_logged_once_and_ignored();
	etcd_client_free(c);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
