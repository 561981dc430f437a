/* pando-osd-tool's messages and argument parsing: numbers, hex, the
 * options common to every command, positional arguments. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "hex.h"
#include "osd_tool.h"

int fail(const struct tool *t, const char *fmt, ...)
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

int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

int parse_u32(const char *s, uint32_t *v)
{
	uint64_t w;

	if (parse_u64(s, &w) || w > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)w;
	return 0;
}

/* Hex digits into out (at most cap bytes); dashes are skipped so a uuid
 * parses too.  The byte count, or -EINVAL. */
int parse_hex(const char *s, uint8_t *out, size_t cap)
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

void print_hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

void format_uuid(const uint8_t u[OSD_CTL_UUID_LEN], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/* The options every command accepts, before or after its name. */
int common_option(struct tool *t, int opt, const char *arg)
{
	uint32_t secs;

	switch (opt) {
	case OPT_CTL:
		t->ctl = arg;
		return 0;
	case OPT_OSD_ID:
		if (parse_u32(arg, &t->osd_id)) {
			fail(t, "--osd-id wants a number, not '%s'", arg);
			return -1;
		}
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

/* Parses options (handle gets those that are not common to all commands);
 * the index of the first positional argument, or -1 after saying why.
 * Global options stop at the command name ("+"); a command's options may
 * come anywhere among its arguments (getopt moves them to the front). */
int parse_options(struct tool *t, int argc, char **argv, const char *optstring,
		  const struct option *opts, option_fn handle, void *ctx)
{
	int opt;

	optind = 0; /* glibc: start afresh on this argv */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		int rc;

		if (opt == '?' || opt == ':') {
			fail(t, "unknown option or missing value: %s (see --help)",
			     argv[optind - 1]);
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

int positional(struct tool *t, int argc, char **argv, int first, int min, int max)
{
	int n = argc - first;

	if (n < min || (max >= 0 && n > max)) {
		fail(t, "usage: %s %s %s", PROG, t->command->name, t->command->usage);
		return -1;
	}
	return n;
}

int arg_u64(struct tool *t, const char *what, const char *s, uint64_t *v)
{
	if (parse_u64(s, v)) {
		fail(t, "%s must be a number, not '%s'", what, s);
		return -1;
	}
	return 0;
}

int arg_u32(struct tool *t, const char *what, const char *s, uint32_t *v)
{
	if (parse_u32(s, v)) {
		fail(t, "%s must be a number below 2^32, not '%s'", what, s);
		return -1;
	}
	return 0;
}

int arg_obj(struct tool *t, char **argv, struct osd_ctl_obj_id *id)
{
	if (arg_u64(t, "PARTITION", argv[0], &id->partition) ||
	    arg_u64(t, "OBJECT", argv[1], &id->object))
		return -1;
	return 0;
}

/* A command with only the common options and min..max positional
 * arguments; *first gets the index of the first. */
int plain_args(struct tool *t, int argc, char **argv, int min, int max, int *first)
{
	static const struct option opts[] = { COMMON_OPTIONS, { 0 } };

	*first = parse_options(t, argc, argv, "", opts, NULL, NULL);
	if (*first < 0 || positional(t, argc, argv, *first, min, max) < 0)
		return -1;
	return 0;
}

/* Sets the bool at ctx: --sync, --verify. */
int opt_flag(struct tool *t, int opt, const char *arg, void *ctx)
{
	*(bool *)ctx = true;
	return 0;
}
