/* rquota: Ganesha's RQUOTA service (Linux's quota, setquota and edquota
 * over NFS) reads and sets users' and groups' quotas (ns_owners.c)
 * through these export operations, with the permissions Linux's quotactl
 * has: anyone reads their own user's and groups' quotas, root any; only
 * root sets one, on an export it may write.  Ganesha has checked the
 * client's access to the export and squashed its credentials first
 * (patches/0150).  The units are rquota's (mds/rquota.h). */
#include "pando_fsal.h"

#include <os/quota.h>

#include "nfs_exports.h"

#include "rquota.h"

static int owner_of(int quota_type, int quota_id, struct ns_owner *o)
{
	/* rquota.x carries ids as int: ids past INT32_MAX come negative. */
	o->id = (uint32_t)quota_id;
	if (quota_type == USRQUOTA)
		o->kind = NS_OWNER_USER;
	else if (quota_type == GRPQUOTA)
		o->kind = NS_OWNER_GROUP;
	else
		return -EINVAL;
	return 0;
}

static void to_fsal(const struct pando_rquota *r, fsal_quota_t *out)
{
	*out = (fsal_quota_t){ .bsize = r->bsize,
			       .bhardlimit = r->bhardlimit,
			       .bsoftlimit = r->bsoftlimit,
			       .curblocks = r->curblocks,
			       .fhardlimit = r->fhardlimit,
			       .fsoftlimit = r->fsoftlimit,
			       .curfiles = r->curfiles };
}

static int report(struct pando_export *exp, const struct ns_owner *o, fsal_quota_t *out)
{
	struct ns_quota q, used;
	struct pando_rquota r;
	int rc = ns_owner_quota_get(exp->mds.ns, o, &q, &used);

	if (rc)
		return rc;
	pando_rquota_report(&q, &used, &r);
	to_fsal(&r, out);
	return 0;
}

static fsal_status_t pando_get_quota(struct fsal_export *e, const char *path, int quota_type,
				     int quota_id, fsal_quota_t *out)
{
	struct ns_owner o;
	struct ns_cred c;
	int rc = owner_of(quota_type, quota_id, &o);

	(void)path; /* one store per export: the quota is the export's */
	pando_caller_cred(&c);
	if (!rc)
		rc = ns_owner_quota_may_read(&o, &c);
	if (!rc)
		rc = report(to_export(e), &o, out);
	return pando_status(rc);
}

static const char *kind_name(const struct ns_owner *o)
{
	return o->kind == NS_OWNER_USER ? "user" : "group";
}

static int may_set(void)
{
	if (op_ctx->creds.caller_uid != 0)
		return -EPERM;
	if (!(op_ctx->export_perms.options & EXPORT_OPTION_WRITE_ACCESS))
		return -EROFS;
	return 0;
}

static void log_set(const struct ns_owner *o, const struct ns_quota *q, int rc)
{
	const char *from = op_ctx->client ? op_ctx->client->hostaddr_str : "?";

	if (!pando_client_may_log())
		return;
	if (rc == -EINVAL)
		LogEvent(COMPONENT_FSAL,
			 "pando: rquota from %s: %s %u quota not set: a soft limit other than 0 or "
			 "the hard limit (Pando keeps hard limits only)",
			 from, kind_name(o), o->id);
	else if (rc)
		LogInfo(COMPONENT_FSAL, "pando: rquota from %s: %s %u quota not set: %s", from,
			kind_name(o), o->id, strerror(-rc));
	else
		LogEvent(COMPONENT_FSAL,
			 "pando: rquota from %s: %s %u quota set: %" PRIu64 " bytes, %" PRIu64
			 " files",
			 from, kind_name(o), o->id, q->bytes, q->files);
}

static fsal_status_t pando_set_quota(struct fsal_export *e, const char *path, int quota_type,
				     int quota_id, fsal_quota_t *in, fsal_quota_t *out)
{
	struct pando_rquota r = { .bhardlimit = in->bhardlimit,
				  .bsoftlimit = in->bsoftlimit,
				  .fhardlimit = in->fhardlimit,
				  .fsoftlimit = in->fsoftlimit };
	struct ns_quota q = { 0 };
	struct ns_owner o;
	int rc = owner_of(quota_type, quota_id, &o);

	(void)path;
	if (rc)
		return pando_status(rc);
	rc = may_set();
	if (!rc)
		rc = pando_rquota_limits(&r, &q);
	if (!rc)
		rc = ns_owner_quota_set(to_export(e)->mds.ns, &o, &q);
	log_set(&o, &q, rc);
	if (!rc && out)
		rc = report(to_export(e), &o, out);
	return pando_status(rc);
}

void pando_rquota_ops_init(struct export_ops *ops)
{
	ops->get_quota = pando_get_quota;
	ops->set_quota = pando_set_quota;
}
