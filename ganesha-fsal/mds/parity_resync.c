/* The RS write hole's other half (../fsal/write_hole.c marks the files):
 * a marked file's parity recomputed from its data, on demand and for
 * every marked file at start, before clients are served. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objio.h"

/* One marked file: its parity from its data, then the mark gone. */
int pando_write_hole_resync(struct pando_mds *mds, uint64_t ino)
{
	struct pando_storage_map *map = NULL;
	struct ns_attr a;
	struct objio io;
	int rc = ns_getattr(mds->ns, ino, &a);

	if (rc == -ESTALE || (!rc && !a.objects))
		return ns_write_hole_del(mds->ns, ino); /* gone, or inline again */
	if (!rc)
		rc = pando_objects_open(mds, ino, &io, &map);
	if (!rc && map->shape.raid == PANDO_RS)
		rc = objio_rs_resync(&io, map, a.size);
	if (map)
		pando_map_free(map);
	return rc ? rc : ns_write_hole_del(mds->ns, ino);
}

void pando_restart_resync(struct pando_mds *mds)
{
	struct pando_inos m = { 0 };
	size_t left = 0;
	int rc = ns_write_hole_list(mds->ns, pando_inos_collect, &m);

	if (rc)
		mds_log(MDS_LOG_MAJOR, __func__, "pando: listing RS row-update marks: %d", rc);
	if (m.n)
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: %zu RS file(s) were being updated when the "
			"manager stopped: recomputing their parity from their data",
			m.n);
	for (size_t i = 0; i < m.n; i++) {
		rc = pando_write_hole_resync(mds, m.ino[i]);
		if (rc) {
			left++;
			mds_log(MDS_LOG_CRIT, __func__,
				"pando: inode %" PRIu64 ": parity not recomputed "
				"(%d): a data unit cannot be read; kept for the next start, and "
				"a decode of its rows may be wrong until then",
				m.ino[i], rc);
		}
	}
	if (m.n)
		mds_log(MDS_LOG_EVENT, __func__, "pando: %zu RS file(s) resynced, %zu left",
			m.n - left, left);
	free(m.ino);
	atomic_store(&mds->parity_resynced, true);
}
