/* pando-osd-tool's attribute commands: getattr, setattr, checksums. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "objstore.h"
#include "osd_tool.h"

static const char *const info_names[] = {
	[OBJ_ATTR_LENGTH] = "length",           [OBJ_ATTR_MTIME] = "mtime_ns",
	[OBJ_ATTR_CTIME] = "ctime_ns",          [OBJ_ATTR_CREATED] = "created_ns",
	[OBJ_ATTR_OWNER] = "owner_file",        [OBJ_ATTR_COMPONENT] = "component",
	[OBJ_ATTR_CAP_VERSION] = "cap_version", [OBJ_ATTR_USED] = "used_bytes",
	[OBJ_ATTR_READ_FLOOR] = "read_floor",
};

static void print_attr(const struct osd_ctl_attr *a)
{
	uint64_t v;

	if (a->page == OBJSTORE_ATTR_PAGE_INFO && a->number <= OBJ_ATTR_READ_FLOOR &&
	    info_names[a->number] && (a->len == 4 || a->len == 8)) {
		v = a->len == 4 ? get_be32(a->value) : get_be64(a->value);
		printf("%-12s %" PRIu64 "\n", info_names[a->number], v);
		return;
	}
	printf("user 0x%" PRIx32 " %" PRIu32 " ", a->page, a->number);
	print_hex(stdout, a->value, a->len);
	putchar('\n');
}

int cmd_getattr(struct tool *t, int argc, char **argv)
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
		a->len = a->number == OBJ_ATTR_COMPONENT || a->number == OBJ_ATTR_CAP_VERSION ? 4
											      : 8;
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

int cmd_setattr(struct tool *t, int argc, char **argv)
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

int cmd_checksums(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "verify", no_argument, NULL, 's' },
					      COMMON_OPTIONS,
					      { 0 } };
	bool verify = false;
	struct osd_ctl_obj_id id;
	int first = parse_options(t, argc, argv, "", opts, opt_flag, &verify);

	if (first < 0 || positional(t, argc, argv, first, 2, 2) < 0 ||
	    arg_obj(t, argv + first, &id) || connect_target(t))
		return 1;
	return print_checksums(t, &id, verify);
}
