/* The manager group's dbus methods (../mds/group.c):
 *
 *   store_snapshot(s dir) -> (b, s)   a copy of the store in dir (an
 *                        absolute path that must not exist, on this
 *                        host), durable, that a new standby of the group
 *                        starts from as its Db_Path; s names the
 *                        journal's seq it holds everything up to (the
 *                        journal keeps the records after it for an
 *                        hour).  The store must have been journaled
 *                        (Mds_Group). */
#include "dbus_methods.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool store_snapshot(DBusMessageIter *args, DBusMessage *reply, DBusError *error)
{
	struct pando_export *exp = pando_dbus_first_export();
	const char *dir = NULL;
	char msg[512];
	uint64_t seq = 0;
	int rc;

	if (!args || dbus_message_iter_get_arg_type(args) != DBUS_TYPE_STRING)
		return pando_dbus_reply_text(reply, false, "expected a directory", NULL);
	dbus_message_iter_get_basic(args, &dir);
	if (dir[0] != '/')
		return pando_dbus_reply_text(reply, false, "the directory must be an absolute path",
					     NULL);
	if (!exp)
		return pando_dbus_reply_text(reply, false, "no Pando export", NULL);
	rc = pando_group_snapshot(&exp->mds, dir, &seq);
	if (rc == -ENOENT)
		snprintf(msg, sizeof(msg), "%s: the store was never journaled (no Mds_Group)", dir);
	else if (rc)
		snprintf(msg, sizeof(msg), "%s: %s", dir, strerror(-rc));
	else
		snprintf(msg, sizeof(msg), "%s: the store up to seq %" PRIu64, dir, seq);
	LogEvent(COMPONENT_FSAL, "pando: store snapshot %s", msg);
	return pando_dbus_reply_text(reply, rc == 0, msg, NULL);
}

struct gsh_dbus_method pando_store_snapshot_method = {
	.name = "store_snapshot",
	.method = store_snapshot,
	.args = { { .name = "dir", .type = "s", .direction = "in" }, STATUS_REPLY, END_ARG_LIST },
};
