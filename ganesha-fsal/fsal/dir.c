/* Namespace operations: lookup, readdir, create of directories, nodes and
 * symlinks, readlink, link, rename, unlink.  Each is one call into the
 * store, which commits one atomic, durable batch. */
#include "pando_fsal.h"

#include <string.h>

static fsal_status_t pando_lookup(struct fsal_obj_handle *dir_hdl, const char *name,
				  struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	struct pando_handle *dir = to_handle(dir_hdl);
	struct ns_attr a;
	int rc;

	if (dir_hdl->type != DIRECTORY)
		return fsalstat(ERR_FSAL_NOTDIR, 0);
	rc = ns_lookup(dir->exp->mds.ns, dir->ino, name, &a);
	if (rc)
		return pando_status(rc);
	*out = &pando_handle_new(dir->exp, &a)->obj;
	if (attrs)
		pando_attr_to_fsal(dir->exp, &a, attrs);
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

struct readdir_walk {
	struct pando_export *exp;
	fsal_readdir_cb cb;
	void *dir_state;
	attrmask_t mask;
	bool stopped;
	int err;
};

static int readdir_entry(void *arg, const struct ns_dirent *de)
{
	struct readdir_walk *w = arg;
	struct fsal_attrlist attrs;
	struct pando_handle *h;
	enum fsal_dir_result r;
	struct ns_attr a;
	int rc = ns_getattr(w->exp->mds.ns, de->ino, &a);

	if (rc == -ESTALE)
		return 0; /* removed since the snapshot: skip it */
	if (rc) {
		w->err = rc;
		return 1;
	}
	h = pando_handle_new(w->exp, &a);
	fsal_prepare_attrs(&attrs, w->mask);
	pando_attr_to_fsal(w->exp, &a, &attrs);
	r = w->cb(de->name, &h->obj, &attrs, w->dir_state, de->cookie);
	fsal_release_attrs(&attrs);
	if (r >= DIR_TERMINATE) {
		w->stopped = true;
		return 1;
	}
	return 0;
}

static fsal_status_t pando_readdir(struct fsal_obj_handle *dir_hdl, fsal_cookie_t *whence,
				   void *dir_state, fsal_readdir_cb cb, attrmask_t mask, bool *eof)
{
	struct pando_handle *dir = to_handle(dir_hdl);
	struct readdir_walk w = { dir->exp, cb, dir_state, mask, false, 0 };
	int rc;

	rc = ns_readdir(dir->exp->mds.ns, dir->ino, whence ? *whence : 0, readdir_entry, &w, eof);
	if (!rc && w.err)
		rc = w.err;
	if (w.stopped)
		*eof = false;
	return pando_status(rc);
}

/* The new object as Ganesha wants it: a handle, then any attributes the
 * create did not set itself (times, size), then attributes out. */
static fsal_status_t finish_create(struct pando_export *exp, const struct ns_attr *a,
				   struct fsal_attrlist *in, struct fsal_obj_handle **out,
				   struct fsal_attrlist *attrs)
{
	struct pando_handle *h = pando_handle_new(exp, a);
	attrmask_t done = ATTR_MODE | ATTR_OWNER | ATTR_GROUP | ATTR_RAWDEV;
	fsal_status_t st = pando_apply_rest(h, in, done, attrs);

	if (FSAL_IS_ERROR(st)) {
		h->obj.obj_ops->release(&h->obj);
		return st;
	}
	*out = &h->obj;
	return st;
}

static fsal_status_t pando_mkdir(struct fsal_obj_handle *dir_hdl, const char *name,
				 struct fsal_attrlist *in, struct fsal_obj_handle **out,
				 struct fsal_attrlist *attrs)
{
	struct pando_handle *dir = to_handle(dir_hdl);
	struct ns_new nn;
	struct ns_attr a;
	int rc;

	rc = pando_may_change_dir(dir, NULL);
	if (rc)
		return pando_status(rc);
	pando_new_from_attrs(dir, in, 0755, true, &nn);
	rc = ns_mkdir(dir->exp->mds.ns, dir->ino, name, &nn, &a);
	if (rc)
		return pando_status(rc);
	return finish_create(dir->exp, &a, in, out, attrs);
}

static fsal_status_t pando_mknode(struct fsal_obj_handle *dir_hdl, const char *name,
				  object_file_type_t type, struct fsal_attrlist *in,
				  struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	struct pando_handle *dir = to_handle(dir_hdl);
	enum ns_type t;
	struct ns_new nn;
	struct ns_attr a;
	int rc;

	switch (type) {
	case CHARACTER_FILE:
		t = NS_CHR;
		break;
	case BLOCK_FILE:
		t = NS_BLK;
		break;
	case FIFO_FILE:
		t = NS_FIFO;
		break;
	case SOCKET_FILE:
		t = NS_SOCK;
		break;
	default:
		return fsalstat(ERR_FSAL_BADTYPE, 0);
	}
	rc = pando_may_change_dir(dir, NULL);
	if (rc)
		return pando_status(rc);
	pando_new_from_attrs(dir, in, 0644, false, &nn);
	rc = ns_mknod(dir->exp->mds.ns, dir->ino, name, t, &nn, &a);
	if (rc)
		return pando_status(rc);
	return finish_create(dir->exp, &a, in, out, attrs);
}

static fsal_status_t pando_symlink(struct fsal_obj_handle *dir_hdl, const char *name,
				   const char *target, struct fsal_attrlist *in,
				   struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	struct pando_handle *dir = to_handle(dir_hdl);
	struct ns_new nn;
	struct ns_attr a;
	int rc;

	rc = pando_may_change_dir(dir, NULL);
	if (rc)
		return pando_status(rc);
	pando_new_from_attrs(dir, in, 0777, false, &nn);
	rc = ns_symlink(dir->exp->mds.ns, dir->ino, name, target, &nn, &a);
	if (rc)
		return pando_status(rc);
	return finish_create(dir->exp, &a, in, out, attrs);
}

static fsal_status_t pando_readlink(struct fsal_obj_handle *o, struct gsh_buffdesc *content,
				    bool refresh)
{
	struct pando_handle *h = to_handle(o);
	char buf[NS_SYMLINK_MAX + 1];
	size_t len;
	int rc;

	if (o->type != SYMBOLIC_LINK)
		return fsalstat(ERR_FSAL_INVAL, 0);
	rc = ns_readlink(h->exp->mds.ns, h->ino, buf, sizeof(buf), &len);
	if (rc)
		return pando_status(rc);
	content->addr = gsh_strdup(buf);
	content->len = len + 1;
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static fsal_status_t pando_link(struct fsal_obj_handle *o, struct fsal_obj_handle *dir_hdl,
				const char *name)
{
	struct pando_handle *h = to_handle(o), *dir = to_handle(dir_hdl);
	int rc = pando_may_change_dir(dir, NULL);

	return pando_status(rc ? rc : ns_link(h->exp->mds.ns, h->ino, dir->ino, name, NULL));
}

static fsal_status_t pando_rename(struct fsal_obj_handle *o, struct fsal_obj_handle *olddir,
				  const char *old_name, struct fsal_obj_handle *newdir,
				  const char *new_name)
{
	struct pando_handle *from = to_handle(olddir), *to = to_handle(newdir);
	int rc = pando_may_rename(from, old_name, to, new_name);

	if (!rc)
		rc = ns_rename(from->exp->mds.ns, from->ino, old_name, to->ino, new_name);

	/* Renaming over a file may have dropped its last link. */
	if (!rc)
		pando_reaper_kick(from->exp->mds.reaper);
	return pando_status(rc);
}

static fsal_status_t pando_unlink(struct fsal_obj_handle *dir_hdl, struct fsal_obj_handle *o,
				  const char *name)
{
	struct pando_handle *dir = to_handle(dir_hdl);
	int rc = pando_may_remove(dir, name);

	if (rc)
		return pando_status(rc);
	if (o->type == DIRECTORY) {
		rc = ns_rmdir(dir->exp->mds.ns, dir->ino, name);
	} else {
		rc = ns_unlink(dir->exp->mds.ns, dir->ino, name);
		if (!rc)
			pando_reaper_kick(dir->exp->mds.reaper);
	}
	return pando_status(rc);
}

void pando_dir_ops_init(struct fsal_obj_ops *ops)
{
	ops->lookup = pando_lookup;
	ops->readdir = pando_readdir;
	ops->mkdir = pando_mkdir;
	ops->mknode = pando_mknode;
	ops->symlink = pando_symlink;
	ops->readlink = pando_readlink;
	ops->link = pando_link;
	ops->rename = pando_rename;
	ops->unlink = pando_unlink;
}
