/* What the engine asks of Ganesha (../mds/mds.h, struct pando_mds_host):
 * CB_LAYOUTRECALL through Ganesha's up-call, jobs on its general fridge,
 * MDCACHE's attributes dropped when a file changed behind it, and a stop
 * as on SIGTERM. */
#include "pando_fsal.h"

#include <signal.h>
#include <unistd.h>

#include "fridgethr.h"
#include "fsal_up.h"
#include "grants.h"

static struct pando_export *export_of(struct pando_mds *mds)
{
	return container_of(mds, struct pando_export, mds);
}

static const enum layoutrecall_howspec recall_how[] = {
	[PANDO_RECALL_ALL] = layoutrecall_not_specced,
	[PANDO_RECALL_ALL_BUT] = layoutrecall_howspec_complement,
	[PANDO_RECALL_ONLY] = layoutrecall_howspec_exactly,
};

static void recall(struct pando_mds *mds, const struct pando_recall *r)
{
	struct pando_export *exp = export_of(mds);
	struct pnfs_segment whole = { .io_mode = LAYOUTIOMODE4_ANY,
				      .offset = 0,
				      .length = NFS4_UINT64_MAX };
	struct layoutrecall_spec spec = { .how = recall_how[r->scope], .u.client = r->clientid };
	uint8_t key[PANDO_FH_LEN];
	struct gsh_buffdesc handle = { .addr = key, .len = PANDO_FH_LEN };
	fsal_status_t st;

	if (!r->client)
		LogEvent(COMPONENT_PNFS, "pando: recalling the layouts of inode %" PRIu64 " (%s)",
			 r->ino, r->why);
	else
		LogEvent(COMPONENT_PNFS, "pando: recalling inode %" PRIu64 " from %s (%s)", r->ino,
			 *r->client ? r->client : "every client", r->why);
	pando_fh_encode(exp, r->ino, r->gen, NS_REG, key);
	/* Asynchronous: the up-call takes state locks a caller may hold. */
	st = up_async_layoutrecall(general_fridge, exp->export.up_ops, &handle, LAYOUT4_FLEX_FILES,
				   true, &whole, NULL, r->scope == PANDO_RECALL_ALL ? NULL : &spec,
				   NULL, NULL);
	if (FSAL_IS_ERROR(st))
		LogMajor(COMPONENT_PNFS, "pando: recall of inode %" PRIu64 " not sent: %s", r->ino,
			 msg_fsal_err(st.major));
}

struct fridge_job {
	void (*fn)(void *job);
	void *job;
};

static void run_job(struct fridgethr_context *ctx)
{
	struct fridge_job *j = ctx->arg;

	j->fn(j->job);
	gsh_free(j);
}

static int submit(struct pando_mds *mds, void (*fn)(void *job), void *job)
{
	struct fridge_job *j = gsh_malloc(sizeof(*j));
	int rc;

	j->fn = fn;
	j->job = job;
	rc = fridgethr_submit(general_fridge, run_job, j);
	if (rc) {
		gsh_free(j);
		return -rc;
	}
	return 0;
}

static void invalidate(struct pando_mds *mds, uint64_t ino, uint32_t gen)
{
	struct pando_export *exp = export_of(mds);
	uint8_t key[PANDO_FH_LEN];
	struct gsh_buffdesc handle = { .addr = key, .len = PANDO_FH_LEN };

	/* MDCACHE's up-call makes its own request context: a fridge thread
	 * has none. */
	pando_fh_encode(exp, ino, gen, NS_REG, key);
	exp->export.up_ops->invalidate(exp->export.up_ops, &handle,
				       FSAL_UP_INVALIDATE_ATTRS | FSAL_UP_INVALIDATE_CONTENT);
}

/* Ganesha's signal thread takes SIGTERM as an admin's shutdown. */
static void shutdown_server(struct pando_mds *mds)
{
	(void)mds;
	kill(getpid(), SIGTERM);
}

const struct pando_mds_host pando_host = {
	.recall = recall,
	.submit = submit,
	.invalidate = invalidate,
	.shutdown = shutdown_server,
};
