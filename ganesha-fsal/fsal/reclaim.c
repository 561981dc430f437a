/* RecoveryBackend = fsal (patches/0145): Ganesha's records of the NFSv4
 * clients that may reclaim their state are the manager group's reclaim
 * records in etcd (../mds/reclaim.h), so the member that takes over
 * reads the old active's clients, and its grace period ends once they
 * all reclaimed (patches/0140); NFSv3 hosts likewise (nsm_hosts.c).  The
 * records outlive the export: Ganesha removes its exports before it shuts
 * the backend down. */
#include "pando_fsal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "bsd-base64.h"
#include "etcd_client.h"
#include "gsh_config.h"
#include "log.h"
#include "nfs_core.h"
#include "reclaim.h"
#include "sal_functions.h"

/* Stock Ganesha has no such function: the FSAL still loads there. */
#pragma weak nfs4_recovery_set_fsal_backend

/* The records cannot be read: tries, a second apart, before the server
 * starts with none (its clients then lose their state). */
#define READ_TRIES 30

static struct pando_reclaim *records;

/* Who the client is, as the new active compares it at reclaim: its
 * address and its owner, "ADDR-(LEN:HEX)" (recovery_fs.c's shape, the
 * owner in hex rather than escaped). */
static char *tag_of(nfs_client_id_t *clientid)
{
	const nfs_client_record_t *cl = clientid->cid_client_record;
	const char *addr = clientid->gsh_client ? clientid->gsh_client->hostaddr_str : "(unknown)";
	const unsigned char *owner = (const unsigned char *)cl->cr_client_val;
	size_t len = (size_t)cl->cr_client_val_len, cap = strlen(addr) + 2 * len + 16;
	char *tag = gsh_malloc(cap);
	int n = snprintf(tag, cap, "%s-(%zu:", addr, len);

	for (size_t i = 0; i < len; i++)
		n += snprintf(tag + n, cap - (size_t)n, "%02x", owner[i]);
	snprintf(tag + n, cap - (size_t)n, ")");
	return tag;
}

static int records_init(void)
{
	return records ? 0 : -ENOENT;
}

static void records_shutdown(void)
{
	pando_nsm_hosts_close();
	pando_reclaim_close(records);
	records = NULL;
}

struct hooks {
	add_clid_entry_hook add_clid;
	add_rfh_entry_hook add_rfh;
	size_t clients;
};

static int give_entry(void *arg, const char *tag, const char *const *revoked, size_t n_revoked)
{
	struct hooks *h = arg;
	clid_entry_t *e = h->add_clid((char *)tag);

	for (size_t i = 0; i < n_revoked; i++)
		h->add_rfh(e, (char *)revoked[i]);
	h->clients++;
	return 0;
}

static void records_read(nfs_grace_start_t *gsp, add_clid_entry_hook add_clid,
			 add_rfh_entry_hook add_rfh)
{
	struct hooks h = { .add_clid = add_clid, .add_rfh = add_rfh };
	size_t skipped = 0;
	int rc = -ENOENT;

	(void)gsp;
	for (int i = 0; records && i < READ_TRIES; i++) {
		rc = pando_reclaim_read(records, give_entry, &h, &skipped);
		if (!rc)
			break;
		LogWarn(COMPONENT_CLIENTID, "pando: the reclaim records cannot be read: %s",
			etcd_strerror(rc));
		sleep(1);
	}
	if (rc) {
		LogCrit(COMPONENT_CLIENTID,
			"pando: no reclaim records: NFSv4 clients lose their state");
		return;
	}
	if (skipped)
		LogWarn(COMPONENT_CLIENTID, "pando: %zu reclaim records are malformed: skipped",
			skipped);
	LogEvent(COMPONENT_CLIENTID, "pando: %zu NFSv4 clients may reclaim", h.clients);
	pando_nsm_hosts_list();
}

static void records_add(nfs_client_id_t *clientid)
{
	char *tag = tag_of(clientid);
	int rc = records ? pando_reclaim_add(records, clientid->cid_clientid, tag) : -ENOENT;

	if (rc && pando_client_may_log())
		LogWarn(COMPONENT_CLIENTID,
			"pando: client %" PRIx64 " (%s): no reclaim record (%s): it cannot "
			"reclaim on the next active",
			clientid->cid_clientid, tag, etcd_strerror(rc));
	clientid->cid_recov_tag = tag;
}

static void records_rm(nfs_client_id_t *clientid)
{
	int rc;

	if (!clientid->cid_recov_tag)
		return;
	gsh_free(clientid->cid_recov_tag);
	clientid->cid_recov_tag = NULL;
	rc = records ? pando_reclaim_remove(records, clientid->cid_clientid) : -ENOENT;
	if (rc && pando_client_may_log())
		LogWarn(COMPONENT_CLIENTID,
			"pando: client %" PRIx64 ": its reclaim record stays (%s)",
			clientid->cid_clientid, etcd_strerror(rc));
}

static void records_revoke(nfs_client_id_t *clientid, nfs_fh4 *fh)
{
	char handle[NAME_MAX];
	int rc = -ENOENT;

	if (base64url_encode((u_char const *)fh->nfs_fh4_val, fh->nfs_fh4_len, handle,
			     sizeof(handle)) < 0)
		rc = -ENAMETOOLONG;
	else if (records)
		rc = pando_reclaim_revoke(records, clientid->cid_clientid, handle);
	if (rc && pando_client_may_log())
		LogWarn(COMPONENT_CLIENTID,
			"pando: client %" PRIx64 ": a revoked delegation is not recorded (%s)",
			clientid->cid_clientid, etcd_strerror(rc));
}

static void records_end_grace(void)
{
	size_t removed = 0;
	int rc = records ? pando_reclaim_end_grace(records, &removed) : -ENOENT;

	pando_nsm_hosts_end_grace();
	if (rc)
		LogWarn(COMPONENT_CLIENTID,
			"pando: the reclaim records of earlier terms stay (%s): the next grace "
			"period waits for their clients too",
			etcd_strerror(rc));
	else
		LogEvent(COMPONENT_CLIENTID, "pando: grace over: %zu reclaim records removed",
			 removed);
}

static struct nfs4_recovery_backend backend = {
	.recovery_init = records_init,
	.recovery_shutdown = records_shutdown,
	.recovery_read_clids = records_read,
	.add_clid = records_add,
	.rm_clid = records_rm,
	.add_revoke_fh = records_revoke,
	.end_grace = records_end_grace,
	.nsm_monitor = pando_nsm_monitor,
	.nsm_unmonitor = pando_nsm_unmonitor,
	.nsm_notify = pando_nsm_notify,
};

int pando_reclaim_give(struct pando_mds *mds)
{
	int rc;

	if (nfs_param.nfsv4_param.recovery_backend != RECOVERY_BACKEND_FSAL) {
		LogWarn(COMPONENT_FSAL,
			"pando: group %s: RecoveryBackend is not fsal: NFSv4 clients cannot "
			"reclaim their state on the member that takes over",
			mds->cfg.mds_group);
		return 0;
	}
	if (!nfs4_recovery_set_fsal_backend) {
		LogCrit(COMPONENT_FSAL, "pando: RecoveryBackend = fsal needs ganesha-fsal/patches "
					"0145, which this ganesha.nfsd lacks");
		return -ENOSYS;
	}
	if (records) {
		LogCrit(COMPONENT_FSAL, "pando: RecoveryBackend = fsal keeps the records of one "
					"manager group per ganesha.nfsd");
		return -EEXIST;
	}
	rc = pando_group_reclaim_open(mds, "clients", &records);
	if (rc) {
		LogCrit(COMPONENT_FSAL, "pando: group %s: the reclaim records: %s",
			mds->cfg.mds_group, etcd_strerror(rc));
		return rc;
	}
	rc = pando_nsm_hosts_open(mds);
	if (rc)
		return rc;
	return nfs4_recovery_set_fsal_backend(&backend);
}
