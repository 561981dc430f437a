/* pando-osd-tool's offline commands: genkey, format, mint-handle. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "objstore.h"
#include "osd_tool.h"
#include "pando/capability.h"

struct genkey_opts {
	uint32_t id;          /* 0: 1, or the previous key's id + 1 */
	const char *previous; /* the key file being replaced */
};

static int opt_genkey(struct tool *t, int opt, const char *arg, void *ctx)
{
	struct genkey_opts *o = ctx;

	if (opt == 'p') {
		o->previous = arg;
		return 0;
	}
	if (parse_u32(arg, &o->id) || o->id == 0 || o->id > UINT16_MAX) {
		fail(t, "--id wants 1..65535, not '%s'", arg);
		return -1;
	}
	return 0;
}

/* A rotation's new key: the current key of the file it replaces becomes
 * its previous one, and its id must differ (by default the next one). */
static int load_previous(struct tool *t, struct genkey_opts *o, struct cluster_key *old)
{
	const char *why = NULL;
	int rc = cluster_key_load(o->previous, old, &why);

	if (rc)
		return fail(t, "cannot load key file %s: %s", o->previous,
			    why ? why : strerror(-rc));
	if (!o->id)
		o->id = old->id % UINT16_MAX + 1;
	if (o->id == old->id)
		return fail(t, "--id %u is the previous key's: a new key needs a new id", o->id);
	return 0;
}

int cmd_genkey(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "id", required_argument, NULL, 'i' },
					      { "previous", required_argument, NULL, 'p' },
					      COMMON_OPTIONS,
					      { 0 } };
	struct genkey_opts o = { 0 };
	struct cluster_key key, old = { 0 };
	char text[CLUSTER_KEY_TEXT_MAX];
	int first = parse_options(t, argc, argv, "", opts, opt_genkey, &o);
	int rc = 0;

	if (first < 0 || positional(t, argc, argv, first, 0, 0) < 0)
		return 1;
	if (o.previous)
		rc = load_previous(t, &o, &old);
	if (!rc && cluster_key_generate((uint16_t)(o.id ? o.id : 1), &key))
		rc = fail(t, "no randomness available");
	if (!rc) {
		key.previous_id = old.id;
		memcpy(key.previous_secret, old.secret, sizeof(old.secret));
		cluster_key_format(&key, text, sizeof(text));
		fputs(text, stdout);
		explicit_bzero(text, sizeof(text));
	}
	explicit_bzero(&key, sizeof(key));
	explicit_bzero(&old, sizeof(old));
	return rc;
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

int cmd_format(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "data-dir", required_argument, NULL, 'd' },
					      { "osd-id", required_argument, NULL, 'o' },
					      COMMON_OPTIONS,
					      { 0 } };
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
	case 'h':
		rc = parse_u32(arg, &o->cap.holder);
		break;
	}
	if (rc)
		fail(t, "bad value '%s' (see --help)", arg);
	return rc ? -1 : 0;
}

int cmd_mint_handle(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "osd-id", required_argument, NULL, 'o' },
					      { "rights", required_argument, NULL, 'r' },
					      { "cap-version", required_argument, NULL, 'c' },
					      { "expiry", required_argument, NULL, 'e' },
					      { "ttl", required_argument, NULL, 't' },
					      { "holder", required_argument, NULL, 'h' },
					      COMMON_OPTIONS,
					      { 0 } };
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
