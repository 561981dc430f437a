/* pando-osd-tool's object commands: create, rm, setcap. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd_tool.h"

static int opt_count(struct tool *t, int opt, const char *arg, void *ctx)
{
	uint32_t *count = ctx;

	if (parse_u32(arg, count) || *count == 0 || *count > 1000000) {
		fail(t, "--count wants 1..1000000, not '%s'", arg);
		return -1;
	}
	return 0;
}

/* Creates one batch, printing the ids created; 1 if any item failed. */
static int create_batch(struct tool *t, uint64_t partition, struct osd_ctl_create_item *items,
			size_t n, int *results)
{
	int failed = 0;
	int rc = osd_ctl_objects_create(t->client, partition, items, n, results);

	if (rc)
		return fail(t, "partition %" PRIu64 ": %s", partition, strerror(-rc));
	for (size_t i = 0; i < n; i++) {
		if (results[i])
			failed = fail(t, "object %" PRIu64 ": %s", items[i].object,
				      strerror(-results[i]));
		else
			printf("%" PRIu64 "\n", items[i].object);
	}
	return failed;
}

int cmd_create(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "count", required_argument, NULL, 'n' },
					      COMMON_OPTIONS,
					      { 0 } };
	struct osd_ctl_create_item *items;
	int *results;
	uint64_t partition;
	uint32_t count = 0;
	size_t explicit_ids, total;
	int first = parse_options(t, argc, argv, "", opts, opt_count, &count);
	int failed = 0;

	if (first < 0 || positional(t, argc, argv, first, 1, -1) < 0 ||
	    arg_u64(t, "PARTITION", argv[first], &partition))
		return 1;
	explicit_ids = (size_t)(argc - first - 1);
	total = explicit_ids + count;
	if (total == 0)
		total = 1; /* no ids and no count: one picked id */
	items = calloc(total, sizeof(*items));
	results = calloc(total, sizeof(*results));
	if (!items || !results)
		failed = fail(t, "out of memory");
	for (size_t i = 0; !failed && i < explicit_ids; i++)
		if (arg_u64(t, "OBJECT", argv[first + 1 + i], &items[i].object))
			failed = 1;
	if (!failed)
		failed = connect_target(t) ? 1 : 0;
	for (size_t at = 0; !failed && at < total; at += OSD_CTL_CLIENT_MAX_BATCH) {
		size_t n = total - at < OSD_CTL_CLIENT_MAX_BATCH ? total - at
								 : OSD_CTL_CLIENT_MAX_BATCH;

		failed = create_batch(t, partition, items + at, n, results + at);
	}
	free(items);
	free(results);
	return failed;
}

/* One line per failed item; 1 if any failed. */
static int report_items(struct tool *t, const uint64_t *objects, const int *results, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++)
		if (results[i])
			failed = fail(t, "object %" PRIu64 ": %s", objects[i],
				      strerror(-results[i]));
	return failed;
}

int cmd_rm(struct tool *t, int argc, char **argv)
{
	uint64_t partition, *objects;
	int *results;
	size_t n;
	int first, rc, failed = 0;

	if (plain_args(t, argc, argv, 2, 1 + OSD_CTL_CLIENT_MAX_BATCH, &first) ||
	    arg_u64(t, "PARTITION", argv[first], &partition))
		return 1;
	n = (size_t)(argc - first - 1);
	objects = calloc(n, sizeof(*objects));
	results = calloc(n, sizeof(*results));
	if (!objects || !results)
		failed = fail(t, "out of memory");
	for (size_t i = 0; !failed && i < n; i++)
		if (arg_u64(t, "OBJECT", argv[first + 1 + i], &objects[i]))
			failed = 1;
	if (!failed && connect_target(t))
		failed = 1;
	rc = failed ? 0 : osd_ctl_objects_remove(t->client, partition, objects, n, results);
	if (rc)
		failed = fail(t, "partition %" PRIu64 ": %s", partition, strerror(-rc));
	else if (!failed)
		failed = report_items(t, objects, results, n);
	free(objects);
	free(results);
	return failed;
}

int cmd_setcap(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_obj_id id;
	uint32_t version, old;
	int first, rc;

	if (plain_args(t, argc, argv, 3, 3, &first) || arg_obj(t, argv + first, &id) ||
	    arg_u32(t, "VERSION", argv[first + 2], &version) || connect_target(t))
		return 1;
	rc = osd_ctl_set_cap_version(t->client, &id, version, &old);
	if (rc)
		return fail(t, "%s", strerror(-rc));
	printf("%" PRIu32 "\n", old);
	return 0;
}
