/* Layouts handed out (pNFS), recalls and fencing, per export.
 *
 * The state machine is the grants library (../grants/grants.h: what a
 * grant, a return, a recall, a deadline and a fence do, unit-tested
 * without Ganesha).  layouts.c is its Ganesha side: CB_LAYOUTRECALL
 * through Ganesha's up-call, the fence (a new capability version on the
 * file's objects, so the handles in its layouts go STALE), the store's
 * write-layout marks, and the watcher thread that fences overdue holders
 * each second and recalls the layouts of files on an OSD that stops
 * answering.  Ganesha keeps each segment's struct pando_grant as its
 * fsal_seg_data and gives it back on LAYOUTCOMMIT and LAYOUTRETURN. */
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
/* The state machine: LAYOUTGET (mds.c) and every other caller go
 * through it. */
struct pando_grants *pando_layouts_grants(struct pando_layouts *l);

/* An error a client reported on an OSD (LAYOUTRETURN body, LAYOUTERROR):
 * ignored unless the OSD holds a component of the file, else a refused
 * handle (a recall, a fence) or damage, recorded. */
/* Whether a log line a client caused may go out: at most 10 per 5 s. */
bool pando_layouts_client_may_log(void);
void pando_layouts_note_io_error(struct pando_layouts *l, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum);

/* How long a write or size change through the manager waits for the
 * layouts it recalled before it answers JUKEBOX/DELAY: a client answers a
 * recall in milliseconds, and an NFSv3 client told JUKEBOX instead would
 * wait 5 s before it tries again. */
#define RECALL_WAIT_MS 2000

#endif
