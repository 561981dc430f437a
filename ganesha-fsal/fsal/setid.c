/* Set-id bits and the writes that clear them.  A write by anyone but root
 * clears set-uid, and set-gid where group execute is set or the writer
 * is not in the file's group, as on a local file system (the rule is
 * ns_setid_cleared's).
 *
 * Bytes through the manager (io.c) clear them in the store: inline data
 * in the write's own batch, object data before the bytes go to the OSDs.
 *
 * pNFS bytes never pass the manager, and a layout is a host's, not a
 * user's: Linux shares one layout among every user of the file on that
 * host, and its LAYOUTCOMMIT carries the credential of whoever took the
 * layout.  So a write layout is never out on a file with set-id bits:
 *  - a write LAYOUTGET whose caller's writes clear them clears them
 *    first, before any byte of its can reach an OSD;
 *  - a caller whose writes keep them (root; a group member and a set-gid
 *    file without group execute) gets LAYOUTUNAVAILABLE: its host writes
 *    the file through the manager, where each WRITE carries its sender;
 *  - a mode change that sets them recalls the file's write layouts.
 * Not LAYOUTCOMMIT: the bytes are on the OSDs, readable and executable,
 * before it comes, and it may never come (a client that dies, a commit
 * Ganesha refuses). */
#include "pando_fsal.h"

#include "layouts.h"
#include "pnfs_utils.h"

#define SETID_BITS 06000u

nfsstat4 pando_setid_layoutget(struct pando_handle *h)
{
	struct ns_cred c;
	struct ns_setattr sa = { .mask = NS_SET_KILL_SETID, .writer = &c };
	struct ns_attr a;
	int rc;

	pando_caller_cred(&c);
	rc = ns_setattr(h->exp->mds.ns, h->ino, &sa, &a);
	if (rc)
		return posix2nfs4_error(-rc);
	return a.mode & SETID_BITS ? NFS4ERR_LAYOUTUNAVAILABLE : NFS4_OK;
}

int pando_setid_mode_change(struct pando_handle *h, const struct ns_setattr *sa)
{
	if (!(sa->mask & NS_SET_MODE) || !(sa->mode & SETID_BITS) || h->obj.type != REGULAR_FILE)
		return 0;
	return pando_grants_recall_and_wait(h->exp->mds.grants, h->ino, 0, true, "set-id bits set",
					    RECALL_WAIT_MS);
}
