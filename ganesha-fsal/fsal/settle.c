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
 * Ganesha's general fridge asks the objects how far every current mirror
 * reaches and grows the size to that, unless the file changed in between
 * (a truncate's size stands).  restart.c does the same at start for the
 * layouts a stopped manager had out.
 * It costs one OSD attribute read per component, off the request path. */
#include "pando_fsal.h"

#include "fridgethr.h"
#include "fsal_up.h"
#include "layouts.h"

struct settle_job {
	struct pando_export *exp;
	uint64_t ino;
};

static void invalidate_attrs(struct pando_export *exp, const struct ns_attr *a)
{
	uint8_t key[PANDO_FH_LEN];
	struct gsh_buffdesc handle = { .addr = key, .len = PANDO_FH_LEN };

	/* MDCACHE's up-call makes its own request context: a fridge thread
	 * has none. */
	pando_fh_encode(exp, a->ino, a->gen, NS_REG, key);
	exp->export.up_ops->invalidate(exp->export.up_ops, &handle,
				       FSAL_UP_INVALIDATE_ATTRS | FSAL_UP_INVALIDATE_CONTENT);
}

int pando_settle_size(struct pando_export *exp, uint64_t ino, const char *why, bool *grew,
		      struct ns_attr *before)
{
	struct ns_setattr sa = { .mask = NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_IF_CHANGE |
					 NS_SET_MTIME_NOW };
	uint64_t len = 0;
	int rc = ns_getattr(exp->ns, ino, before);

	*grew = false;
	if (rc == -ESTALE || (!rc && !before->objects))
		return 0; /* gone, or inline: nothing on the OSDs */
	if (!rc)
		rc = pando_objects_reach(exp, ino, &len);
	if (rc) {
		LogInfo(COMPONENT_PNFS,
			"pando: inode %" PRIu64 ": size not checked against its objects (%d)", ino,
			rc);
		return rc;
	}
	if (len <= before->size)
		return 0;
	sa.size = len;
	sa.change = before->change;
	rc = ns_setattr(exp->ns, ino, &sa, NULL);
	if (rc == -EAGAIN || rc == -ESTALE)
		return 0; /* changed or gone since: that stands */
	if (rc) {
		LogMajor(COMPONENT_PNFS,
			 "pando: inode %" PRIu64 ": size from its objects not set (%d)", ino, rc);
		return rc;
	}
	LogEvent(COMPONENT_PNFS,
		 "pando: inode %" PRIu64 ": size %" PRIu64 " -> %" PRIu64 " from its objects (%s)",
		 ino, before->size, len, why);
	*grew = true;
	return 0;
}

static void settle_job_run(struct fridgethr_context *ctx)
{
	struct settle_job *job = ctx->arg;
	struct ns_attr a;
	bool grew;
	int rc = pando_settle_size(job->exp, job->ino, "a write layout ended without LAYOUTCOMMIT",
				   &grew, &a);

	if (grew)
		invalidate_attrs(job->exp, &a);
	pando_grants_settled(job->exp->grants, job->ino, rc == 0);
	gsh_free(job);
}

void pando_settle_size_async(struct pando_export *exp, uint64_t ino)
{
	struct settle_job *job = gsh_malloc(sizeof(*job));
	int rc;

	job->exp = exp;
	job->ino = ino;
	rc = fridgethr_submit(general_fridge, settle_job_run, job);
	if (rc) {
		/* Ganesha disposes of the layouts still out when it stops,
		 * after its fridge: the record stays for the next start. */
		LogInfo(COMPONENT_PNFS,
			"pando: inode %" PRIu64 ": size check left for the next start (%d)", ino,
			rc);
		gsh_free(job);
		pando_grants_settled(exp->grants, ino, false);
	}
}
