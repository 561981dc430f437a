/* The OSD connections grow while other threads use it (osd_conns_add): readers
 * that walk the connection pool (count, health, addresses) and look OSDs up by id
 * while OSDs join never see a half-made slot; a known id takes new
 * addresses in place; the connection pool refuses more than CLUSTER_MAP_MAX_OSDS.
 * No OSD listens: lookups of unknown ids answer -ENOENT, and calls to
 * the listed ones fail to connect, which is all this needs. */
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "osd_conns.h"

static struct cluster_map_osd osd_at(uint32_t id)
{
	struct cluster_map_osd o = { .id = id };

	/* Port 1 on loopback: nothing listens, connect fails at once. */
	snprintf(o.ctl, sizeof(o.ctl), "127.0.0.1:1");
	snprintf(o.nfs, sizeof(o.nfs), "127.0.0.1:%u", 20000 + id % 10000);
	strcpy(o.advertise, o.nfs);
	return o;
}

struct reader {
	struct osd_conns *conns;
	atomic_bool *stop;
	atomic_long walks;
	int bad;
};

/* Every slot the count covers is whole: its id matches its addresses. */
static void *walk(void *arg)
{
	struct reader *r = arg;

	while (!atomic_load(r->stop)) {
		size_t n = osd_conns_count(r->conns);

		for (size_t i = 0; i < n; i++) {
			struct osd_health h;
			struct cluster_map_osd a;
			char want[CLUSTER_MAP_ADDR_MAX];

			osd_conns_health(r->conns, i, &h);
			osd_conns_address(r->conns, i, &a);
			snprintf(want, sizeof(want), "127.0.0.1:%u", 20000 + a.id % 10000);
			if (h.id != a.id || h.id == 0 || strcmp(a.nfs, want) != 0)
				r->bad++;
		}
		r->walks++;
	}
	return NULL;
}

static void test_grows_under_readers(void)
{
	struct cluster_map_osd first[2] = { osd_at(1), osd_at(2) };
	struct cluster_map d = { .partition = 1, .nosds = 2, .osds = first };
	struct cluster_key key = { .id = 1 };
	struct osd_conns_options opt = { .conns_per_osd = 2, .timeout_ms = 200 };
	atomic_bool stop = false;
	struct reader r[2] = { { .stop = &stop }, { .stop = &stop } };
	pthread_t t[2];
	struct osd_conns *p;
	int err = 0;

	CHECK_EQ(osd_conns_new(&key, &d, &opt, &p), 0);
	CHECK_EQ(osd_conns_count(p), 2);
	for (int i = 0; i < 2; i++) {
		r[i].conns = p;
		CHECK_EQ(pthread_create(&t[i], NULL, walk, &r[i]), 0);
	}
	for (uint32_t id = 3; id <= CLUSTER_MAP_MAX_OSDS; id++) {
		struct cluster_map_osd o = osd_at(id * 7);

		CHECK_EQ(osd_conns_add(p, &o), 0);
		if (id % 100 == 0) {
			CHECK(osd_conns_get(p, id * 7, &err) == NULL);
			CHECK(err != -ENOENT); /* known: the connect failed */
			CHECK(osd_conns_get(p, 999999, &err) == NULL && err == -ENOENT);
		}
	}
	/* On a loaded machine a reader may not have run yet: each walks the
	 * grown connection pool at least once before it stops. */
	for (int i = 0; i < 2; i++) {
		long before = atomic_load(&r[i].walks);

		while (atomic_load(&r[i].walks) < before + 1)
			sched_yield();
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(r[i].bad, 0);
		CHECK(r[i].walks > 0);
	}
	CHECK_EQ(osd_conns_count(p), CLUSTER_MAP_MAX_OSDS);
	{
		struct cluster_map_osd o = osd_at(5000000);

		CHECK_EQ(osd_conns_add(p, &o), -ENOSPC);
	}
	/* The caller's description may go: the connection pool copied it. */
	memset(first, 0, sizeof(first));
	{
		struct cluster_map_osd a;

		osd_conns_address(p, 1, &a);
		CHECK_EQ(a.id, 2);
	}
	osd_conns_free(p);
}

static void test_known_id_takes_new_addresses(void)
{
	struct cluster_map_osd one = osd_at(1);
	struct cluster_map d = { .partition = 1, .nosds = 1, .osds = &one };
	struct cluster_key key = { .id = 1 };
	struct osd_conns *p;
	struct cluster_map_osd moved = osd_at(1), a;
	struct osd_health h;
	int err = 0;

	CHECK_EQ(osd_conns_new(&key, &d, NULL, &p), 0);
	CHECK(osd_conns_reachable(p, 1));  /* before any call */
	CHECK(!osd_conns_reachable(p, 7)); /* not in the connection conns */
	/* The failed connect marks it unreachable and backs off. */
	CHECK(osd_conns_get(p, 1, &err) == NULL);
	osd_conns_health(p, 0, &h);
	CHECK(!h.reachable);
	CHECK(!osd_conns_reachable(p, 1));
	snprintf(moved.ctl, sizeof(moved.ctl), "127.0.0.1:2");
	strcpy(moved.advertise, "10.0.2.2:20001");
	CHECK_EQ(osd_conns_add(p, &moved), 0);
	CHECK_EQ(osd_conns_count(p), 1);
	osd_conns_address(p, 0, &a);
	CHECK(!strcmp(a.ctl, "127.0.0.1:2") && !strcmp(a.advertise, "10.0.2.2:20001"));
	/* A new address is tried at once, not after the old one's back-off. */
	osd_conns_health(p, 0, &h);
	CHECK(h.reachable);
	CHECK(osd_conns_get(p, 1, &err) == NULL && err != -EHOSTDOWN);
	osd_conns_free(p);
}

int main(void)
{
	test_grows_under_readers();
	test_known_id_takes_new_addresses();
	CHECK_DONE();
}
