/* Times the FSAL ops of the fixed set (opstats.h) by wrapping the op
 * table the other files fill: each wrapper reads the clock, calls the op
 * as set (kept in PandoFSAL.untimed_ops) and counts it for the handle's
 * export.  read2 and write2 complete through their callback before they
 * return (the gateway is synchronous), so their time is the whole op. */
#include "pando_fsal.h"

#define UNTIMED (&PandoFSAL.untimed_ops)
#define STATS(o) (to_handle(o)->exp->mds.opstats)

static fsal_status_t t_lookup(struct fsal_obj_handle *dir, const char *path,
			      struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->lookup(dir, path, out, attrs);

	pando_opstats_done(STATS(dir), PANDO_OP_LOOKUP, t0);
	return st;
}

static fsal_status_t t_getattrs(struct fsal_obj_handle *o, struct fsal_attrlist *out)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->getattrs(o, out);

	pando_opstats_done(STATS(o), PANDO_OP_GETATTR, t0);
	return st;
}

static fsal_status_t t_setattr2(struct fsal_obj_handle *o, bool bypass, struct state_t *state,
				struct fsal_attrlist *set)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->setattr2(o, bypass, state, set);

	pando_opstats_done(STATS(o), PANDO_OP_SETATTR, t0);
	return st;
}

static fsal_status_t t_mkdir(struct fsal_obj_handle *dir, const char *name,
			     struct fsal_attrlist *in, struct fsal_obj_handle **out,
			     struct fsal_attrlist *attrs)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->mkdir(dir, name, in, out, attrs);

	pando_opstats_done(STATS(dir), PANDO_OP_MKDIR, t0);
	return st;
}

static fsal_status_t t_unlink(struct fsal_obj_handle *dir, struct fsal_obj_handle *o,
			      const char *name)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->unlink(dir, o, name);

	pando_opstats_done(STATS(dir), PANDO_OP_REMOVE, t0);
	return st;
}

static fsal_status_t t_rename(struct fsal_obj_handle *o, struct fsal_obj_handle *olddir,
			      const char *old_name, struct fsal_obj_handle *newdir,
			      const char *new_name)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->rename(o, olddir, old_name, newdir, new_name);

	pando_opstats_done(STATS(olddir), PANDO_OP_RENAME, t0);
	return st;
}

static fsal_status_t t_readdir(struct fsal_obj_handle *dir, fsal_cookie_t *whence, void *ds,
			       fsal_readdir_cb cb, attrmask_t mask, bool *eof)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->readdir(dir, whence, ds, cb, mask, eof);

	pando_opstats_done(STATS(dir), PANDO_OP_READDIR, t0);
	return st;
}

/* OPEN that makes the file counts as create, any other as open. */
static fsal_status_t t_open2(struct fsal_obj_handle *o, struct state_t *state,
			     fsal_openflags_t flags, enum fsal_create_mode mode, const char *name,
			     struct fsal_attrlist *in, fsal_verifier_t verf,
			     struct fsal_obj_handle **out, struct fsal_attrlist *attrs,
			     bool *perm_check)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st =
		UNTIMED->open2(o, state, flags, mode, name, in, verf, out, attrs, perm_check);

	pando_opstats_done(STATS(o),
			   name && mode != FSAL_NO_CREATE ? PANDO_OP_CREATE : PANDO_OP_OPEN, t0);
	return st;
}

static void t_read2(struct fsal_obj_handle *o, bool bypass, fsal_async_cb cb,
		    struct fsal_io_arg *arg, void *caller)
{
	struct pando_opstats *s = STATS(o);
	uint64_t t0 = pando_opstats_now();

	/* The callback may drop the last reference to o: s is read first. */
	UNTIMED->read2(o, bypass, cb, arg, caller);
	pando_opstats_done(s, PANDO_OP_READ, t0);
}

static void t_write2(struct fsal_obj_handle *o, bool bypass, fsal_async_cb cb,
		     struct fsal_io_arg *arg, void *caller)
{
	struct pando_opstats *s = STATS(o);
	uint64_t t0 = pando_opstats_now();

	UNTIMED->write2(o, bypass, cb, arg, caller);
	pando_opstats_done(s, PANDO_OP_WRITE, t0);
}

static fsal_status_t t_commit2(struct fsal_obj_handle *o, off_t off, size_t len)
{
	uint64_t t0 = pando_opstats_now();
	fsal_status_t st = UNTIMED->commit2(o, off, len);

	pando_opstats_done(STATS(o), PANDO_OP_COMMIT, t0);
	return st;
}

static nfsstat4 t_layoutget(struct fsal_obj_handle *o, XDR *body,
			    const struct fsal_layoutget_arg *arg, struct fsal_layoutget_res *res)
{
	uint64_t t0 = pando_opstats_now();
	nfsstat4 st = UNTIMED->layoutget(o, body, arg, res);

	pando_opstats_done(STATS(o), PANDO_OP_LAYOUTGET, t0);
	return st;
}

static nfsstat4 t_layoutreturn(struct fsal_obj_handle *o, XDR *body,
			       const struct fsal_layoutreturn_arg *arg)
{
	uint64_t t0 = pando_opstats_now();
	nfsstat4 st = UNTIMED->layoutreturn(o, body, arg);

	pando_opstats_done(STATS(o), PANDO_OP_LAYOUTRETURN, t0);
	return st;
}

static nfsstat4 t_layoutcommit(struct fsal_obj_handle *o, XDR *body,
			       const struct fsal_layoutcommit_arg *arg,
			       struct fsal_layoutcommit_res *res)
{
	uint64_t t0 = pando_opstats_now();
	nfsstat4 st = UNTIMED->layoutcommit(o, body, arg, res);

	pando_opstats_done(STATS(o), PANDO_OP_LAYOUTCOMMIT, t0);
	return st;
}

void pando_opstats_ops_init(struct fsal_obj_ops *ops, struct fsal_obj_ops *untimed)
{
	*untimed = *ops;
	ops->lookup = t_lookup;
	ops->getattrs = t_getattrs;
	ops->setattr2 = t_setattr2;
	ops->mkdir = t_mkdir;
	ops->unlink = t_unlink;
	ops->rename = t_rename;
	ops->readdir = t_readdir;
	ops->open2 = t_open2;
	ops->read2 = t_read2;
	ops->write2 = t_write2;
	ops->commit2 = t_commit2;
	ops->layoutget = t_layoutget;
	ops->layoutreturn = t_layoutreturn;
	ops->layoutcommit = t_layoutcommit;
}
