/* The quotas seen from the data path (the store enforces them on every
 * batch): how far a file may grow before a write reaches the OSDs or a
 * write layout is granted, so bytes past a quota are refused, not written
 * and then hidden. */
#include "mds.h"

int pando_quota_end(struct pando_mds *mds, const struct ns_attr *a, uint64_t *end)
{
	uint64_t room;
	int rc = ns_quota_room(mds->ns, a->uid, a->gid, &room);

	*end = UINT64_MAX;
	if (rc || room == UINT64_MAX)
		return rc;
	*end = a->size > UINT64_MAX - room ? UINT64_MAX : a->size + room;
	return 0;
}
