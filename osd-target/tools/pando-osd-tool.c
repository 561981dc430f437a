/* pando-osd-tool: administer one OSD target over the control protocol, or
 * a data directory offline.
 *
 *   pando-osd-tool [--ctl HOST:PORT] [--key-file FILE] [--timeout S] COMMAND ARGS
 *
 * Every error goes to stderr as one line and exits 1. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "byteorder.h"
#include "hex.h"
#include "log.h"
#include "objstore.h"
#include "pando/capability.h"
#include "pando/cluster_key.h"
#include "pando/osd_ctl_client.h"

#define PROG "pando-osd-tool"
#define DEFAULT_CTL "127.0.0.1:20591"
#define CHUNK OSD_CTL_CLIENT_MAX_DATA

struct command;

struct tool {
	const struct command *command;
	const char *cmd;             /* the command's name, for messages */
	const char *ctl;
	const char *key_file;
	int timeout_ms;
	struct cluster_key key;
	struct osd_ctl_client *client;
};

struct command {
	const char *name;
	const char *usage;
	int (*run)(struct tool *t, int argc, char **argv);
};

static void usage(FILE *f);

/* ---- messages and argument parsing ---------------------------------------- */

static int fail(const struct tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(const struct tool *t, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", PROG);
	if (t->cmd)
		fprintf(stderr, "%s: ", t->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t w;

	if (parse_u64(s, &w) || w > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)w;
	return 0;
}

/* Hex digits into out (at most cap bytes); dashes are skipped so a uuid
 * parses too.  The byte count, or -EINVAL. */
static int parse_hex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (*s) {
		int hi, lo;

		if (*s == '-') {
			s++;
			continue;
		}
		hi = hex_nibble(s[0]);
		lo = hi < 0 ? -1 : hex_nibble(s[1]);
		if (lo < 0 || n == cap)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (int)n;
}

static void print_hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

static void format_uuid(const uint8_t u[OSD_CTL_UUID_LEN], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
}

/* The options every command accepts, before or after its name. */
enum { OPT_CTL = 1000, OPT_KEY_FILE, OPT_TIMEOUT, OPT_HELP };
#define COMMON_OPTIONS \
	{ "ctl", required_argument, NULL, OPT_CTL }, \
	{ "key-file", required_argument, NULL, OPT_KEY_FILE }, \
	{ "timeout", required_argument, NULL, OPT_TIMEOUT }, \
	{ "help", no_argument, NULL, OPT_HELP }

/* 0: handled; 1: not a common option; -1: bad value (message printed). */
static int common_option(struct tool *t, int opt, const char *arg)
{
	uint32_t secs;

	switch (opt) {
	case OPT_CTL:
		t->ctl = arg;
		return 0;
	case OPT_KEY_FILE:
		t->key_file = arg;
		return 0;
	case OPT_TIMEOUT:
		if (parse_u32(arg, &secs) || secs == 0 || secs > 3600) {
			fail(t, "--timeout wants 1..3600 seconds, not '%s'", arg);
			return -1;
		}
		t->timeout_ms = (int)secs * 1000;
		return 0;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	default:
		return 1;
	}
}

typedef int (*option_fn)(struct tool *t, int opt, const char *arg, void *ctx);

/* Parses options (handle gets those that are not common to all commands);
 * the index of the first positional argument, or -1 after saying why.
 * Global options stop at the command name ("+"); a command's options may
 * come anywhere among its arguments (getopt moves them to the front). */
static int parse_options(struct tool *t, int argc, char **argv, const char *optstring,
			 const struct option *opts, option_fn handle, void *ctx)
{
	int opt;

	optind = 0;          /* glibc: start afresh on this argv */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		int rc;

		if (opt == '?' || opt == ':') {
			fail(t, "unknown option or missing value: %s (see --help)", argv[optind - 1]);
			return -1;
		}
		rc = common_option(t, opt, optarg);
		if (rc == 1)
			rc = handle ? handle(t, opt, optarg, ctx) : -1;
		if (rc)
			return -1;
	}
	return optind;
}

static int positional(struct tool *t, int argc, char **argv, int first, int min, int max)
{
	int n = argc - first;

	if (n < min || (max >= 0 && n > max)) {
		fail(t, "usage: %s %s %s", PROG, t->command->name, t->command->usage);
		return -1;
	}
	return n;
}

static int arg_u64(struct tool *t, const char *what, const char *s, uint64_t *v)
{
	if (parse_u64(s, v)) {
		fail(t, "%s must be a number, not '%s'", what, s);
		return -1;
	}
	return 0;
}

static int arg_u32(struct tool *t, const char *what, const char *s, uint32_t *v)
{
	if (parse_u32(s, v)) {
		fail(t, "%s must be a number below 2^32, not '%s'", what, s);
		return -1;
	}
	return 0;
}

static int arg_obj(struct tool *t, char **argv, struct osd_ctl_obj_id *id)
{
	if (arg_u64(t, "PARTITION", argv[0], &id->partition) ||
	    arg_u64(t, "OBJECT", argv[1], &id->object))
		return -1;
	return 0;
}

/* ---- key and connection --------------------------------------------------- */

static int load_key(struct tool *t)
{
	const char *why = NULL;
	int rc;

	if (!t->key_file) {
		fail(t, "needs --key-file FILE (the cluster key)");
		return -1;
	}
	rc = cluster_key_load(t->key_file, &t->key, &why);
	if (rc) {
		fail(t, "cannot load key file %s: %s", t->key_file, why ? why : strerror(-rc));
		return -1;
	}
	return 0;
}

/* Connects and pings with AUTH_PANDO, so that an unreachable target or a
 * wrong key is reported as such rather than as the command's failure. */
static int connect_target(struct tool *t)
{
	const char *ctl = t->ctl ? t->ctl : DEFAULT_CTL;
	int rc;

	if (load_key(t))
		return -1;
	t->client = osd_ctl_connect(ctl, &t->key, t->timeout_ms, &rc);
	if (!t->client) {
		if (rc == -EINVAL)
			fail(t, "--ctl wants HOST:PORT, not '%s'", ctl);
		else
			fail(t, "cannot connect to %s: %s", ctl, strerror(-rc));
		return -1;
	}
	rc = osd_ctl_null(t->client);
	if (rc == -EACCES)
		fail(t, "%s refused our credential: another cluster key (id %u), or clocks "
		     "more than 300 s apart", ctl, t->key.id);
	else if (rc == -EPROTO)
		fail(t, "%s answered with a wrong verifier: it does not hold our cluster key, "
		     "or is not a pando-osd control port", ctl);
	else if (rc)
		fail(t, "%s: %s", ctl, strerror(-rc));
	return rc ? -1 : 0;
}

/* ---- offline commands ----------------------------------------------------- */

static int opt_genkey(struct tool *t, int opt, const char *arg, void *ctx)
{
	uint32_t *id = ctx;

	if (parse_u32(arg, id) || *id == 0 || *id > UINT16_MAX) {
		fail(t, "--id wants 1..65535, not '%s'", arg);
		return -1;
	}
	return 0;
}

static int cmd_genkey(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "id", required_argument, NULL, 'i' },
					      COMMON_OPTIONS, { 0 } };
	struct cluster_key key;
	char text[160];
	uint32_t id = 1;
	int first = parse_options(t, argc, argv, "", opts, opt_genkey, &id);

	if (first < 0 || positional(t, argc, argv, first, 0, 0) < 0)
		return 1;
	if (cluster_key_generate((uint16_t)id, &key))
		return fail(t, "no randomness available");
	cluster_key_format(&key, text, sizeof(text));
	explicit_bzero(&key, sizeof(key));
	fputs(text, stdout);
	explicit_bzero(text, sizeof(text));
	return 0;
}

struct format_opts {
	const char *data_dir;
	uint32_t osd_id;
	bool have_id;
};

static int opt_format(struct tool *t, int opt, const char *arg, void *ctx)
{
	struct format_opts *o = ctx;

	if (opt == 'd') {
		o->data_dir = arg;
		return 0;
	}
	if (parse_u32(arg, &o->osd_id)) {
		fail(t, "--osd-id wants a number, not '%s'", arg);
		return -1;
	}
	o->have_id = true;
	return 0;
}

static int cmd_format(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "data-dir", required_argument, NULL, 'd' },
					      { "osd-id", required_argument, NULL, 'o' },
					      COMMON_OPTIONS, { 0 } };
	struct format_opts o = { 0 };
	struct objstore *store;
	char uuid[37];
	int first = parse_options(t, argc, argv, "", opts, opt_format, &o);
	int rc;

	if (first < 0 || positional(t, argc, argv, first, 0, 0) < 0)
		return 1;
	if (!o.data_dir || !o.have_id)
		return fail(t, "needs --data-dir DIR and --osd-id N");
	if (load_key(t))
		return 1;
	rc = objstore_format(o.data_dir, o.osd_id, t->key.id);
	if (rc == -EEXIST)
		return fail(t, "%s is already formatted", o.data_dir);
	if (rc)
		return fail(t, "cannot format %s: %s", o.data_dir, strerror(-rc));
	rc = objstore_open(o.data_dir, &store);
	if (rc)
		return fail(t, "formatted %s, but cannot open it: %s", o.data_dir, strerror(-rc));
	format_uuid(objstore_superblock(store)->uuid, uuid);
	objstore_close(store);
	printf("%s\n", uuid);
	return 0;
}

struct mint_opts {
	struct capability cap;
	bool have_osd;
	uint64_t ttl;
	bool have_ttl, have_expiry;
};

static int opt_mint(struct tool *t, int opt, const char *arg, void *ctx)
{
	struct mint_opts *o = ctx;
	int rc = 0;

	switch (opt) {
	case 'o':
		rc = parse_u32(arg, &o->cap.osd_id);
		o->have_osd = true;
		break;
	case 'r':
		if (strcmp(arg, "r") == 0)
			o->cap.rights = CAP_RIGHTS_READ;
		else if (strcmp(arg, "rw") == 0)
			o->cap.rights = CAP_RIGHTS_RW;
		else
			rc = -EINVAL;
		break;
	case 'c':
		rc = parse_u32(arg, &o->cap.cap_version);
		break;
	case 'e':
		rc = parse_u64(arg, &o->cap.expiry);
		o->have_expiry = true;
		break;
	case 't':
		rc = parse_u64(arg, &o->ttl);
		o->have_ttl = true;
		break;
	}
	if (rc)
		fail(t, "bad value '%s' (see --help)", arg);
	return rc ? -1 : 0;
}

static int cmd_mint_handle(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "osd-id", required_argument, NULL, 'o' },
					      { "rights", required_argument, NULL, 'r' },
					      { "cap-version", required_argument, NULL, 'c' },
					      { "expiry", required_argument, NULL, 'e' },
					      { "ttl", required_argument, NULL, 't' },
					      COMMON_OPTIONS, { 0 } };
	struct mint_opts o = { .cap = { .rights = CAP_RIGHTS_RW } };
	struct osd_ctl_obj_id id;
	uint8_t fh[CAPABILITY_SIZE];
	int first = parse_options(t, argc, argv, "", opts, opt_mint, &o);

	if (first < 0 || positional(t, argc, argv, first, 2, 2) < 0 ||
	    arg_obj(t, argv + first, &id))
		return 1;
	if (!o.have_osd)
		return fail(t, "needs --osd-id N (the target the handle is for)");
	if (o.have_ttl && o.have_expiry)
		return fail(t, "give --expiry or --ttl, not both");
	if (load_key(t))
		return 1;
	if (o.have_ttl)
		o.cap.expiry = (uint64_t)time(NULL) + o.ttl;
	o.cap.partition = id.partition;
	o.cap.object = id.object;
	capability_mint(&t->key, &o.cap, fh);
	print_hex(stdout, fh, sizeof(fh));
	putchar('\n');
	return 0;
}

/* ---- target-wide commands ------------------------------------------------- */

/* A command with only the common options and min..max positional
 * arguments; *first gets the index of the first. */
static int plain_args(struct tool *t, int argc, char **argv, int min, int max, int *first)
{
	static const struct option opts[] = { COMMON_OPTIONS, { 0 } };

	*first = parse_options(t, argc, argv, "", opts, NULL, NULL);
	if (*first < 0 || positional(t, argc, argv, *first, min, max) < 0)
		return -1;
	return 0;
}

/* The STATS counters in the order `stat` prints them, after the STATFS lines. */
#define COUNTER(field) { #field, offsetof(struct osd_ctl_stats, field) }
static const struct { const char *name; size_t off; } stat_counters[] = {
	COUNTER(started_ns),
	COUNTER(nfs_read_ops), COUNTER(nfs_read_bytes),
	COUNTER(nfs_write_ops), COUNTER(nfs_write_bytes),
	COUNTER(nfs_write_unstable), COUNTER(nfs_write_data_sync), COUNTER(nfs_write_file_sync),
	COUNTER(nfs_commit_ops),
	COUNTER(nfs_err_rejected), COUNTER(nfs_err_io), COUNTER(nfs_err_other),
	COUNTER(ctl_read_ops), COUNTER(ctl_read_bytes),
	COUNTER(ctl_write_ops), COUNTER(ctl_write_bytes),
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

static int cmd_stat(struct tool *t, int argc, char **argv)
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

static int cmd_ls(struct tool *t, int argc, char **argv)
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
			rc = -EPROTO;      /* no progress: the target would loop us forever */
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

static int cmd_mkpart(struct tool *t, int argc, char **argv)
{
	return partition_cmd(t, argc, argv, osd_ctl_partition_create);
}

static int cmd_rmpart(struct tool *t, int argc, char **argv)
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

static int cmd_wipe(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "uuid", required_argument, NULL, 'u' },
					      COMMON_OPTIONS, { 0 } };
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

static int cmd_flush(struct tool *t, int argc, char **argv)
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

/* ---- object commands ------------------------------------------------------ */

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

static int cmd_create(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "count", required_argument, NULL, 'n' },
					      COMMON_OPTIONS, { 0 } };
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
		total = 1;              /* no ids and no count: one picked id */
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
			failed = fail(t, "object %" PRIu64 ": %s", objects[i], strerror(-results[i]));
	return failed;
}

static int cmd_rm(struct tool *t, int argc, char **argv)
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

/* Reads until buf is full or the input ends, so writes go in whole chunks. */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int write_full(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static int set_length(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t len)
{
	struct osd_ctl_attr a = { .page = 1, .number = 1, .len = 8 };

	put_be64(a.value, len);
	return osd_ctl_setattr(c, id, &a, 1, NULL);
}

/* Writes the input over the object, then cuts the object to its length.
 * UNSTABLE writes are made durable by one FLUSH at the end; a verifier
 * that changes on the way means the target restarted and lost some. */
static int put_stream(struct tool *t, const struct osd_ctl_obj_id *id, int fd, bool sync,
		      uint8_t *buf)
{
	enum osd_ctl_stable stable = sync ? OSD_CTL_FILE_SYNC : OSD_CTL_UNSTABLE;
	uint8_t verf[8], first_verf[8];
	uint64_t off = 0;
	int rc;

	for (;;) {
		ssize_t n = read_full(fd, buf, CHUNK);

		if (n < 0)
			return fail(t, "reading input: %s", strerror((int)-n));
		if (n == 0)
			break;
		rc = osd_ctl_write(t->client, id, off, buf, (size_t)n, stable, verf);
		if (rc)
			return fail(t, "write at offset %" PRIu64 ": %s", off, strerror(-rc));
		if (off == 0)
			memcpy(first_verf, verf, sizeof(verf));
		else if (memcmp(verf, first_verf, sizeof(verf)) != 0)
			return fail(t, "the target restarted during the upload; run put again");
		off += (uint64_t)n;
	}
	rc = set_length(t->client, id, off);
	if (!rc && !sync)
		rc = osd_ctl_flush(t->client, id);
	return rc ? fail(t, "finishing the upload: %s", strerror(-rc)) : 0;
}

static int opt_sync(struct tool *t, int opt, const char *arg, void *ctx)
{
	*(bool *)ctx = true;
	return 0;
}

static int cmd_put(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "sync", no_argument, NULL, 's' },
					      COMMON_OPTIONS, { 0 } };
	bool sync = false;
	struct osd_ctl_obj_id id;
	const char *path;
	uint8_t *buf;
	int first = parse_options(t, argc, argv, "", opts, opt_sync, &sync);
	int fd, rc;

	if (first < 0 || positional(t, argc, argv, first, 3, 3) < 0 ||
	    arg_obj(t, argv + first, &id))
		return 1;
	path = argv[first + 2];
	fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(t, "cannot open %s: %s", path, strerror(errno));
	buf = malloc(CHUNK);
	if (!buf)
		rc = fail(t, "out of memory");
	else
		rc = connect_target(t) ? 1 : put_stream(t, &id, fd, sync, buf);
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return rc;
}

static int get_stream(struct tool *t, const struct osd_ctl_obj_id *id, int fd, uint8_t *buf)
{
	uint64_t off = 0;
	bool eof = false;

	while (!eof) {
		size_t n = 0;
		int rc = osd_ctl_read(t->client, id, off, buf, CHUNK, &n, &eof);

		if (rc)
			return fail(t, "read at offset %" PRIu64 ": %s", off, strerror(-rc));
		if (n == 0 && !eof)
			return fail(t, "the target sent no data before the end of the object");
		rc = write_full(fd, buf, n);
		if (rc)
			return fail(t, "writing output: %s", strerror(-rc));
		off += n;
	}
	return 0;
}

static int cmd_get(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_obj_id id;
	const char *path;
	uint8_t *buf;
	int first, fd, rc;

	if (plain_args(t, argc, argv, 2, 3, &first) || arg_obj(t, argv + first, &id) ||
	    connect_target(t))
		return 1;
	path = argc - first == 3 ? argv[first + 2] : "-";
	fd = strcmp(path, "-") == 0 ? STDOUT_FILENO
				    : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(t, "cannot create %s: %s", path, strerror(errno));
	buf = malloc(CHUNK);
	rc = buf ? get_stream(t, &id, fd, buf) : fail(t, "out of memory");
	free(buf);
	if (fd != STDOUT_FILENO && close(fd) && !rc)
		rc = fail(t, "writing %s: %s", path, strerror(errno));
	return rc;
}

static const char *const info_names[] = {
	[OBJ_ATTR_LENGTH] = "length", [OBJ_ATTR_MTIME] = "mtime_ns",
	[OBJ_ATTR_CTIME] = "ctime_ns", [OBJ_ATTR_CREATED] = "created_ns",
	[OBJ_ATTR_OWNER] = "owner_file", [OBJ_ATTR_COMPONENT] = "component",
	[OBJ_ATTR_CAP_VERSION] = "cap_version", [OBJ_ATTR_USED] = "used_bytes",
};

static void print_attr(const struct osd_ctl_attr *a)
{
	uint64_t v;

	if (a->page == OBJSTORE_ATTR_PAGE_INFO && a->number <= OBJ_ATTR_USED &&
	    info_names[a->number] && (a->len == 4 || a->len == 8)) {
		v = a->len == 4 ? get_be32(a->value) : get_be64(a->value);
		printf("%-12s %" PRIu64 "\n", info_names[a->number], v);
		return;
	}
	printf("user 0x%" PRIx32 " %" PRIu32 " ", a->page, a->number);
	print_hex(stdout, a->value, a->len);
	putchar('\n');
}

static int cmd_getattr(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_obj_id id;
	struct osd_ctl_attr *attrs = calloc(OSD_CTL_CLIENT_MAX_ATTRS, sizeof(*attrs));
	size_t n = 0;
	int first, rc;

	if (!attrs)
		return fail(t, "out of memory");
	if (plain_args(t, argc, argv, 2, 2, &first) || arg_obj(t, argv + first, &id) ||
	    connect_target(t)) {
		free(attrs);
		return 1;
	}
	rc = osd_ctl_getattr(t->client, &id, NULL, 0, attrs, OSD_CTL_CLIENT_MAX_ATTRS, &n);
	for (size_t i = 0; !rc && i < n; i++)
		print_attr(&attrs[i]);
	free(attrs);
	return rc ? fail(t, "%s", strerror(-rc)) : 0;
}

/* Page 1 takes an integer of the attribute's width; user pages take
 * 0x-prefixed hex or the string itself (empty deletes). */
static int attr_value(struct tool *t, struct osd_ctl_attr *a, const char *s)
{
	uint64_t v;
	int n;

	if (a->page == OBJSTORE_ATTR_PAGE_INFO) {
		if (arg_u64(t, "VALUE", s, &v))
			return -1;
		a->len = a->number == OBJ_ATTR_COMPONENT || a->number == OBJ_ATTR_CAP_VERSION ? 4 : 8;
		if (a->len == 4 && v > UINT32_MAX) {
			fail(t, "attribute %" PRIu32 " of page 1 is 32 bits wide", a->number);
			return -1;
		}
		if (a->len == 4)
			put_be32(a->value, (uint32_t)v);
		else
			put_be64(a->value, v);
		return 0;
	}
	if (strncmp(s, "0x", 2) == 0) {
		n = parse_hex(s + 2, a->value, sizeof(a->value));
		if (n < 0) {
			fail(t, "VALUE: bad hex, or over %u bytes", OSD_CTL_CLIENT_MAX_ATTR_LEN);
			return -1;
		}
		a->len = (uint32_t)n;
		return 0;
	}
	if (strlen(s) > sizeof(a->value)) {
		fail(t, "VALUE is over %u bytes", OSD_CTL_CLIENT_MAX_ATTR_LEN);
		return -1;
	}
	a->len = (uint32_t)strlen(s);
	memcpy(a->value, s, a->len);
	return 0;
}

static int cmd_setattr(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_obj_id id;
	struct osd_ctl_attr a = { 0 };
	int first, rc;

	if (plain_args(t, argc, argv, 5, 5, &first) || arg_obj(t, argv + first, &id) ||
	    arg_u32(t, "PAGE", argv[first + 2], &a.page) ||
	    arg_u32(t, "NUMBER", argv[first + 3], &a.number) ||
	    attr_value(t, &a, argv[first + 4]) || connect_target(t))
		return 1;
	rc = osd_ctl_setattr(t->client, &id, &a, 1, NULL);
	return rc ? fail(t, "%s", strerror(-rc)) : 0;
}

static const char *const verify_names[] = { "-", "ok", "MISMATCH", "UNREADABLE" };

/* One line per extent up to the object's length: extent, crc, whether
 * stored, what verify found. */
static int print_checksums(struct tool *t, const struct osd_ctl_obj_id *id, bool verify)
{
	size_t per_call = verify ? OSD_CTL_CLIENT_MAX_CSUMS_VERIFY : OSD_CTL_CLIENT_MAX_CSUMS;
	struct osd_ctl_extent_csum cs[OSD_CTL_CLIENT_MAX_CSUMS];
	uint64_t e = 0, extents = 1, length = 0;

	while (e < extents) {
		size_t n = 0;
		int rc = osd_ctl_checksums(t->client, id, e, per_call, verify, cs, &n, &length);

		if (rc)
			return fail(t, "%s", strerror(-rc));
		if (e == 0)
			printf("length %" PRIu64 "\n", length);
		extents = (length + OSD_CTL_CSUM_EXTENT_BYTES - 1) >> OSD_CTL_CSUM_SHIFT;
		for (size_t i = 0; i < n && e < extents; i++, e++)
			printf("%" PRIu64 " %08" PRIx32 " %s %s\n", e, cs[i].crc,
			       cs[i].stored ? "stored" : "hole", verify_names[cs[i].verify]);
		if (n == 0)
			break;
	}
	return 0;
}

static int cmd_checksums(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "verify", no_argument, NULL, 's' },
					      COMMON_OPTIONS, { 0 } };
	bool verify = false;
	struct osd_ctl_obj_id id;
	int first = parse_options(t, argc, argv, "", opts, opt_sync, &verify);

	if (first < 0 || positional(t, argc, argv, first, 2, 2) < 0 ||
	    arg_obj(t, argv + first, &id) || connect_target(t))
		return 1;
	return print_checksums(t, &id, verify);
}

static int cmd_setcap(struct tool *t, int argc, char **argv)
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

static const struct command commands[] = {
	{ "genkey", "[--id N]", cmd_genkey },
	{ "format", "--data-dir DIR --osd-id N   (offline; needs --key-file)", cmd_format },
	{ "stat", "", cmd_stat },
	{ "ls", "[PARTITION]", cmd_ls },
	{ "mkpart", "PARTITION", cmd_mkpart },
	{ "rmpart", "PARTITION", cmd_rmpart },
	{ "create", "PARTITION [OBJECT ...] [--count N]   (OBJECT 0: the target picks)",
	  cmd_create },
	{ "rm", "PARTITION OBJECT ...", cmd_rm },
	{ "put", "PARTITION OBJECT FILE|- [--sync]", cmd_put },
	{ "get", "PARTITION OBJECT [FILE|-]", cmd_get },
	{ "getattr", "PARTITION OBJECT", cmd_getattr },
	{ "setattr", "PARTITION OBJECT PAGE NUMBER VALUE", cmd_setattr },
	{ "setcap", "PARTITION OBJECT VERSION   (prints the old version)", cmd_setcap },
	{ "checksums", "PARTITION OBJECT [--verify]   (extent CRC32Cs; verify reads them back)",
	  cmd_checksums },
	{ "flush", "[PARTITION OBJECT]", cmd_flush },
	{ "mint-handle", "--osd-id N [--rights r|rw] [--cap-version V] "
	  "[--expiry UNIX_S|--ttl S] PARTITION OBJECT   (offline)", cmd_mint_handle },
	{ "wipe", "--uuid UUID   (removes every partition and object)", cmd_wipe },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [--ctl HOST:PORT] [--key-file FILE] [--timeout SECONDS] COMMAND ...\n\n"
		"commands:\n", PROG);
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %s %s\n", c->name, c->usage);
	fprintf(f, "\n--ctl defaults to %s; --timeout (per call) to 30 s.\n"
		"Ids are decimal or 0x-prefixed hex.  Errors exit 1.\n", DEFAULT_CTL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTIONS, { 0 } };
	struct tool t = { .timeout_ms = 30000 };
	const struct command *c;
	int first, rc;

	log_init(LOG_WARN, stderr);
	first = parse_options(&t, argc, argv, "+", opts, NULL, NULL);
	if (first < 0)
		return 1;
	if (first >= argc) {
		usage(stderr);
		return 1;
	}
	for (c = commands; c->name; c++)
		if (strcmp(c->name, argv[first]) == 0)
			break;
	if (!c->name)
		return fail(&t, "unknown command '%s' (see --help)", argv[first]);
	t.command = c;
	t.cmd = c->name;
	rc = c->run(&t, argc - first, argv + first);
	osd_ctl_close(t.client);
	explicit_bzero(&t.key, sizeof(t.key));
	return rc;
}
