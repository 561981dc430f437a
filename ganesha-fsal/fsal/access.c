/* Permission checks on namespace changes.  Ganesha checks access for
 * opens, lookups and links, but leaves creating, removing and renaming
 * names to the FSAL (FSAL_VFS has the kernel check them under the
 * caller's credentials); the store does no checks of its own.  So: write
 * and search permission on every directory a change modifies, the sticky
 * bit for removals and renames, and write permission on a directory that
 * moves to another parent (its ".." changes), as Linux requires. */
#include "pando_fsal.h"

void pando_caller_cred(struct ns_cred *c)
{
	const struct user_cred *u = &op_ctx->creds;

	c->uid = u->caller_uid;
	c->gid = u->caller_gid;
	c->groups = u->caller_garray;
	c->ngroups = u->caller_glen;
}

int pando_may_change_dir(struct pando_handle *dir, struct ns_attr *out)
{
	struct ns_cred c;
	struct ns_attr a;
	int rc = ns_getattr_handle(dir->exp->mds.ns, dir->ino, dir->gen, &a);

	if (rc)
		return rc;
	if (a.type != NS_DIR)
		return -ENOTDIR;
	pando_caller_cred(&c);
	rc = ns_access(&a, &c, NS_MAY_WRITE | NS_MAY_EXEC);
	if (!rc && out)
		*out = a;
	return rc;
}

/* The entry `name` of dir may be removed or renamed away by the caller. */
int pando_may_remove(struct pando_handle *dir, const char *name)
{
	struct ns_attr d, victim;
	struct ns_cred c;
	int rc = pando_may_change_dir(dir, &d);

	if (rc)
		return rc;
	rc = ns_lookup(dir->exp->mds.ns, dir->ino, name, &victim);
	if (rc)
		return rc;
	pando_caller_cred(&c);
	return ns_sticky_allows(&d, &victim, &c);
}

int pando_may_rename(struct pando_handle *from, const char *old_name, struct pando_handle *to,
		     const char *new_name)
{
	struct ns_attr victim, target;
	struct ns_cred c;
	int rc = pando_may_remove(from, old_name);

	if (!rc)
		rc = pando_may_change_dir(to, NULL);
	if (rc)
		return rc;
	pando_caller_cred(&c);
	rc = ns_lookup(to->exp->mds.ns, to->ino, new_name, &target);
	if (rc == 0) {
		struct ns_attr d;

		rc = ns_getattr(to->exp->mds.ns, to->ino, &d);
		if (!rc)
			rc = ns_sticky_allows(&d, &target, &c);
	} else if (rc == -ENOENT) {
		rc = 0;
	}
	if (rc || from->ino == to->ino)
		return rc;
	rc = ns_lookup(from->exp->mds.ns, from->ino, old_name, &victim);
	if (!rc && victim.type == NS_DIR)
		rc = ns_access(&victim, &c, NS_MAY_WRITE);
	return rc;
}
