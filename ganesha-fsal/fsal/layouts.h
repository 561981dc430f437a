/* Layouts handed out (pNFS), the FSAL's side.
 *
 * The state machine is the grants library (../grants/grants.h: what a
 * grant, a return, a recall, a deadline and a fence do, unit-tested
 * without Ganesha), and exp->mds.grants is the one handle to it: LAYOUTGET
 * (mds.c) asks it for grants, with the holder's address and client id
 * from op_ctx, and everything else recalls, freezes and counts through
 * it.  The engine made it with its own ops (../mds/grants_ops.c: the
 * fence, the store's write-layout marks, the size settle, the watcher
 * thread) and the recall through the host (host.c).  Here: the errors
 * clients report on OSDs, and how long the manager waits for a recall.
 * Ganesha keeps each segment's struct pando_grant as its fsal_seg_data
 * and gives it back on LAYOUTCOMMIT and LAYOUTRETURN. */
#ifndef PANDO_LAYOUTS_H
#define PANDO_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "grants.h"
#include "pando_fsal.h"

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
