/* The FSAL's dbus methods (dbus*.c): the method tables dbus.c registers,
 * and what those files share. */
#ifndef PANDO_DBUS_METHODS_H
#define PANDO_DBUS_METHODS_H

#include "pando_fsal.h"

#include <dbus/dbus.h>
#include <jansson.h>

#include "gsh_dbus.h"

/* The out-argument of every method that answers JSON. */
/* initialisers as macros: laid out by hand */
/* clang-format off */
#define JSON_REPLY { .name = "json", .type = "s", .direction = "out" }
#define PATH_ARG { .name = "path", .type = "s", .direction = "in" }

/* A method that takes nothing and answers (status, json). */
#define PANDO_JSON_METHOD(mname, fn) { \
	.name = (mname), .method = (fn), \
	.args = { STATUS_REPLY, JSON_REPLY, END_ARG_LIST }, \
}
/* clang-format on */
/* A method that takes a path and answers (status, json). */
#define PANDO_PATH_JSON_METHOD(mname, fn) \
	{ \
		.name = (mname), .method = (fn), \
		.args = { PATH_ARG, STATUS_REPLY, JSON_REPLY, END_ARG_LIST }, \
	}

extern struct gsh_dbus_method pando_map_status_method; /* dbus_map.c */
extern struct gsh_dbus_method pando_file_map_method;
extern struct gsh_dbus_method pando_rebuild_status_method; /* dbus_rebuild.c */
extern struct gsh_dbus_method pando_scrub_status_method;
extern struct gsh_dbus_method pando_scrub_method;
extern struct gsh_dbus_method pando_layout_set_method; /* dbus_layout.c */
extern struct gsh_dbus_method pando_layout_get_method;
extern struct gsh_dbus_method pando_transcode_status_method;
extern struct gsh_dbus_method pando_transcode_file_method;
extern struct gsh_dbus_method pando_store_snapshot_method; /* dbus_group.c */
extern struct gsh_dbus_method pando_quota_set_method;      /* dbus_quota.c */
extern struct gsh_dbus_method pando_quota_get_method;
extern struct gsh_dbus_method pando_owner_quota_set_method;
extern struct gsh_dbus_method pando_owner_quota_get_method;
extern struct gsh_dbus_method pando_owner_quota_list_method;
extern struct gsh_dbus_method pando_junction_add_method; /* dbus_junction.c */
extern struct gsh_dbus_method pando_junction_remove_method;
extern struct gsh_dbus_method pando_junction_list_method;

/* dbus.c: the export dbus methods act on, or NULL. */
struct pando_export *pando_dbus_first_export(void);
/* A path from the export root ("/dir/file") to its attributes. */
int pando_dbus_resolve(struct pando_export *exp, const char *path, struct ns_attr *a);
/* The path argument of a method and the export it is in; the refusal's
 * words ("expected a path", "no Pando export"), or NULL. */
const char *pando_dbus_path_arg(DBusMessageIter *args, const char **path,
				struct pando_export **exp);
/* The status pair, then json when it is not NULL (methods with no JSON
 * out-argument pass NULL). */
bool pando_dbus_reply_text(DBusMessage *msg, bool ok, const char *text, const char *json);
/* The status pair and j serialised, then released ("{}" for NULL: a
 * json_pack that ran out of memory). */
bool pando_dbus_reply(DBusMessage *msg, bool ok, const char *text, json_t *j);

#endif
