/* Referrals (RFC 8881 sections 11.9 and 11.16): a junction (ns_junction.c)
 * is a directory in the root that stands for a volume another manager
 * group serves.  Ganesha asks is_referral on GETFH, GETATTR and READDIR;
 * for a junction GETFH answers NFS4ERR_MOVED, and the client then asks for
 * fs_locations, which getattrs fills from the junction's blob
 * (mds/junction.h): fs_root, the junction's path under the export's pseudo
 * path (Linux compares it with the path it walked); rootpath, the volume's
 * path on its servers; the servers.  A junction has an fsid of its own
 * (pando_fsid): Linux refuses a referral whose fsid is its parent's. */
#include "pando_fsal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "junction.h"
#include "nfs4_fs_locations.h"

static fsal_fs_locations_t *locations_new(const struct pando_junction *j)
{
	char fs_root[MAXPATHLEN];
	const char *pseudo = op_ctx && op_ctx->ctx_pseudopath ? CTX_PSEUDOPATH(op_ctx) : "";
	fsal_fs_locations_t *loc;
	int n;

	/* The pseudo path of an export at the root is "/". */
	n = snprintf(fs_root, sizeof(fs_root), "%s/%s", strcmp(pseudo, "/") ? pseudo : "",
		     j->volume);
	if (n < 0 || (size_t)n >= sizeof(fs_root))
		return NULL;
	loc = nfs4_fs_locations_new(fs_root, j->path, j->servers);
	if (!loc)
		return NULL;
	for (uint32_t i = 0; i < j->servers; i++)
		utf8string_dup(&loc->server[i], j->server[i], strlen(j->server[i]));
	loc->nservers = j->servers;
	return loc;
}

int pando_referral_attrs(struct pando_handle *h, struct fsal_attrlist *out)
{
	struct pando_junction j;
	fsal_fs_locations_t *loc;
	void *blob = NULL;
	size_t len;
	int rc = ns_junction_get(h->exp->mds.ns, h->ino, &blob, &len);

	if (!rc)
		rc = pando_junction_decode(blob, len, &j);
	free(blob);
	if (rc) {
		if (pando_client_may_log())
			LogCrit(COMPONENT_FSAL, "pando: junction %" PRIu64 " unreadable: %s",
				h->ino, strerror(-rc));
		return rc;
	}
	loc = locations_new(&j);
	if (!loc)
		return -ENAMETOOLONG;
	nfs4_fs_locations_release(out->fs_locations);
	out->fs_locations = loc;
	FSAL_SET_MASK(out->valid_mask, ATTR4_FS_LOCATIONS);
	return 0;
}

/* Asked on every GETFH and GETATTR, and for each entry READDIR returns:
 * the handle's flag, which cannot change (ns_junction.c), costs no read. */
static bool pando_is_referral(struct fsal_obj_handle *o, struct fsal_attrlist *attrs,
			      bool cache_attrs)
{
	return container_of(o, struct pando_handle, obj)->junction;
}

void pando_referral_ops_init(struct fsal_obj_ops *ops)
{
	ops->is_referral = pando_is_referral;
}
