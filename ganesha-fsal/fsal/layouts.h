/* Layouts handed out (pNFS), recalls and fencing, per export.
 *
 * The state machine is the grants library (../grants/grants.h: what a
 * grant, a return, a recall, a deadline and a fence do, unit-tested
 * without Ganesha).  layouts.c is its Ganesha side: the holder's address
 * and client id from op_ctx, CB_LAYOUTRECALL through Ganesha's up-call,
 * the fence (a new capability version on the file's objects, so the
 * handles in its layouts go STALE), the store's write-layout marks, and
 * the watcher thread that fences overdue holders each second and recalls
 * the layouts of files on an OSD that stops answering.  Ganesha keeps
 * each segment's struct pando_grant as its fsal_seg_data and gives it
 * back on LAYOUTCOMMIT and LAYOUTRETURN. */
#ifndef PANDO_LAYOUTS_H
#define PANDO_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "grants.h"
#include "pando_fsal.h"

struct pando_layouts;

int pando_layouts_new(struct pando_export *exp, uint32_t recall_timeout_s,
		      struct pando_layouts **out);
void pando_layouts_free(struct pando_layouts *l);
/* The state machine, for the calls below that need nothing of Ganesha. */
struct pando_grants *pando_layouts_grants(struct pando_layouts *l);

/* The capability version handles for this file must carry (read from the
 * OSDs the first time after a start, then kept while layouts are out).
 * fresh: the caller just saw the file get its objects, so they carry
 * OBJIO_CAP_VERSION_NEW and the OSDs need not be asked. */
int pando_layouts_cap_version(struct pando_layouts *l, uint64_t ino,
			      const struct pando_storage_map *map, bool fresh, uint32_t *ver);
/* Records a segment granted to the caller (op_ctx); -EAGAIN while the
 * file is being recalled or is frozen (the caller answers
 * LAYOUTTRYLATER).  A write segment's file is first recorded durably in
 * the store (ns_wlayout_add: a crash of the manager leaves its size to be
 * settled at the next start, restart.c).  Ganesha gives the segment back
 * with pando_grant_end (grants.h); a write segment that ends with no
 * LAYOUTCOMMIT of its file since its grant has the file's size checked
 * against the objects (settle.c, then pando_grants_settled). */
int pando_layouts_grant(struct pando_layouts *l, uint64_t ino, uint32_t gen, bool write,
			uint32_t cap_version, struct pando_grant **out);
/* Recalls every layout of the holder with this address ("" : all),
 * IPv4-mapped or not. */
int pando_layouts_recall_client(struct pando_layouts *l, const char *client, const char *why);
/* An error a client reported on an OSD (LAYOUTRETURN body, LAYOUTERROR):
 * ignored unless the OSD holds a component of the file, else a refused
 * handle (a recall, a fence) or damage, recorded. */
/* Whether a log line a client caused may go out: at most 10 per 5 s. */
bool pando_layouts_client_may_log(void);
void pando_layouts_note_io_error(struct pando_layouts *l, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum);
/* The current caller's address: IPv4 as a.b.c.d even when IPv4-mapped. */
void pando_caller_address(char *buf, size_t cap);

/* How long a write or size change through the manager waits for the
 * layouts it recalled before it answers JUKEBOX/DELAY: a client answers a
 * recall in milliseconds, and an NFSv3 client told JUKEBOX instead would
 * wait 5 s before it tries again. */
#define RECALL_WAIT_MS 2000

#endif
