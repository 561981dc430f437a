/* A write layout that ended without a LAYOUTCOMMIT: the size from the
 * objects.
 *
 * A pNFS writer tells the manager its file's new size only in
 * LAYOUTCOMMIT, and nothing obliges a client to send one before it
 * returns its layout, or to tell the application when one is refused
 * (stock Ganesha 4.3 refused those that came after a CLOSE had dropped a
 * return-on-close layout: the bytes, acknowledged by the OSDs' COMMIT,
 * sat past the file's size).  So when a write segment ends and no
 * LAYOUTCOMMIT came for the file since it was granted, a job on
 * one of the host's worker threads asks the objects how far every current mirror
 * reaches and grows the size to that, unless the file changed in between
 * (a truncate's size stands).  restart.c does the same at start for the
 * layouts a stopped manager had out.
 * It costs one OSD attribute read per component, off the request path. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grants.h"

int pando_settle_size(struct pando_mds *mds, uint64_t ino, const char *why, bool *grew,
		      struct ns_attr *before)
{
	/* Past the quota too: the bytes came through a layout granted within
	 * it, and the client may have been told they are safe. */
	struct ns_setattr sa = { .mask = NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_IF_CHANGE |
					 NS_SET_MTIME_NOW | NS_SET_PAST_QUOTA };
	uint64_t len = 0;
	int rc = ns_getattr(mds->ns, ino, before);

	*grew = false;
	if (rc == -ESTALE || (!rc && !before->objects))
		return 0; /* gone, or inline: nothing on the OSDs */
	if (!rc)
		rc = pando_objects_reach(mds, ino, &len);
	if (rc) {
		mds_log(MDS_LOG_INFO, __func__,
			"pando: inode %" PRIu64 ": size not checked against its objects (%d)", ino,
			rc);
		return rc;
	}
	if (len <= before->size)
		return 0;
	sa.size = len;
	sa.change = before->change;
	rc = ns_setattr(mds->ns, ino, &sa, NULL);
	if (rc == -EAGAIN || rc == -ESTALE)
		return 0; /* changed or gone since: that stands */
	if (rc) {
		mds_log(MDS_LOG_MAJOR, __func__,
			"pando: inode %" PRIu64 ": size from its objects not set (%d)", ino, rc);
		return rc;
	}
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: inode %" PRIu64 ": size %" PRIu64 " -> %" PRIu64 " from its objects (%s)",
		ino, before->size, len, why);
	*grew = true;
	return 0;
}

struct settle_job {
	struct pando_mds *mds;
	uint64_t ino;
};

static void settle_job_run(void *arg)
{
	struct settle_job *job = arg;
	struct ns_attr a;
	bool grew;
	int rc = pando_settle_size(job->mds, job->ino, "a write layout ended without LAYOUTCOMMIT",
				   &grew, &a);

	if (grew)
		job->mds->host->invalidate(job->mds, a.ino, a.gen);
	pando_grants_settled(job->mds->grants, job->ino, rc == 0);
	free(job);
}

void pando_settle_size_async(struct pando_mds *mds, uint64_t ino)
{
	struct settle_job *job = mds_malloc(sizeof(*job));
	int rc;

	job->mds = mds;
	job->ino = ino;
	rc = mds->host->submit(mds, settle_job_run, job);
	if (rc) {
		/* The host disposes of the layouts still out when it stops,
		 * after its workers: the record stays for the next start. */
		mds_log(MDS_LOG_INFO, __func__,
			"pando: inode %" PRIu64 ": size check left for the next start (%d)", ino,
			rc);
		free(job);
		pando_grants_settled(mds->grants, ino, false);
	}
}
