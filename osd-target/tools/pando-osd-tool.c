/* pando-osd-tool: administer one OSD target over the control protocol, or
 * a data directory offline.
 *
 *   pando-osd-tool [--ctl HOST:PORT] [--osd-id N] [--key-file FILE] [--timeout S]
 *                  COMMAND ARGS
 *
 * Every error goes to stderr as one line and exits 1. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "osd_tool.h"

/* The commands' files and families are listed in osd_tool.h. */
static const struct command commands[] = {
	{ "genkey",
	  "[--id N] [--previous KEY_FILE]   (a rotation: KEY_FILE's key is kept as previous)",
	  cmd_genkey },
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
	{ "mint-handle",
	  "--osd-id N [--rights r|rw] [--cap-version V] "
	  "[--expiry UNIX_S|--ttl S] [--holder UID] PARTITION OBJECT   (offline)",
	  cmd_mint_handle },
	{ "wipe", "--uuid UUID   (removes every partition and object)", cmd_wipe },
	{ NULL, NULL, NULL },
};

void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--ctl HOST:PORT] [--osd-id N] [--key-file FILE] [--timeout SECONDS] "
		"COMMAND ...\n\n"
		"commands:\n",
		PROG);
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %s %s\n", c->name, c->usage);
	fprintf(f,
		"\n--ctl defaults to %s and --osd-id (the target's id there, whose control "
		"key\nsigns the calls) to %d; --timeout (per call) to 30 s.\n"
		"Ids are decimal or 0x-prefixed hex.  Errors exit 1.\n",
		DEFAULT_CTL, DEFAULT_OSD_ID);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTIONS, { 0 } };
	struct tool t = { .timeout_ms = 30000, .osd_id = DEFAULT_OSD_ID };
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
