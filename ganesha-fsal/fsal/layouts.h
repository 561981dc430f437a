/* Layouts handed out (pNFS), recalls and fencing, per export.
 *
 * The state machine is the grants library (../grants/grants.h: what a
 * grant, a return, a recall, a deadline and a fence do, unit-tested
 * without Ganesha), and exp->grants is the FSAL's one handle to it:
 * LAYOUTGET (mds.c) asks it for grants, with the holder's address and
 * client id from op_ctx, and everything else recalls, freezes and counts
 * through it.  layouts.c is what the engine needs of Ganesha, installed
 * as its ops when the export starts: CB_LAYOUTRECALL through Ganesha's
 * up-call, the fence (a new capability version on the file's objects,
 * so the handles in its layouts go STALE), the store's write-layout
 * marks, the size settle, logging.  Beside them, the watcher thread
 * that ticks the engine each second (overdue holders fenced) and recalls
 * the layouts of files on an OSD that stops answering, and the errors
 * clients report on OSDs.  Ganesha keeps each segment's struct
 * pando_grant as its fsal_seg_data and gives it back on LAYOUTCOMMIT and
 * LAYOUTRETURN. */
#ifndef PANDO_LAYOUTS_H
#define PANDO_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "grants.h"
#include "pando_fsal.h"

/* Whether a log line a client caused may go out: at most 10 per 5 s. */
bool pando_layouts_client_may_log(void);
/* An error a client reported on an OSD (LAYOUTRETURN body, LAYOUTERROR):
 * ignored unless the OSD holds a component of the file, else a refused
 * handle (a recall, a fence) or damage, recorded. */
void pando_layouts_note_io_error(struct pando_export *exp, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum);

/* How long a write or size change through the manager waits for the
 * layouts it recalled before it answers JUKEBOX/DELAY: a client answers a
 * recall in milliseconds, and an NFSv3 client told JUKEBOX instead would
 * wait 5 s before it tries again. */
#define RECALL_WAIT_MS 2000

#endif
