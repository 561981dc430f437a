/* The engine's life: it opens on real OSDs and a store it formats, closes,
 * opens again on the same store (the uuid stays), and an open that fails
 * (a cluster.conf with fewer OSDs than Mirrors needs) says why in the log
 * and closes cleanly. */
#include <string.h>

#include "check.h"
#include "mds_fixture.h"

static void test_opens_formats_and_reopens(void)
{
	struct mds_fixture f;
	uint8_t uuid[16];

	CHECK_EQ(mds_fixture_start(&f, 2, NULL), 0);
	CHECK(mds_fixture_log_find("formatting a new one") == 1);
	CHECK(f.mds.ns != NULL && f.mds.conns != NULL && f.mds.grants != NULL);
	CHECK(f.mds.reaper != NULL && f.mds.osd_watcher != NULL && f.mds.scrub != NULL);
	/* Without Etcd: no map watch, presence or rebuild service. */
	CHECK(f.mds.mapwatch == NULL && f.mds.presence == NULL && f.mds.rebuild == NULL);
	CHECK(f.mds.boot_ns != 0);
	memcpy(uuid, f.mds.uuid, sizeof(uuid));
	mds_fixture_log_clear();
	CHECK_EQ(mds_fixture_reopen(&f), 0);
	CHECK_EQ(mds_fixture_log_find("formatting"), 0);
	CHECK_MEM(f.mds.uuid, uuid, sizeof(uuid));
	mds_fixture_finish(&f, check_failures);
}

static void three_mirrors(struct pando_mds_config *cfg)
{
	cfg->mirrors = 3;
}

static void test_too_few_osds_fails_and_closes(void)
{
	struct mds_fixture f;

	mds_fixture_log_clear();
	CHECK(mds_fixture_start(&f, 2, three_mirrors) != 0);
	CHECK_EQ(mds_fixture_log_find("Mirrors = 3 and Stripe_Width = 1 need 3 OSDs"), 1);
	CHECK(f.mds.grants == NULL && f.mds.reaper == NULL);
	mds_fixture_finish(&f, check_failures);
}

int main(void)
{
	test_opens_formats_and_reopens();
	test_too_few_osds_fails_and_closes();
	CHECK_DONE();
}
