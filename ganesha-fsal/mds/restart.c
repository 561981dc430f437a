/* A manager that starts after a crash or an upgrade: the files that had
 * write layouts out.
 *
 * Clients may have written bytes to the OSDs through those layouts and
 * COMMITted them there, and only their LAYOUTCOMMIT would have told this
 * manager the new size.  The patched Ganesha answers a LAYOUTCOMMIT of a
 * layout of an earlier instance with BADLAYOUT (Linux goes on; the patch
 * 0001 says why), so the manager settles those sizes itself, before it
 * serves anyone:
 *
 *   1. fence: every component object moves past its capability version,
 *      so the old layouts' handles no longer work on any OSD and no byte
 *      lands through them after step 2 (the clients are refused, return
 *      the layout, and get a new one: their writes go through that);
 *   2. settle: the size grows to what every current mirror holds;
 *   3. the record goes.
 *
 * A file whose objects cannot all be reached keeps its record for the
 * next start (and is logged); its size is still grown to what the
 * reachable mirrors hold in common. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pando_inos_collect(void *arg, uint64_t ino)
{
	struct pando_inos *w = arg;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->ino = mds_realloc(w->ino, w->cap * sizeof(*w->ino));
	}
	w->ino[w->n++] = ino;
	return 0;
}

/* 0: fenced everywhere and settled; the record can go. */
static int recover_file(struct pando_mds *mds, uint64_t ino)
{
	struct pando_storage_map *map;
	uint32_t next = 0, failed = 0;
	struct ns_attr a;
	bool grew;
	int rc = pando_map_load(mds, ino, &map);

	if (rc == -ESTALE || rc == -ENODATA)
		return 0; /* gone, or inline again: no layout can write it */
	if (rc)
		return rc;
	rc = pando_objects_fence(mds, ino, map, 0, &next, &failed);
	pando_map_free(map);
	if (rc)
		return rc;
	mds_log(MDS_LOG_INFO, __func__,
		"pando: inode %" PRIu64 ": fenced at capability version %u%s", ino, next,
		failed ? " (components not reached are stale)" : "");
	return pando_settle_size(mds, ino, "a write layout of the previous run", &grew, &a);
}

void pando_restart_settle(struct pando_mds *mds)
{
	struct pando_inos w = { 0 };
	size_t left = 0;
	int rc = ns_wlayout_list(mds->ns, pando_inos_collect, &w);

	if (rc)
		mds_log(MDS_LOG_MAJOR, __func__, "pando: listing write-layout records: %d", rc);
	if (w.n)
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: %zu file(s) had write layouts out when the manager stopped: "
			"fencing and settling their sizes",
			w.n);
	for (size_t i = 0; i < w.n; i++) {
		rc = recover_file(mds, w.ino[i]);
		if (!rc)
			rc = ns_wlayout_del(mds->ns, w.ino[i]);
		if (rc) {
			left++;
			mds_log(MDS_LOG_MAJOR, __func__,
				"pando: inode %" PRIu64
				": not settled (%d): kept for the next start",
				w.ino[i], rc);
		}
	}
	if (w.n)
		mds_log(MDS_LOG_EVENT, __func__, "pando: %zu file(s) settled, %zu left", w.n - left,
			left);
	free(w.ino);
}
