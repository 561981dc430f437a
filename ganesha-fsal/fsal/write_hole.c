/* The RS write hole: a row update writes data units, then parity units,
 * and a manager killed in between leaves parity that disagrees with the
 * data, so a later decode would return wrong bytes.  A file is marked in
 * the store (ns_write_hole_add, durable) before its first row update, and the
 * mark goes once its updates are durable: at the end of a stable write or
 * truncate, or at the COMMIT after unstable ones.  At start, every file
 * still marked gets its parity recomputed from its data before clients
 * are served.  The handle's fields are under its rows_lock, held for
 * writing by the caller. */
#include "pando_fsal.h"

#include "objio.h"

int pando_write_hole_begin(struct pando_handle *h, bool stable)
{
	if (!h->rows_marked) {
		int rc = ns_write_hole_add(h->exp->mds.ns, h->ino);

		if (rc)
			return rc;
		h->rows_marked = true;
	}
	if (!stable)
		h->rows_unstable = true;
	return 0;
}

void pando_write_hole_end(struct pando_handle *h, int rc)
{
	/* A failed update may have left a row half written: the mark stays
	 * for the next start (or the next COMMIT's success) to settle. */
	if (rc || h->rows_unstable || !h->rows_marked)
		return;
	if (ns_write_hole_del(h->exp->mds.ns, h->ino) == 0)
		h->rows_marked = false;
}

void pando_write_hole_committed(struct pando_handle *h)
{
	pthread_rwlock_wrlock(&h->rows_lock);
	h->rows_unstable = false;
	pando_write_hole_end(h, 0);
	pthread_rwlock_unlock(&h->rows_lock);
}

void pando_write_hole_resync_now(struct pando_handle *h)
{
	int rc;

	pthread_rwlock_wrlock(&h->rows_lock);
	/* Whatever this handle knows: the lost row updates may have come
	 * through one Ganesha's cache evicted since (unstable.h). */
	rc = pando_write_hole_resync(&h->exp->mds, h->ino);
	if (!rc) {
		h->rows_marked = false;
		h->rows_unstable = false;
	} else {
		LogCrit(COMPONENT_FSAL,
			"pando: inode %" PRIu64 ": parity not recomputed (%d) "
			"after an OSD lost unstable writes: kept for the next start",
			h->ino, rc);
	}
	pthread_rwlock_unlock(&h->rows_lock);
}
