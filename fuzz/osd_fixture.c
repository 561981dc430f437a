#include "osd_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static char dir[64];
static struct cluster_key key;
static struct osd_keys keys;
static struct osd_stats stats;
static struct osd_ctx ctx;

static void remove_store(void)
{
	char cmd[96];

	objstore_close(ctx.store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

static int make_store(void)
{
	struct obj_create_req req = { .object = FUZZ_OBJECT, .cap_version = 1 };
	char path[80];
	int result = -1;

	/* tmpfs when there is one: WRITE FILE_SYNC syncs on every run. */
	snprintf(dir, sizeof(dir), "%s/pando-fuzz.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/osd", dir);
	if (objstore_format(path, FUZZ_OSD_ID, FUZZ_KEY_ID) || objstore_open(path, &ctx.store))
		return -1;
	atexit(remove_store);
	if (objstore_partition_create(ctx.store, FUZZ_PARTITION) ||
	    objstore_object_create(ctx.store, FUZZ_PARTITION, &req, 1, &result) || result)
		return -1;
	return 0;
}

struct osd_ctx *fuzz_osd_ctx(void)
{
	if (ctx.store)
		return &ctx;
	log_init(LOG_ERROR, stderr);
	fuzz_key(&key);
	osd_stats_init(&stats);
	if (make_store()) {
		fprintf(stderr, "fuzz: cannot make an object store in %s\n", dir);
		exit(1);
	}
	ctx.keys = &keys;
	ctx.osd_id = FUZZ_OSD_ID;
	ctx.replay = ctl_replay_new(CTL_REPLAY_MAX_ENTRIES, CTL_AUTH_MAX_SKEW_S);
	if (osd_keys_init(&keys, &key, FUZZ_OSD_ID) || !ctx.replay) {
		fprintf(stderr, "fuzz: cannot make the control keys or replay cache\n");
		exit(1);
	}
	memcpy(ctx.verf_base, "fuzzverf", sizeof(ctx.verf_base));
	ctx.fsid = 0x1234;
	ctx.stats = &stats;
	return &ctx;
}
