/* Adding a name to an existing inode (link) and removing names (unlink,
 * rmdir).  The last name's removal deletes the inode in the same batch,
 * with a removal intent for its objects (see ns_inode.c).
 *
 * The victim's id is only known after looking the name up, but the locks
 * must be taken all at once, in order: so look up, lock both, and look
 * again; if the name moved to another inode meanwhile, start over. */
#include "ns_internal.h"

/* Internal: the entry changed between lookup and lock. */
#define RETRY 1

int ns_link(struct ns_store *s, uint64_t ino, uint64_t dir, const char *name, struct ns_attr *out)
{
	uint64_t inos[2] = { ino, dir };
	struct ns_inode *d, *r;
	struct txn t;
	size_t len;
	int rc = name_check(name, &len);

	if (!rc)
		rc = space_for_growth(s);
	if (rc)
		return rc;
	txn_begin(&t, s);
	txn_lock(&t, inos, 2);
	rc = txn_dir_open(&t, dir, &d);
	if (!rc)
		rc = txn_inode(&t, ino, &r);
	if (!rc && r->type == NS_DIR)
		rc = -EPERM;
	if (!rc && r->nlink >= NS_LINK_MAX)
		rc = -EMLINK;
	if (!rc)
		rc = dirent_absent(s, dir, name, len);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	dirent_add(&t, d, name, len, r);
	r->nlink++;
	txn_touch(&t, r);
	if (out)
		inode_to_attr(r, out);
	return txn_commit(&t, true);
}

static int victim_ok(const struct ns_inode *r, bool rmdir)
{
	if (rmdir && r->type != NS_DIR)
		return -ENOTDIR;
	if (rmdir && r->nentries)
		return -ENOTEMPTY;
	if (!rmdir && r->type == NS_DIR)
		return -EISDIR;
	return 0;
}

/* Loads the directory and the inode its name now holds, both locked.
 * The directory may have been emptied and removed since the lookup before
 * the locks: that is -ESTALE, as for any removed directory. */
static int load_locked(struct txn *t, uint64_t dir, const char *name, size_t len, uint64_t seen,
		       struct dirent_rec *e, struct ns_inode **d, struct ns_inode **r)
{
	int rc = txn_dir(t, dir, d);

	if (!rc)
		rc = dirent_get(t->s, dir, name, len, e);
	if (rc)
		return rc;
	if (e->ino != seen)
		return RETRY;
	rc = txn_inode(t, e->ino, r);
	/* A name without its inode: only corruption does that. */
	return rc == -ESTALE ? -EIO : rc;
}

static int remove_try(struct ns_store *s, uint64_t dir, const char *name, size_t len, bool rmdir)
{
	struct ns_inode *d, *r;
	struct dirent_rec e;
	uint64_t inos[2] = { dir };
	struct txn t;
	int rc = dirent_find(s, dir, name, len, &e);

	if (rc)
		return rc;
	inos[1] = e.ino;
	txn_begin(&t, s);
	txn_lock(&t, inos, 2);
	rc = load_locked(&t, dir, name, len, e.ino, &e, &d, &r);
	if (!rc)
		rc = victim_ok(r, rmdir);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	dirent_del(&t, d, name, len, &e, r->type);
	inode_unlink(&t, r);
	return txn_commit(&t, true);
}

static int remove_name(struct ns_store *s, uint64_t dir, const char *name, bool rmdir)
{
	size_t len;
	int rc = name_check(name, &len);

	if (rc)
		return rc;
	do
		rc = remove_try(s, dir, name, len, rmdir);
	while (rc == RETRY);
	return rc;
}

int ns_unlink(struct ns_store *s, uint64_t dir, const char *name)
{
	return remove_name(s, dir, name, false);
}

int ns_rmdir(struct ns_store *s, uint64_t dir, const char *name)
{
	return remove_name(s, dir, name, true);
}
