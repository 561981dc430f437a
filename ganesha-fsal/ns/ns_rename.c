/* rename, with every case POSIX names: over a file, over an empty
 * directory, -ENOTEMPTY, -EISDIR / -ENOTDIR mismatches, a directory moved
 * under itself (-EINVAL), two names of one inode (nothing to do), and
 * across directories with the parents' link counts.  One durable batch.
 *
 * Locks: the two directories and the two inodes the names hold, taken at
 * once after a lookup and checked again under the lock (as in ns_link.c).
 * A cross-directory rename also takes rename_lock first, as Linux takes
 * s_vfs_rename_mutex: only such renames change a directory's parent, so
 * while it is held the walk up from the target cannot be fooled by a
 * concurrent move that would close a loop. */
#include "ns_internal.h"

#define RETRY 1
/* Deeper than any path can be: past it the parent chain must be a loop. */
#define DEPTH_MAX 65536

struct rename_args {
	uint64_t sdir;
	uint64_t ddir;
	const char *sname;
	const char *dname;
	size_t slen;
	size_t dlen;
};

/* The two inodes in the game: what the names hold under the lock. */
struct rename_state {
	struct ns_inode *sd, *dd, *src, *dst; /* dst NULL: free name */
	struct dirent_rec se, de;
};

static int load_dirs(struct txn *t, const struct rename_args *a, struct rename_state *st)
{
	int rc = txn_dir(t, a->sdir, &st->sd);

	return rc ? rc : txn_dir_open(t, a->ddir, &st->dd);
}

/* Both names as the lookups before the lock saw them, or RETRY. */
static int load_entries(struct txn *t, const struct rename_args *a, uint64_t src_seen,
			uint64_t dst_seen, struct rename_state *st)
{
	int rc = dirent_get(t->s, a->sdir, a->sname, a->slen, &st->se);

	if (!rc && st->se.ino != src_seen)
		return RETRY;
	if (rc == -ENOENT)
		return RETRY;
	if (!rc)
		rc = dirent_get(t->s, a->ddir, a->dname, a->dlen, &st->de);
	if (rc == -ENOENT) {
		st->de.ino = 0;
		rc = 0;
	}
	if (!rc && st->de.ino != dst_seen)
		return RETRY;
	if (!rc)
		rc = txn_inode(t, st->se.ino, &st->src);
	st->dst = NULL;
	if (!rc && st->de.ino)
		rc = txn_inode(t, st->de.ino, &st->dst);
	/* A name without its inode: only corruption does that. */
	return rc == -ESTALE ? -EIO : rc;
}

static int check_kinds(const struct ns_inode *src, const struct ns_inode *dst)
{
	/* A junction is another volume, whose name is in its blob (the path
	 * clients are referred from): it stays where it is. */
	if ((src->flags & IF_JUNCTION) || (dst && (dst->flags & IF_JUNCTION)))
		return -EXDEV;
	if (!dst)
		return 0;
	if (src->type == NS_DIR && dst->type != NS_DIR)
		return -ENOTDIR;
	if (src->type != NS_DIR && dst->type == NS_DIR)
		return -EISDIR;
	if (dst->type == NS_DIR && dst->nentries)
		return -ENOTEMPTY;
	return 0;
}

/* -EINVAL if dir is moved, or lies below it.  Caller holds rename_lock. */
static int check_loop(struct ns_store *s, uint64_t moved, uint64_t dir)
{
	struct ns_inode r;

	for (int depth = 0; depth < DEPTH_MAX; depth++) {
		int rc;

		if (dir == moved)
			return -EINVAL;
		if (dir == NS_ROOT_INO)
			return 0;
		rc = inode_load(s, dir, &r);
		if (rc)
			return rc == -ESTALE ? -EIO : rc;
		dir = r.parent;
	}
	db_say(s, "directory %llu: parent chain does not reach the root", (unsigned long long)dir);
	return -EIO;
}

static void apply(struct txn *t, const struct rename_args *a, struct rename_state *st)
{
	uint8_t k[KEY_MAX];

	if (st->dst) {
		dirent_del(t, st->dd, a->dname, a->dlen, &st->de, st->dst->type);
		inode_unlink(t, st->dst);
	}
	if (st->sd == st->dd) {
		/* Same directory: the entry keeps its cookie, under its new name. */
		rocksdb_writebatch_delete(t->b, (const char *)k,
					  key_dirent(k, a->sdir, a->sname, a->slen));
		dirent_put(t, a->ddir, a->dname, a->dlen, &st->se, st->src->type);
		txn_touch_data(t, st->sd);
	} else {
		dirent_del(t, st->sd, a->sname, a->slen, &st->se, st->src->type);
		dirent_add(t, st->dd, a->dname, a->dlen, st->src);
		if (st->src->type == NS_DIR)
			st->src->parent = a->ddir;
	}
	txn_touch(t, st->src);
}

static int rename_try(struct ns_store *s, const struct rename_args *a)
{
	struct dirent_rec se, de = { 0 };
	struct rename_state st;
	uint64_t inos[4] = { a->sdir, a->ddir };
	struct txn t;
	int rc = dirent_find(s, a->sdir, a->sname, a->slen, &se);

	if (rc)
		return rc;
	rc = dirent_find(s, a->ddir, a->dname, a->dlen, &de);
	if (rc && rc != -ENOENT)
		return rc;
	if (rc)
		de.ino = 0;
	inos[2] = se.ino;
	inos[3] = de.ino;
	txn_begin(&t, s);
	txn_lock(&t, inos, de.ino ? 4 : 3);
	rc = load_dirs(&t, a, &st);
	if (!rc)
		rc = load_entries(&t, a, se.ino, de.ino, &st);
	if (!rc && st.src == st.dst) {
		txn_abort(&t);
		return 0;
	}
	/* Loops first, as Linux checks them. */
	if (!rc && st.src->type == NS_DIR && a->sdir != a->ddir)
		rc = check_loop(s, st.src->ino, a->ddir);
	if (!rc)
		rc = check_kinds(st.src, st.dst);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	apply(&t, a, &st);
	return txn_commit(&t, true);
}

int ns_rename(struct ns_store *s, uint64_t sdir, const char *sname, uint64_t ddir,
	      const char *dname)
{
	struct rename_args a = { .sdir = sdir, .ddir = ddir, .sname = sname, .dname = dname };
	bool cross = sdir != ddir;
	int rc = name_check(sname, &a.slen);

	if (!rc)
		rc = name_check(dname, &a.dlen);
	if (rc)
		return rc;
	if (cross)
		pthread_mutex_lock(&s->rename_lock);
	do
		rc = rename_try(s, &a);
	while (rc == RETRY);
	if (cross)
		pthread_mutex_unlock(&s->rename_lock);
	return rc;
}
