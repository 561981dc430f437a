/* Private to pando-osd-tool's files: the tool's state, the command table's
 * entry, and the argument and connection helpers every command uses. */
#ifndef PANDO_OSD_TOOL_H
#define PANDO_OSD_TOOL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pando/cluster_key.h"
#include "pando/osd_ctl_client.h"

#define PROG "pando-osd-tool"
#define DEFAULT_CTL "127.0.0.1:20591"
#define DEFAULT_OSD_ID 1 /* the target DEFAULT_CTL is in osd.1.conf */
#define CHUNK OSD_CTL_CLIENT_MAX_DATA

struct command;

struct tool {
	const struct command *command;
	const char *cmd; /* the command's name, for messages */
	const char *ctl;
	uint32_t osd_id; /* the target's: its control key is derived for it */
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

/* The options every command accepts, before or after its name. */
enum { OPT_CTL = 1000, OPT_OSD_ID, OPT_KEY_FILE, OPT_TIMEOUT, OPT_HELP };
/* format and mint-handle list their own --osd-id first, which getopt takes. */
/* initialisers as a macro: laid out by hand */
/* clang-format off */
#define COMMON_OPTIONS \
	{ "ctl", required_argument, NULL, OPT_CTL }, \
	{ "osd-id", required_argument, NULL, OPT_OSD_ID }, \
	{ "key-file", required_argument, NULL, OPT_KEY_FILE }, \
	{ "timeout", required_argument, NULL, OPT_TIMEOUT }, \
	{ "help", no_argument, NULL, OPT_HELP }
/* clang-format on */

/* A command's own option: 0, or -1 after saying why. */
typedef int (*option_fn)(struct tool *t, int opt, const char *arg, void *ctx);

/* tool_args.c: messages, numbers, options and positional arguments.
 * fail prints "pando-osd-tool: COMMAND: ..." on stderr and returns 1. */
int fail(const struct tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int parse_u64(const char *s, uint64_t *v);
int parse_u32(const char *s, uint32_t *v);
int parse_hex(const char *s, uint8_t *out, size_t cap);
void print_hex(FILE *f, const uint8_t *p, size_t n);
void format_uuid(const uint8_t u[OSD_CTL_UUID_LEN], char out[37]);
int parse_options(struct tool *t, int argc, char **argv, const char *optstring,
		  const struct option *opts, option_fn handle, void *ctx);
int positional(struct tool *t, int argc, char **argv, int first, int min, int max);
int plain_args(struct tool *t, int argc, char **argv, int min, int max, int *first);
int opt_flag(struct tool *t, int opt, const char *arg, void *ctx);
int arg_u64(struct tool *t, const char *what, const char *s, uint64_t *v);
int arg_u32(struct tool *t, const char *what, const char *s, uint32_t *v);
int arg_obj(struct tool *t, char **argv, struct osd_ctl_obj_id *id);

/* tool_target.c: the cluster key and the connection to the target. */
int load_key(struct tool *t);
int connect_target(struct tool *t);

/* pando-osd-tool.c */
void usage(FILE *f);

/* The commands, one family per file: cmd_offline.c, cmd_target.c,
 * cmd_object.c, cmd_data.c, cmd_attr.c. */
int cmd_genkey(struct tool *t, int argc, char **argv);
int cmd_format(struct tool *t, int argc, char **argv);
int cmd_mint_handle(struct tool *t, int argc, char **argv);
int cmd_stat(struct tool *t, int argc, char **argv);
int cmd_ls(struct tool *t, int argc, char **argv);
int cmd_mkpart(struct tool *t, int argc, char **argv);
int cmd_rmpart(struct tool *t, int argc, char **argv);
int cmd_wipe(struct tool *t, int argc, char **argv);
int cmd_flush(struct tool *t, int argc, char **argv);
int cmd_create(struct tool *t, int argc, char **argv);
int cmd_rm(struct tool *t, int argc, char **argv);
int cmd_setcap(struct tool *t, int argc, char **argv);
int cmd_put(struct tool *t, int argc, char **argv);
int cmd_get(struct tool *t, int argc, char **argv);
int cmd_getattr(struct tool *t, int argc, char **argv);
int cmd_setattr(struct tool *t, int argc, char **argv);
int cmd_checksums(struct tool *t, int argc, char **argv);

#endif
