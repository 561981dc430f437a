/* POSIX permission checks on attributes the caller already has: the FSAL's
 * test_access, and the sticky-directory rule for removes and renames.
 * Mode bits only; ACLs are the FSAL's business.  And the set-id bits a
 * write clears, which the store applies in the write's own batch; and who
 * may read a user's or group's quota. */
#include "ns_internal.h"

static bool in_group(const struct ns_cred *c, uint32_t gid)
{
	if (c->gid == gid)
		return true;
	for (size_t i = 0; i < c->ngroups; i++) {
		if (c->groups[i] == gid)
			return true;
	}
	return false;
}

/* The rwx bits that apply to c: owner's, else group's, else other's. */
static unsigned class_bits(const struct ns_attr *a, const struct ns_cred *c)
{
	if (c->uid == a->uid)
		return (a->mode >> 6) & 7;
	if (in_group(c, a->gid))
		return (a->mode >> 3) & 7;
	return a->mode & 7;
}

int ns_access(const struct ns_attr *a, const struct ns_cred *c, unsigned want)
{
	want &= NS_MAY_READ | NS_MAY_WRITE | NS_MAY_EXEC;
	/* Root reads and writes anything, and executes what anyone may
	 * execute; searching a directory needs no x bit at all. */
	if (c->uid == 0) {
		if (!(want & NS_MAY_EXEC) || a->type == NS_DIR || (a->mode & 0111))
			return 0;
		return -EACCES;
	}
	return (class_bits(a, c) & want) == want ? 0 : -EACCES;
}

int ns_sticky_allows(const struct ns_attr *dir, const struct ns_attr *victim,
		     const struct ns_cred *c)
{
	if (!(dir->mode & 01000) || c->uid == 0)
		return 0;
	return c->uid == dir->uid || c->uid == victim->uid ? 0 : -EPERM;
}

uint32_t ns_setid_cleared(const struct ns_attr *a, const struct ns_cred *c)
{
	uint32_t bits = a->mode & 04000;

	if (a->type != NS_REG || c->uid == 0)
		return 0;
	/* Without group execute, set-gid is no privilege for the group's
	 * own members; anyone else could make it one (Linux 6.2+). */
	if ((a->mode & 02000) && ((a->mode & 010) || !in_group(c, a->gid)))
		bits |= 02000;
	return bits;
}

bool inode_kill_setid(struct ns_inode *r, const struct ns_cred *c)
{
	struct ns_attr a;
	uint32_t bits;

	inode_to_attr(r, &a);
	bits = ns_setid_cleared(&a, c);
	r->mode &= ~bits;
	return bits != 0;
}

int ns_owner_quota_may_read(const struct ns_owner *o, const struct ns_cred *c)
{
	if (c->uid == 0)
		return 0;
	if (o->kind == NS_OWNER_USER)
		return c->uid == o->id ? 0 : -EPERM;
	return in_group(c, o->id) ? 0 : -EPERM;
}
