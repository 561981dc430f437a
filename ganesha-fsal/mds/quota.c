/* The store's quota seen from the data path (ns_quota.c enforces it on
 * every batch): how far a file may grow before a write reaches the OSDs
 * or a write layout is granted, so bytes past the quota are refused, not
 * written and then hidden. */
#include "mds.h"

int pando_quota_end(struct pando_mds *mds, uint64_t size, uint64_t *end)
{
	struct ns_statfs st;
	struct ns_quota q;
	uint64_t room;
	int rc = ns_quota_get(mds->ns, &q);

	*end = UINT64_MAX;
	if (rc || !q.bytes)
		return rc;
	rc = ns_statfs(mds->ns, &st);
	if (rc)
		return rc;
	room = st.bytes < q.bytes ? q.bytes - st.bytes : 0;
	*end = size > UINT64_MAX - room ? UINT64_MAX : size + room;
	return 0;
}
