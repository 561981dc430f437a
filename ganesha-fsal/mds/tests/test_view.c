/* The cluster view: seeded from cluster.conf (epoch 0, every OSD up and
 * in); a cluster map applied publishes a new view with its higher epoch
 * (a map not newer is refused), which readers see whole, never half
 * built; a reader holding an older view keeps using it; an OSD marked out
 * recalls the layouts of the files whose maps name it, and only those. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "grants.h"
#include "mds_fixture.h"
#include "view.h"

#define NOSDS 3
#define FLIPS 200

static void test_the_seed_is_cluster_conf_with_every_osd_taking(void)
{
	const struct pando_view *v;
	struct mds_fixture f;

	CHECK_EQ(mds_fixture_start(&f, NOSDS, NULL), 0);
	v = pando_view_get(&f.mds);
	CHECK_EQ(v->map.epoch, 0);
	CHECK(!strcmp(v->source, "cluster.conf"));
	CHECK_EQ(v->map.nosds, NOSDS);
	CHECK(v->placement != NULL);
	for (int i = 0; i < NOSDS; i++) {
		const struct cluster_map_osd *o = pando_view_osd(v, f.osds.osds[i].id);

		CHECK(o != NULL && !strcmp(o->ctl, f.osds.osds[i].ctl));
		CHECK(o != NULL && !o->removed && o->up && o->in);
		CHECK(pando_view_takes(v, f.osds.osds[i].id));
	}
	CHECK(pando_view_osd(v, 99) == NULL);
	CHECK(!pando_view_takes(v, 99));
	mds_fixture_finish(&f, check_failures);
}

static void test_a_map_publishes_a_newer_view_and_the_older_stays_valid(void)
{
	const struct pando_view *old, *v;
	struct mds_fixture f;
	uint32_t id;

	CHECK_EQ(mds_fixture_start(&f, NOSDS, NULL), 0);
	id = f.osds.osds[2].id;
	old = pando_view_get(&f.mds);
	CHECK_EQ(mds_fixture_mark_out(&f, 5, id), 0);
	v = pando_view_get(&f.mds);
	CHECK(v != old);
	CHECK_EQ(v->map.epoch, 5);
	CHECK(!strcmp(v->source, "test"));
	CHECK(v->older == old);
	CHECK(!pando_view_takes(v, id));
	CHECK(pando_view_takes(v, f.osds.osds[0].id));
	/* What a reader that took the seed before goes on seeing. */
	CHECK_EQ(old->map.epoch, 0);
	CHECK(pando_view_takes(old, id));
	CHECK(old->placement != NULL);
	CHECK(pando_view_osd(old, id) != NULL);
	/* Not newer: refused, nothing published. */
	CHECK_EQ(mds_fixture_mark_out(&f, 5, 0), -EALREADY);
	CHECK_EQ(mds_fixture_mark_out(&f, 4, 0), -EALREADY);
	CHECK(pando_view_get(&f.mds) == v);
	mds_fixture_finish(&f, check_failures);
}

/* A reader as the request path is one: it takes the view and checks it
 * is whole (odd epochs have the OSD out, even ones in, and a placement). */
struct reader {
	struct pando_mds *mds;
	uint32_t osd;
	atomic_bool stop;
	atomic_uint reads;
	unsigned torn;
	unsigned backwards;
};

static void *read_views(void *arg)
{
	struct reader *r = arg;
	uint64_t last = 0;

	while (!atomic_load(&r->stop)) {
		const struct pando_view *v = pando_view_get(r->mds);
		const struct cluster_map_osd *o = pando_view_osd(v, r->osd);
		bool want_in = v->map.epoch % 2 == 0;

		if (!o || o->in != want_in || !v->placement)
			r->torn++;
		r->backwards += v->map.epoch < last;
		last = v->map.epoch;
		r->reads++;
	}
	return NULL;
}

static void test_readers_see_each_view_whole_and_epochs_only_grow(void)
{
	struct reader r = { 0 };
	struct mds_fixture f;
	pthread_t t;

	CHECK_EQ(mds_fixture_start(&f, NOSDS, NULL), 0);
	r.mds = &f.mds;
	r.osd = f.osds.osds[1].id;
	CHECK_EQ(pthread_create(&t, NULL, read_views, &r), 0);
	/* Reading before the first map, so it reads while they apply. */
	while (atomic_load(&r.reads) == 0)
		sched_yield();
	for (uint64_t e = 1; e <= FLIPS; e++)
		CHECK_EQ(mds_fixture_mark_out(&f, e, e % 2 ? r.osd : 0), 0);
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	CHECK(r.reads > 0);
	CHECK_EQ(r.torn, 0);
	CHECK_EQ(r.backwards, 0);
	CHECK_EQ(pando_view_get(&f.mds)->map.epoch, FLIPS);
	mds_fixture_finish(&f, check_failures);
}

/* A read layout of a file on objects, as LAYOUTGET records one. */
static struct pando_grant *layout_out(struct mds_fixture *f, uint64_t *ino)
{
	struct pando_grant_ask ask = { .cap_version = 1, .clientid = 7, .client = "192.0.2.7" };
	struct pando_grant *seg = NULL;
	struct ns_attr a;

	CHECK_EQ(mds_fixture_create(f, "laid-out", &a), 0);
	CHECK_EQ(pando_objects_move(&f->mds, a.ino), 0);
	ask.ino = a.ino;
	ask.gen = a.gen;
	CHECK_EQ(pando_grants_grant(f->mds.grants, &ask, &seg), 0);
	*ino = a.ino;
	return seg;
}

static void test_an_osd_marked_out_recalls_the_layouts_on_it(void)
{
	uint32_t used = 0, unused = 0;
	struct pando_grant *seg;
	struct mds_fixture f;
	uint64_t ino = 0;

	CHECK_EQ(mds_fixture_start(&f, NOSDS, NULL), 0);
	seg = layout_out(&f, &ino);
	for (int i = 0; i < NOSDS; i++) {
		uint32_t id = f.osds.osds[i].id;

		if (pando_map_uses_osd(&f.mds, ino, id))
			used = id;
		else
			unused = id;
	}
	CHECK(used != 0 && unused != 0);
	CHECK_EQ(mds_fixture_mark_out(&f, 1, unused), 0);
	CHECK_EQ(f.host.recalls, 0);
	CHECK_EQ(mds_fixture_mark_out(&f, 2, used), 0);
	CHECK(fake_host_wait(&f.host, &f.host.recalls, 1, 5000));
	CHECK_EQ(f.host.recalls, 1);
	CHECK_EQ(f.host.last_recall_ino, ino);
	if (seg) {
		CHECK(seg->recalled);
		pando_grant_end(seg);
	}
	mds_fixture_finish(&f, check_failures);
}

int main(void)
{
	test_the_seed_is_cluster_conf_with_every_osd_taking();
	test_a_map_publishes_a_newer_view_and_the_older_stays_valid();
	test_readers_see_each_view_whole_and_epochs_only_grow();
	test_an_osd_marked_out_recalls_the_layouts_on_it();
	CHECK_DONE();
}
