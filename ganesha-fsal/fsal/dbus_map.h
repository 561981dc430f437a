/* The dbus methods of dbus_map.c, and what they share with dbus.c. */
#ifndef PANDO_DBUS_MAP_H
#define PANDO_DBUS_MAP_H

#include "pando_fsal.h"

#include <dbus/dbus.h>

#include "gsh_dbus.h"

extern struct gsh_dbus_method pando_map_status_method;
extern struct gsh_dbus_method pando_file_map_method;
extern struct gsh_dbus_method pando_rebuild_status_method;     /* dbus_rebuild.c */
extern struct gsh_dbus_method pando_scrub_status_method;
extern struct gsh_dbus_method pando_scrub_method;

/* dbus.c: the export dbus methods act on, or NULL. */
struct pando_export *pando_dbus_first_export(void);
/* A path from the export root ("/dir/file") to its attributes. */
int pando_dbus_resolve(struct pando_export *exp, const char *path, struct ns_attr *a);

#endif
