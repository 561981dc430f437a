/*
 * ctlload: control-protocol calls one at a time, timed, through the C
 * client library (osd-target/lib, the one the metadata manager links).
 *
 * Every call is what the manager sends: AUTH_PANDO v2, a MAC over the
 * header, credential and arguments, and the reply's verifier, a MAC over
 * the results, checked.  --op null, getattr (one attribute: the logical
 * length, as the FSAL asks), write (UNSTABLE) or read, --calls of them
 * after one untimed NULL; write and read move --size bytes per call at
 * offsets (i % --span) * size of one object.
 *
 * Any failed call prints a message and exits 1.  At the end one JSON line
 * goes to stdout: op, size, calls, seconds (all calls), the mean, median,
 * min and max time per call in microseconds, and MB/s (10^6 bytes).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pando/cluster_key.h"
#include "pando/osd_ctl_client.h"

#define PAGE_INFO 1u
#define INFO_LENGTH 1u

enum op { OP_NULL, OP_GETATTR, OP_WRITE, OP_READ };
static const char *const op_names[] = { "null", "getattr", "write", "read" };

struct options {
	const char *ctl;
	const char *key_file;
	uint32_t osd_id;
	struct osd_ctl_obj_id id;
	enum op op;
	uint32_t size;
	unsigned calls;
	unsigned span;
	int timeout_ms;
};

static struct options opt = {
	.op = OP_NULL,
	.size = 1u << 20,
	.calls = 100,
	.span = 64,
	.timeout_ms = 30000,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ctlload --ctl HOST:PORT --osd-id N --key-file FILE\n"
		   "               [--op null|getattr|write|read] [--partition P --object O]\n"
		   "               [--size BYTES] [--calls N] [--span N] [--timeout S]\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int parse_op(const char *s)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strcmp(s, op_names[i]) == 0)
			return (int)i;
	return -1;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno == 0 && *s && !*end;
}

static const struct option longopts[] = {
	{ "ctl", required_argument, NULL, 'c' },
	{ "osd-id", required_argument, NULL, 'i' },
	{ "key-file", required_argument, NULL, 'k' },
	{ "op", required_argument, NULL, 'o' },
	{ "partition", required_argument, NULL, 'p' },
	{ "object", required_argument, NULL, 'b' },
	{ "size", required_argument, NULL, 's' },
	{ "calls", required_argument, NULL, 'n' },
	{ "span", required_argument, NULL, 'w' },
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option into opt; false if its value is bad. */
static bool set_option(int c, const char *arg)
{
	uint64_t v = 0;

	if (c == 'c' || c == 'k' || c == 'o') {
		if (c == 'c')
			opt.ctl = arg;
		else if (c == 'k')
			opt.key_file = arg;
		else if (parse_op(arg) < 0)
			return false;
		else
			opt.op = (enum op)parse_op(arg);
		return true;
	}
	if (!parse_u64(arg, &v))
		return false;
	switch (c) {
	case 'i':
		opt.osd_id = (uint32_t)v;
		return v <= UINT32_MAX;
	case 'p':
		opt.id.partition = v;
		return true;
	case 'b':
		opt.id.object = v;
		return true;
	case 's':
		opt.size = (uint32_t)v;
		return v >= 1 && v <= OSD_CTL_CLIENT_MAX_DATA;
	case 'n':
		opt.calls = (unsigned)v;
		return v >= 1 && v <= 10000000;
	case 'w':
		opt.span = (unsigned)v;
		return v >= 1 && v <= 1000000;
	case 't':
		opt.timeout_ms = (int)(v * 1000);
		return v >= 1 && v <= 3600;
	}
	return false;
}

static void parse_args(int argc, char **argv)
{
	int c, idx = 0;

	while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?') {
			usage(stderr);
			exit(2);
		}
		if (!set_option(c, optarg)) {
			fprintf(stderr, "ctlload: bad --%s: %s\n", longopts[idx].name, optarg);
			exit(2);
		}
	}
	if (optind != argc || !opt.ctl || !opt.key_file || !opt.osd_id) {
		usage(stderr);
		exit(2);
	}
	if ((opt.op == OP_GETATTR || opt.op == OP_WRITE || opt.op == OP_READ) &&
	    !opt.id.partition) {
		fprintf(stderr, "ctlload: --op %s needs --partition and --object\n",
			op_names[opt.op]);
		exit(2);
	}
}

/* Call number i of opt.op; 0 or a negative errno. */
static int one_call(struct osd_ctl_client *c, unsigned i, uint8_t *buf)
{
	uint64_t off = (uint64_t)(i % opt.span) * opt.size;
	struct osd_ctl_attr_key key = { PAGE_INFO, INFO_LENGTH };
	static struct osd_ctl_attr attr;
	size_t n = 0;
	bool eof = false;
	int rc;

	switch (opt.op) {
	case OP_NULL:
		return osd_ctl_null(c);
	case OP_GETATTR:
		return osd_ctl_getattr(c, &opt.id, &key, 1, &attr, 1, &n);
	case OP_WRITE:
		return osd_ctl_write(c, &opt.id, off, buf, opt.size, OSD_CTL_UNSTABLE, NULL);
	case OP_READ:
		rc = osd_ctl_read(c, &opt.id, off, buf, opt.size, &n, &eof);
		return rc ? rc : n == opt.size ? 0 : -ENODATA;
	}
	return -EINVAL;
}

static void report(const double *lat, double seconds)
{
	double *sorted = malloc(opt.calls * sizeof(*sorted));
	double sum = 0;

	if (!sorted) {
		fprintf(stderr, "ctlload: out of memory\n");
		exit(1);
	}
	memcpy(sorted, lat, opt.calls * sizeof(*sorted));
	qsort(sorted, opt.calls, sizeof(*sorted), cmp_double);
	for (unsigned i = 0; i < opt.calls; i++)
		sum += lat[i];
	printf("{\"op\": \"%s\", \"size\": %" PRIu32 ", \"calls\": %u, \"seconds\": %.6f, "
	       "\"call_us_mean\": %.1f, \"call_us_median\": %.1f, \"call_us_min\": %.1f, "
	       "\"call_us_max\": %.1f, \"mb_s\": %.1f}\n",
	       op_names[opt.op], opt.op >= OP_WRITE ? opt.size : 0, opt.calls, seconds,
	       sum / opt.calls * 1e6, sorted[opt.calls / 2] * 1e6, sorted[0] * 1e6,
	       sorted[opt.calls - 1] * 1e6,
	       opt.op >= OP_WRITE ? (double)opt.size * opt.calls / seconds / 1e6 : 0.0);
	free(sorted);
}

static struct osd_ctl_client *connect_target(void)
{
	struct cluster_key key;
	struct osd_ctl_client *c;
	const char *why = NULL;
	int rc = cluster_key_load(opt.key_file, &key, &why);

	if (rc) {
		fprintf(stderr, "ctlload: key file %s: %s\n", opt.key_file,
			why ? why : strerror(-rc));
		exit(1);
	}
	c = osd_ctl_connect(opt.ctl, &key, opt.osd_id, opt.timeout_ms, &rc);
	if (!c || (rc = osd_ctl_null(c)) != 0) {
		fprintf(stderr, "ctlload: %s: %s\n", opt.ctl, strerror(-rc));
		exit(1);
	}
	return c;
}

int main(int argc, char **argv)
{
	struct osd_ctl_client *c;
	uint8_t *buf;
	double *lat, t0, start;
	int rc;

	parse_args(argc, argv);
	buf = malloc(opt.size);
	lat = calloc(opt.calls, sizeof(*lat));
	if (!buf || !lat) {
		fprintf(stderr, "ctlload: out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < opt.size; i++)
		buf[i] = (uint8_t)(i * 131u + 7u);
	c = connect_target();
	start = now_s();
	for (unsigned i = 0; i < opt.calls; i++) {
		t0 = now_s();
		rc = one_call(c, i, buf);
		lat[i] = now_s() - t0;
		if (rc) {
			fprintf(stderr, "ctlload: %s call %u: %s\n", op_names[opt.op], i,
				strerror(-rc));
			return 1;
		}
	}
	report(lat, now_s() - start);
	osd_ctl_close(c);
	free(lat);
	free(buf);
	return 0;
}
