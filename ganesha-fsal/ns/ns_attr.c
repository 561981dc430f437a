/* getattr and setattr: mode, owner, size, times. */
#include "ns_internal.h"

#define SET_ALL \
	(NS_SET_MODE | NS_SET_UID | NS_SET_GID | NS_SET_SIZE | NS_SET_ATIME | NS_SET_MTIME | \
	 NS_SET_ATIME_NOW | NS_SET_MTIME_NOW | NS_SET_SIZE_GROW | NS_SET_LAZY | NS_SET_IF_CHANGE | \
	 NS_SET_KILL_SETID | NS_SET_PAST_QUOTA)

int ns_getattr(struct ns_store *s, uint64_t ino, struct ns_attr *out)
{
	struct ns_inode r;
	int rc = inode_load(s, ino, &r);

	if (!rc)
		inode_to_attr(&r, out);
	return rc;
}

int ns_getattr_handle(struct ns_store *s, uint64_t ino, uint32_t gen, struct ns_attr *out)
{
	struct ns_inode r;
	int rc = inode_load(s, ino, &r);

	if (!rc && r.gen != gen)
		return -ESTALE;
	if (!rc)
		inode_to_attr(&r, out);
	return rc;
}

static bool time_ok(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}

static int mask_ok(const struct ns_setattr *sa)
{
	unsigned m = sa->mask;

	if (m & ~SET_ALL)
		return -EINVAL;
	if ((m & NS_SET_SIZE_GROW) && !(m & NS_SET_SIZE))
		return -EINVAL;
	if ((m & NS_SET_PAST_QUOTA) && !(m & NS_SET_SIZE_GROW))
		return -EINVAL;
	if ((m & NS_SET_KILL_SETID) && !sa->writer)
		return -EINVAL;
	if ((m & NS_SET_ATIME) && (m & NS_SET_ATIME_NOW))
		return -EINVAL;
	if ((m & NS_SET_MTIME) && (m & NS_SET_MTIME_NOW))
		return -EINVAL;
	if ((m & NS_SET_ATIME) && !time_ok(&sa->atime))
		return -EINVAL;
	if ((m & NS_SET_MTIME) && !time_ok(&sa->mtime))
		return -EINVAL;
	return 0;
}

static int set_size(struct txn *t, struct ns_inode *r, const struct ns_setattr *sa)
{
	int rc;

	if (r->type == NS_DIR)
		return -EISDIR;
	if (r->type != NS_REG)
		return -EINVAL;
	if ((sa->mask & NS_SET_SIZE_GROW) && sa->size <= r->size)
		return 0;
	rc = data_truncate(t, r, sa->size);
	if (!rc)
		r->mtime = t->now;
	return rc;
}

/* A new owner drops set-id bits, as chown(2) does, unless the same call
 * sets the mode. */
static void set_owner(struct ns_inode *r, const struct ns_setattr *sa)
{
	if (sa->mask & NS_SET_UID)
		r->uid = sa->uid;
	if (sa->mask & NS_SET_GID)
		r->gid = sa->gid;
	if (r->type == NS_DIR || (sa->mask & NS_SET_MODE))
		return;
	r->mode &= ~04000u;
	if (r->mode & 010)
		r->mode &= ~02000u;
}

static void set_times(struct txn *t, struct ns_inode *r, const struct ns_setattr *sa)
{
	if (sa->mask & NS_SET_ATIME)
		r->atime = sa->atime;
	if (sa->mask & NS_SET_ATIME_NOW)
		r->atime = t->now;
	if (sa->mask & NS_SET_MTIME)
		r->mtime = sa->mtime;
	if (sa->mask & NS_SET_MTIME_NOW)
		r->mtime = t->now;
}

int ns_setattr(struct ns_store *s, uint64_t ino, const struct ns_setattr *sa, struct ns_attr *out)
{
	struct ns_inode *r;
	struct txn t;
	int rc = mask_ok(sa);

	if (rc)
		return rc;
	if (!sa->mask)
		return out ? ns_getattr(s, ino, out) : 0;
	txn_begin(&t, s);
	t.past_quota = sa->mask & NS_SET_PAST_QUOTA;
	txn_lock(&t, &ino, 1);
	rc = txn_inode(&t, ino, &r);
	if (!rc && (sa->mask & NS_SET_IF_CHANGE) && r->change != sa->change)
		rc = -EAGAIN;
	if (!rc && (sa->mask & NS_SET_SIZE))
		rc = set_size(&t, r, sa);
	/* The set-id bits of a write the store did not see: a no-op when
	 * there are none to clear and nothing else to do. */
	if (!rc && (sa->mask & NS_SET_KILL_SETID) && !inode_kill_setid(r, sa->writer) &&
	    sa->mask == NS_SET_KILL_SETID) {
		if (out)
			inode_to_attr(r, out);
		txn_abort(&t);
		return 0;
	}
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	if (sa->mask & (NS_SET_UID | NS_SET_GID))
		set_owner(r, sa);
	if (sa->mask & NS_SET_MODE)
		r->mode = sa->mode & 07777;
	set_times(&t, r, sa);
	txn_touch(&t, r);
	if (out)
		inode_to_attr(r, out);
	return txn_commit(&t, !(sa->mask & NS_SET_LAZY));
}
