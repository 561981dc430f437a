/* Making new names for new inodes: create (with NFS's create modes), mkdir,
 * mknod, symlink, and junctions.  Each is one durable batch: the inode,
 * its entry and index keys, the directory's new record, for a symlink its
 * target, for a junction its blob (ns_junction.c), and the directory's
 * storage policy, if it has one (ns_policy.c). */
#include "ns_internal.h"

#include <string.h>

/* What a new inode is to be, beyond struct ns_new. */
struct make {
	uint8_t type;
	const struct ns_new *in;
	const char *target; /* NS_LNK */
	size_t tlen;
	const uint8_t *verf;  /* exclusive create */
	const void *junction; /* ns_mkjunction: the blob */
	size_t jlen;
};

static void make_extras(struct txn *t, struct ns_inode *r, const struct make *m, uint64_t dir)
{
	uint8_t k[ID_KEY_LEN];

	if (r->type == NS_DIR)
		r->parent = dir;
	if (m->verf) {
		memcpy(r->verf, m->verf, NS_VERF_LEN);
		r->flags |= IF_VERF;
	}
	if (m->junction)
		junction_put(t, r, m->junction, m->jlen);
	if (r->type == NS_LNK) {
		rocksdb_writebatch_put(t->b, (const char *)k, key_id(k, K_SYMLINK, r->ino),
				       m->target, m->tlen);
		r->size = m->tlen;
	}
}

static int make_entry(struct ns_store *s, uint64_t dir, const char *name, const struct make *m,
		      struct ns_attr *out)
{
	struct ns_inode *d, *r;
	struct txn t;
	size_t len;
	int rc = name_check(name, &len);

	if (!rc)
		rc = space_for_growth(s);
	if (rc)
		return rc;
	txn_begin(&t, s);
	txn_lock(&t, &dir, 1);
	rc = txn_dir_open(&t, dir, &d);
	if (!rc)
		rc = dirent_absent(s, dir, name, len);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	r = inode_new(&t, m->type, m->in);
	rc = policy_inherit(&t, dir, r->ino);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	make_extras(&t, r, m, dir);
	dirent_add(&t, d, name, len, r);
	if (out)
		inode_to_attr(r, out);
	return txn_commit(&t, true);
}

/* The name is taken: is it the file this create may return? */
static int existing_ok(struct ns_store *s, uint64_t dir, const char *name, enum ns_createmode how,
		       const uint8_t *verf, struct ns_attr *out)
{
	struct dirent_rec d;
	struct ns_inode r;
	size_t len;
	int rc = name_check(name, &len);

	if (!rc)
		rc = dirent_get(s, dir, name, len, &d);
	if (!rc)
		rc = inode_load(s, d.ino, &r);
	if (rc)
		return rc == -ESTALE ? -ENOENT : rc;
	if (r.type != NS_REG)
		return -EEXIST;
	if (how == NS_EXCLUSIVE && (!(r.flags & IF_VERF) || memcmp(r.verf, verf, NS_VERF_LEN) != 0))
		return -EEXIST;
	if (out)
		inode_to_attr(&r, out);
	return 0;
}

int ns_create(struct ns_store *s, uint64_t dir, const char *name, const struct ns_new *in,
	      enum ns_createmode how, const uint8_t verf[NS_VERF_LEN], struct ns_attr *out,
	      bool *existed)
{
	struct make m = { .type = NS_REG, .in = in };
	int rc;

	if (how == NS_EXCLUSIVE)
		m.verf = verf;
	if (existed)
		*existed = false;
	for (;;) {
		rc = make_entry(s, dir, name, &m, out);
		if (rc != -EEXIST || how == NS_GUARDED)
			return rc;
		rc = existing_ok(s, dir, name, how, verf, out);
		/* Removed since make_entry saw it: try again. */
		if (rc != -ENOENT)
			break;
	}
	if (!rc && existed)
		*existed = true;
	return rc;
}

int ns_mkdir(struct ns_store *s, uint64_t dir, const char *name, const struct ns_new *in,
	     struct ns_attr *out)
{
	struct make m = { .type = NS_DIR, .in = in };

	return make_entry(s, dir, name, &m, out);
}

int ns_mknod(struct ns_store *s, uint64_t dir, const char *name, enum ns_type type,
	     const struct ns_new *in, struct ns_attr *out)
{
	struct make m = { .type = type, .in = in };

	if (type != NS_CHR && type != NS_BLK && type != NS_FIFO && type != NS_SOCK)
		return -EINVAL;
	return make_entry(s, dir, name, &m, out);
}

int ns_symlink(struct ns_store *s, uint64_t dir, const char *name, const char *target,
	       const struct ns_new *in, struct ns_attr *out)
{
	struct make m = { .type = NS_LNK, .in = in, .target = target };

	m.tlen = strnlen(target, NS_SYMLINK_MAX + 1);
	if (m.tlen == 0)
		return -EINVAL;
	if (m.tlen > NS_SYMLINK_MAX)
		return -ENAMETOOLONG;
	return make_entry(s, dir, name, &m, out);
}

int ns_mkjunction(struct ns_store *s, const char *name, const struct ns_new *in, const void *blob,
		  size_t len, struct ns_attr *out)
{
	struct make m = { .type = NS_DIR, .in = in, .junction = blob, .jlen = len };

	if (!blob || !len || len > NS_JUNCTION_MAX)
		return -EINVAL;
	return make_entry(s, NS_ROOT_INO, name, &m, out);
}
