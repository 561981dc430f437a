/* pando-osd-tool's target-wide commands: stat, ls, mkpart, rmpart, wipe,
 * flush. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd_tool.h"

/* The STATS counters in the order `stat` prints them, after the STATFS lines. */
#define COUNTER(field) \
	{ \
#field, offsetof(struct osd_ctl_stats, field) \
	}
static const struct {
	const char *name;
	size_t off;
} stat_counters[] = {
	COUNTER(started_ns),          COUNTER(nfs_read_ops),        COUNTER(nfs_read_bytes),
	COUNTER(nfs_write_ops),       COUNTER(nfs_write_bytes),     COUNTER(nfs_write_unstable),
	COUNTER(nfs_write_data_sync), COUNTER(nfs_write_file_sync), COUNTER(nfs_commit_ops),
	COUNTER(nfs_err_rejected),    COUNTER(nfs_err_io),          COUNTER(nfs_err_other),
	COUNTER(ctl_read_ops),        COUNTER(ctl_read_bytes),      COUNTER(ctl_write_ops),
	COUNTER(ctl_write_bytes),
};
#undef COUNTER

static int print_counters(struct tool *t)
{
	struct osd_ctl_stats cs;
	int rc = osd_ctl_stats(t->client, &cs);

	/* A target older than the counters still gets its STATFS lines. */
	if (rc == -EOPNOTSUPP)
		return 0;
	if (rc)
		return fail(t, "counters: %s", strerror(-rc));
	for (size_t i = 0; i < sizeof(stat_counters) / sizeof(stat_counters[0]); i++) {
		uint64_t v;

		memcpy(&v, (const char *)&cs + stat_counters[i].off, sizeof(v));
		printf("%-19s %" PRIu64 "\n", stat_counters[i].name, v);
	}
	return 0;
}

int cmd_stat(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_statfs st;
	char uuid[37];
	int first, rc;

	if (plain_args(t, argc, argv, 0, 0, &first) || connect_target(t))
		return 1;
	rc = osd_ctl_statfs(t->client, &st);
	if (rc)
		return fail(t, "%s", strerror(-rc));
	format_uuid(st.uuid, uuid);
	printf("uuid        %s\n", uuid);
	printf("osd_id      %" PRIu32 "\n", st.osd_id);
	printf("key_id      %" PRIu32 "\n", st.key_id);
	printf("total_bytes %" PRIu64 "\n", st.total_bytes);
	printf("free_bytes  %" PRIu64 "\n", st.free_bytes);
	printf("partitions  %" PRIu64 "\n", st.partitions);
	printf("objects     %" PRIu64 "\n", st.objects);
	printf("created_ns  %" PRIu64 "\n", st.created_ns);
	return print_counters(t);
}

int cmd_ls(struct tool *t, int argc, char **argv)
{
	uint64_t partition = 0, after = 0;
	uint64_t *ids = malloc(OSD_CTL_CLIENT_MAX_BATCH * sizeof(*ids));
	bool eof = false;
	int first, rc = 0;

	if (!ids)
		return fail(t, "out of memory");
	if (plain_args(t, argc, argv, 0, 1, &first) ||
	    (argc > first && arg_u64(t, "PARTITION", argv[first], &partition)) ||
	    connect_target(t)) {
		free(ids);
		return 1;
	}
	while (!eof && !rc) {
		size_t n = 0;

		rc = osd_ctl_list(t->client, partition, after, ids, OSD_CTL_CLIENT_MAX_BATCH, &n,
				  &eof);
		for (size_t i = 0; !rc && i < n; i++)
			printf("%" PRIu64 "\n", ids[i]);
		if (n)
			after = ids[n - 1];
		else if (!rc && !eof)
			rc = -EPROTO; /* no progress: the target would loop us forever */
	}
	free(ids);
	if (rc && partition)
		return fail(t, "partition %" PRIu64 ": %s", partition, strerror(-rc));
	return rc ? fail(t, "%s", strerror(-rc)) : 0;
}

static int partition_cmd(struct tool *t, int argc, char **argv,
			 int (*op)(struct osd_ctl_client *, uint64_t))
{
	uint64_t partition;
	int first, rc;

	if (plain_args(t, argc, argv, 1, 1, &first) ||
	    arg_u64(t, "PARTITION", argv[first], &partition) || connect_target(t))
		return 1;
	rc = op(t->client, partition);
	return rc ? fail(t, "partition %" PRIu64 ": %s", partition, strerror(-rc)) : 0;
}

int cmd_mkpart(struct tool *t, int argc, char **argv)
{
	return partition_cmd(t, argc, argv, osd_ctl_partition_create);
}

int cmd_rmpart(struct tool *t, int argc, char **argv)
{
	return partition_cmd(t, argc, argv, osd_ctl_partition_remove);
}

static int parse_uuid(const char *s, uint8_t uuid[OSD_CTL_UUID_LEN])
{
	return parse_hex(s, uuid, OSD_CTL_UUID_LEN) == OSD_CTL_UUID_LEN ? 0 : -EINVAL;
}

struct wipe_opts {
	uint8_t uuid[OSD_CTL_UUID_LEN];
	bool have_uuid;
};

static int opt_wipe(struct tool *t, int opt, const char *arg, void *ctx)
{
	struct wipe_opts *o = ctx;

	if (parse_uuid(arg, o->uuid)) {
		fail(t, "--uuid wants the target's uuid (see stat), not '%s'", arg);
		return -1;
	}
	o->have_uuid = true;
	return 0;
}

int cmd_wipe(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "uuid", required_argument, NULL, 'u' },
					      COMMON_OPTIONS,
					      { 0 } };
	struct wipe_opts o = { 0 };
	int first = parse_options(t, argc, argv, "", opts, opt_wipe, &o);
	int rc;

	if (first < 0 || positional(t, argc, argv, first, 0, 0) < 0)
		return 1;
	if (!o.have_uuid)
		return fail(t, "needs --uuid UUID, the target's (see stat): a guard against "
			       "wiping the wrong target");
	if (connect_target(t))
		return 1;
	rc = osd_ctl_format(t->client, o.uuid);
	if (rc == -EACCES)
		return fail(t, "refused: the uuid is not this target's");
	return rc ? fail(t, "%s", strerror(-rc)) : 0;
}

int cmd_flush(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_obj_id id;
	int first, rc;

	if (plain_args(t, argc, argv, 0, 2, &first))
		return 1;
	if (argc - first == 1)
		return fail(t, "usage: %s flush [PARTITION OBJECT]", PROG);
	if ((argc - first == 2 && arg_obj(t, argv + first, &id)) || connect_target(t))
		return 1;
	rc = osd_ctl_flush(t->client, argc - first == 2 ? &id : NULL);
	return rc ? fail(t, "%s", strerror(-rc)) : 0;
}
