/* A cluster key rotation through a running connection pool
 * (osd-target/README.md, "Cluster key file"): once osd_conns_rekey has
 * returned, the pool's calls are signed with the new key, so the OSDs can
 * drop the old one without a manager's calls being refused.  A real
 * pando-osd, reloading its key file on SIGHUP. */
#include "check.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "osd_fixture.h"

/* Whether a fresh connection signed with key reaches OSD index i. */
static bool accepts(struct osd_fixture *f, int i, const struct cluster_key *key)
{
	int err = 0;
	struct osd_ctl_client *c = osd_ctl_connect(f->osds[i].ctl, key, f->osds[i].id, 2000, &err);
	bool ok = c && osd_ctl_null(c) == 0;

	if (c)
		osd_ctl_close(c);
	return ok;
}

/* Waits (about five seconds at most) until the OSD's SIGHUP took effect:
 * key is accepted or refused, as want says. */
static bool settles(struct osd_fixture *f, const struct cluster_key *key, bool want)
{
	for (int t = 0; t < 100; t++) {
		if (accepts(f, 0, key) == want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static void test_rekeyed_pool_goes_on_when_the_old_key_is_dropped(void)
{
	struct osd_fixture f;
	struct cluster_key old, next, both;
	struct osd_conns *p = NULL;

	CHECK_EQ(osd_fixture_start(&f, 1, 1), 0);
	CHECK_EQ(osd_fixture_pool(&f, &p), 0);
	CHECK_EQ(osd_conns_ping(p, 1), 0);
	old = f.key;
	CHECK_EQ(cluster_key_generate(2, &next), 0);
	both = next;
	both.previous_id = old.id;
	memcpy(both.previous_secret, old.secret, sizeof(old.secret));

	/* Step 1: the OSD takes key 2 and still accepts key 1. */
	CHECK_EQ(osd_fixture_set_key(&f, &both), 0);
	CHECK(settles(&f, &next, true));
	CHECK_EQ(osd_conns_ping(p, 1), 0);
	/* Step 2: the manager signs with key 2. */
	CHECK_EQ(osd_conns_rekey(p, &next), 0);
	/* Step 3: the OSD drops key 1; the pool's calls go on. */
	CHECK_EQ(osd_fixture_set_key(&f, &next), 0);
	CHECK(settles(&f, &old, false));
	for (int i = 0; i < 5; i++)
		CHECK_EQ(osd_conns_ping(p, 1), 0);
	osd_conns_free(p);
	CHECK_EQ(osd_fixture_finish(&f, check_failures > 0), 0);
}

int main(void)
{
	test_rekeyed_pool_goes_on_when_the_old_key_is_dropped();
	CHECK_DONE();
}
