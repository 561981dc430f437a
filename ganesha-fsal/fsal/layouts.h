/* Layouts handed out (pNFS), recalls and fencing, per export.
 *
 * Every segment Ganesha grants is recorded against its file (Ganesha
 * keeps the record as the segment's fsal_seg_data and gives it back on
 * LAYOUTCOMMIT and LAYOUTRETURN).  A change another client must not race
 * (a truncate, an NFSv3 write, a map change, an admin request, an OSD
 * going down) recalls the file's layouts through Ganesha's up-call; a
 * holder that has not returned them by the deadline is fenced: the file's
 * objects get a new capability version on the OSDs, so the handles in its
 * layouts go STALE, and the layouts no longer count. */
#ifndef PANDO_LAYOUTS_H
#define PANDO_LAYOUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "pando_fsal.h"

struct pando_layouts;

struct pando_seg {
	struct pando_layouts *owner;
	uint64_t ino;
	uint64_t clientid;
	char client[64];                /* the holder's address, for admins */
	bool write;                     /* iomode RW */
	bool recalled;                  /* a recall covers it */
	bool fenced;                    /* its handles were revoked */
	uint64_t epoch;                 /* the file's epoch when granted */
	uint64_t commits_at_grant;      /* the file's LAYOUTCOMMIT count then */
	struct pando_seg *next;         /* in the file's list */
};

struct pando_layout_stats {
	uint64_t files;                 /* files with layouts out now */
	uint64_t segments;              /* segments out now */
	uint64_t granted;
	uint64_t returned;
	uint64_t recalls;
	uint64_t fenced;
	uint64_t io_errors;             /* reported in LAYOUTRETURN bodies */
};

int pando_layouts_new(struct pando_export *exp, uint32_t recall_timeout_s,
		      struct pando_layouts **out);
void pando_layouts_free(struct pando_layouts *l);

/* The capability version handles for this file must carry (read from the
 * OSDs the first time after a start, then kept while layouts are out).
 * fresh: the caller just saw the file get its objects, so they carry
 * OBJIO_CAP_VERSION_NEW and the OSDs need not be asked. */
int pando_layouts_cap_version(struct pando_layouts *l, uint64_t ino,
			      const struct pando_storage_map *map, bool fresh, uint32_t *ver);
/* Records a granted segment; -EAGAIN while the file is being recalled
 * (the caller answers LAYOUTTRYLATER).  A write segment's file is first
 * recorded durably in the store (ns_wlayout_add: a crash of the manager
 * leaves its size to be settled at the next start, restart.c). */
int pando_layouts_grant(struct pando_layouts *l, uint64_t ino, uint32_t gen, bool write,
			uint32_t cap_version, struct pando_seg **out);
/* Takes back a grant that Ganesha did not keep (LAYOUTGET failed later). */
void pando_layouts_ungrant(struct pando_layouts *l, struct pando_seg *seg);
/* A write segment that ends with no LAYOUTCOMMIT of its file since its
 * grant has the file's size checked against the objects (settle.c). */
void pando_layouts_returned(struct pando_layouts *l, struct pando_seg *seg);
/* The size check pando_layouts_returned queued is done (ok: the size is
 * right, or the file changed or went meanwhile); the file's write-layout
 * record goes once nothing else needs it. */
void pando_layouts_settled(struct pando_layouts *l, uint64_t ino, bool ok);
/* A LAYOUTCOMMIT of the file went through. */
void pando_layouts_committed(struct pando_layouts *l, uint64_t ino);
/* True if a segment granted before the file's last recall: its
 * LAYOUTCOMMIT must not grow a file someone truncated since. */
bool pando_layouts_stale(struct pando_layouts *l, const struct pando_seg *seg);

/* Recalls the file's layouts (write layouts only, with writers_only)
 * held by clients other than `except` (0: none excepted).  Returns -EBUSY
 * while such layouts are still out and not fenced (the caller answers
 * DELAY and the client retries), 0 when there are none. */
int pando_layouts_recall_file(struct pando_layouts *l, uint64_t ino, uint64_t except,
			      bool writers_only, const char *why);
/* The same, then waits up to max_ms for the holders to return them: a
 * client answers a recall in milliseconds, and an NFSv3 client told
 * JUKEBOX instead would wait 5 s before it tries again.  -EBUSY if they
 * are still out then. */
int pando_layouts_recall_and_wait(struct pando_layouts *l, uint64_t ino, uint64_t except,
				  bool writers_only, const char *why, uint32_t max_ms);
/* How long a write or size change through the manager waits for the
 * layouts it recalled before it answers JUKEBOX/DELAY. */
#define RECALL_WAIT_MS 2000
/* Recalls every layout of the holder with this address ("" : all). */
int pando_layouts_recall_client(struct pando_layouts *l, const char *client, const char *why);
/* Recalls every file whose map names the OSD (it went unreachable, or
 * the cluster map took it out). */
void pando_layouts_recall_osd(struct pando_layouts *l, uint32_t osd_id, const char *why);
void pando_layouts_note_io_error(struct pando_layouts *l, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum);
void pando_layouts_stats(struct pando_layouts *l, struct pando_layout_stats *out);

/* Rebuild's handoff (rebuild.c, README "Rebuild").  Gateway writes to a
 * file's objects run between write_begin and write_end; write_begin is
 * -EBUSY (DELAY) while the file is frozen. */
int pando_layouts_write_begin(struct pando_layouts *l, uint64_t ino);
void pando_layouts_write_end(struct pando_layouts *l, uint64_t ino);
/* Starts counting the file's writes (write grants, gateway writes) and
 * returns a mark; written_since(mark) is true once one happened after it
 * (at once if a writer was already at work).  Ends with unwatch. */
uint64_t pando_layouts_watch(struct pando_layouts *l, uint64_t ino);
bool pando_layouts_written_since(struct pando_layouts *l, uint64_t ino, uint64_t mark);
void pando_layouts_unwatch(struct pando_layouts *l, uint64_t ino);
/* No new layout and no new gateway write for the file; recalls its write
 * layouts and waits until each is returned or fenced and every gateway
 * write has ended.  -ETIMEDOUT (nothing held) if that takes longer than
 * the recall timeout and a margin.  Freezes nest (a rebuild and a scrub);
 * each successful one ends with one thaw. */
int pando_layouts_freeze(struct pando_layouts *l, uint64_t ino, const char *why);
void pando_layouts_thaw(struct pando_layouts *l, uint64_t ino);
/* A layout or gateway write was refused since the freeze (scrub yields). */
bool pando_layouts_wanted(struct pando_layouts *l, uint64_t ino);
/* Write layouts out, a gateway write running, or a recall under way. */
bool pando_layouts_busy(struct pando_layouts *l, uint64_t ino);
/* How many distinct clients hold layouts now. */
uint64_t pando_layouts_holders(struct pando_layouts *l);
/* The current caller's address: IPv4 as a.b.c.d even when IPv4-mapped. */
void pando_caller_address(char *buf, size_t cap);

#endif
