/* The errors clients report on OSDs (layouts.h), and the rate at which
 * the lines they cause are logged. */
#include "layouts.h"

#include <stdlib.h>

#include "ratelimit.h"

/* Lines any client can cause: at most 10 per 5 s. */
static struct ratelimit client_log = RATELIMIT_INIT(5000, 10);

static bool osd_answers(struct pando_export *exp, uint32_t id)
{
	return osd_conns_ping(exp->mds.conns, id) == 0;
}

bool pando_client_may_log(void)
{
	unsigned dropped;
	bool pass = ratelimit_pass_now(&client_log, &dropped);

	if (pass && dropped)
		LogInfo(COMPONENT_PNFS, "pando: %u lines clients caused were dropped", dropped);
	return pass;
}

void pando_layouts_note_io_error(struct pando_export *exp, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum)
{
	/* A client that could not write a mirror left it behind, but its word
	 * alone does not make the mirror stale: a handle the OSD refused (a
	 * recall, a fence) says nothing of the mirror, and the client resends
	 * through the manager, which writes every mirror.  Stale only when
	 * the OSD does not answer the manager either. */
	bool refused = status == NFS4ERR_STALE || status == NFS4ERR_ACCESS ||
		       status == NFS4ERR_BADHANDLE || status == NFS4ERR_PERM ||
		       status == NFS4ERR_FHEXPIRED;
	bool answers, stale;
	int rc;

	pando_grants_count_io_error(exp->mds.grants);
	/* Only an OSD of the file's own layout: any other id would put a
	 * damage record (one per id, durable) on components it never saw. */
	if (!pando_map_uses_osd(&exp->mds, ino, osd_id)) {
		if (pando_client_may_log())
			LogInfo(COMPONENT_PNFS,
				"pando: a client reported an error from OSD %u, which holds no "
				"component of inode %" PRIu64 ": ignored",
				osd_id, ino);
		return;
	}
	answers = osd_answers(exp, osd_id);
	/* Linux reports a data server it could not use as NXIO, whether the
	 * OSD refused the handle or could not be reached: the manager asks. */
	if (refused || (status == NFS4ERR_NXIO && answers)) {
		if (pando_client_may_log())
			LogInfo(COMPONENT_PNFS,
				"pando: OSD %u refused a client's handle for inode %" PRIu64
				" (nfsstat4 %d, op %u): a recalled or fenced layout, not damage",
				osd_id, ino, status, opnum);
		return;
	}
	stale = (opnum == NFS4_OP_WRITE || opnum == NFS4_OP_COMMIT) && !answers;
	rc = ns_damage_add(exp->mds.ns, ino, osd_id, status, opnum, stale);
	if (pando_client_may_log())
		LogWarn(COMPONENT_PNFS,
			"pando: a client reported nfsstat4 %d (op %u) from OSD %u on inode %" PRIu64
			": component %s, %s",
			status, opnum, osd_id, ino, stale ? "stale" : "failing",
			rc ? "NOT recorded" : "damage recorded");
}
