/* Open state: open2 (by name with every create mode, or by handle),
 * reopen2, status2, close2, close, and the exclusive-create verifier.
 *
 * There is no OS file descriptor behind a Pando file: an "fd" is the open
 * mode Ganesha's share accounting needs (struct fsal_fd), kept after the
 * state_t (open states) or in the handle (the global fd that stateless
 * NFSv3 I/O uses).  Byte-range locks are arbitrated by Ganesha's state
 * layer (fs_info.lock_support is false): one manager owns the namespace,
 * so its lock table is the only one. */
#include "pando_fsal.h"

#include <string.h>

static struct fsal_fd *state_fd(struct state_t *state)
{
	return (struct fsal_fd *)(state + 1);
}

static fsal_openflags_t effective(fsal_openflags_t flags)
{
	flags = FSAL_O_NFS_FLAGS(flags);
	return (flags & FSAL_O_WRITE) ? flags | FSAL_O_READ : flags;
}

/* Takes the share reservation (with state) or opens the global fd. */
static fsal_status_t take_open(struct pando_handle *h, struct state_t *state,
			       fsal_openflags_t flags, bool check)
{
	fsal_status_t st = fsalstat(ERR_FSAL_NO_ERROR, 0);

	PTHREAD_RWLOCK_wrlock(&h->obj.obj_lock);
	if (state) {
		if (check)
			st = check_share_conflict(&h->share, flags, false);
		if (!FSAL_IS_ERROR(st)) {
			update_share_counters(&h->share, FSAL_O_CLOSED, flags);
			state_fd(state)->openflags = effective(flags);
		}
	} else {
		h->fd.openflags = effective(flags);
	}
	PTHREAD_RWLOCK_unlock(&h->obj.obj_lock);
	return st;
}

static void drop_open(struct pando_handle *h, struct state_t *state, fsal_openflags_t flags)
{
	PTHREAD_RWLOCK_wrlock(&h->obj.obj_lock);
	if (state) {
		update_share_counters(&h->share, flags, FSAL_O_CLOSED);
		state_fd(state)->openflags = FSAL_O_CLOSED;
	}
	PTHREAD_RWLOCK_unlock(&h->obj.obj_lock);
}

static fsal_status_t truncate_to_zero(struct pando_handle *h)
{
	struct fsal_attrlist zero = { .valid_mask = ATTR_SIZE, .filesize = 0 };

	return pando_setattr(h, &zero, NULL);
}

static bool verifier_matches(struct pando_handle *h, fsal_verifier_t verifier)
{
	struct ns_attr a;

	return ns_getattr(h->exp->mds.ns, h->ino, &a) == 0 && a.has_verf &&
	       memcmp(a.verf, verifier, NS_VERF_LEN) == 0;
}

static bool pando_check_verifier(struct fsal_obj_handle *o, fsal_verifier_t verifier)
{
	return verifier_matches(to_handle(o), verifier);
}

static fsal_status_t open_by_handle(struct pando_handle *h, struct state_t *state,
				    fsal_openflags_t flags, enum fsal_create_mode how,
				    fsal_verifier_t verifier, struct fsal_attrlist *attrs_out)
{
	fsal_status_t st;
	struct ns_attr a;
	int rc;

	if (h->obj.type != REGULAR_FILE)
		return fsalstat(h->obj.type == DIRECTORY ? ERR_FSAL_ISDIR : ERR_FSAL_INVAL, 0);
	st = take_open(h, state, flags, true);
	if (FSAL_IS_ERROR(st))
		return st;
	if (how >= FSAL_EXCLUSIVE && how != FSAL_EXCLUSIVE_9P && !verifier_matches(h, verifier))
		st = fsalstat(ERR_FSAL_EXIST, EEXIST);
	if (!FSAL_IS_ERROR(st) && (flags & FSAL_O_TRUNC))
		st = truncate_to_zero(h);
	if (!FSAL_IS_ERROR(st) && attrs_out) {
		rc = ns_getattr(h->exp->mds.ns, h->ino, &a);
		st = rc ? pando_status(rc) : pando_fill_attrs(h, &a, attrs_out);
	}
	if (FSAL_IS_ERROR(st))
		drop_open(h, state, flags);
	return st;
}

static enum ns_createmode ns_mode(enum fsal_create_mode how)
{
	switch (how) {
	case FSAL_UNCHECKED:
		return NS_UNCHECKED;
	case FSAL_GUARDED:
		return NS_GUARDED;
	default:
		return NS_EXCLUSIVE;
	}
}

/* The name exists and is not a file this create may return. */
static fsal_status_t existing_error(struct pando_handle *dir, const char *name,
				    enum fsal_create_mode how)
{
	struct ns_attr a;

	if (how == FSAL_UNCHECKED && ns_lookup(dir->exp->mds.ns, dir->ino, name, &a) == 0)
		return fsalstat(a.type == NS_DIR ? ERR_FSAL_ISDIR : ERR_FSAL_EXIST, EEXIST);
	return fsalstat(ERR_FSAL_EXIST, EEXIST);
}

static fsal_status_t open_by_name(struct pando_handle *dir, struct state_t *state,
				  fsal_openflags_t flags, enum fsal_create_mode how,
				  const char *name, struct fsal_attrlist *attrs_set,
				  fsal_verifier_t verifier, struct fsal_obj_handle **new_obj,
				  struct fsal_attrlist *attrs_out, bool *caller_perm_check)
{
	struct pando_handle *h;
	struct ns_new nn;
	struct ns_attr a;
	bool existed = false;
	fsal_status_t st;
	int rc;

	if (how == FSAL_NO_CREATE) {
		rc = ns_lookup(dir->exp->mds.ns, dir->ino, name, &a);
		existed = true;
	} else {
		rc = pando_may_change_dir(dir, NULL);
		if (rc)
			return pando_status(rc);
		pando_new_from_attrs(dir, attrs_set, 0644, false, &nn);
		rc = ns_create(dir->exp->mds.ns, dir->ino, name, &nn, ns_mode(how),
			       (const uint8_t *)verifier, &a, &existed);
		if (rc == -EEXIST)
			return existing_error(dir, name, how);
	}
	if (rc)
		return pando_status(rc);
	if (a.type != NS_REG)
		return fsalstat(a.type == NS_DIR ? ERR_FSAL_ISDIR : ERR_FSAL_INVAL, 0);
	h = pando_handle_new(dir->exp, &a);
	/* A file this call did not create gets the caller's permission check
	 * (Ganesha does it); a new one was created with them. */
	*caller_perm_check = existed;
	st = take_open(h, state, flags, false);
	if (!FSAL_IS_ERROR(st) && existed && (flags & FSAL_O_TRUNC))
		st = truncate_to_zero(h);
	if (!FSAL_IS_ERROR(st))
		st = pando_apply_rest(h, attrs_set,
				      existed ? 0 : ATTR_MODE | ATTR_OWNER | ATTR_GROUP, attrs_out);
	if (FSAL_IS_ERROR(st)) {
		drop_open(h, state, flags);
		h->obj.obj_ops->release(&h->obj);
		return st;
	}
	*new_obj = &h->obj;
	return st;
}

static fsal_status_t pando_open2(struct fsal_obj_handle *o, struct state_t *state,
				 fsal_openflags_t flags, enum fsal_create_mode how,
				 const char *name, struct fsal_attrlist *attrs_set,
				 fsal_verifier_t verifier, struct fsal_obj_handle **new_obj,
				 struct fsal_attrlist *attrs_out, bool *caller_perm_check)
{
	/* By handle: the caller keeps using o (MDCACHE ignores new_obj). */
	if (name == NULL)
		return open_by_handle(to_handle(o), state, flags, how, verifier, attrs_out);
	if (o->type != DIRECTORY)
		return fsalstat(ERR_FSAL_NOTDIR, 0);
	return open_by_name(to_handle(o), state, flags, how, name, attrs_set, verifier, new_obj,
			    attrs_out, caller_perm_check);
}

static fsal_status_t pando_reopen2(struct fsal_obj_handle *o, struct state_t *state,
				   fsal_openflags_t flags)
{
	struct pando_handle *h = to_handle(o);
	struct fsal_fd *fd = state_fd(state);
	fsal_openflags_t old = fd->openflags;
	fsal_status_t st;

	PTHREAD_RWLOCK_wrlock(&o->obj_lock);
	/* The new mode may conflict with others' shares, not with its own. */
	update_share_counters(&h->share, old, FSAL_O_CLOSED);
	st = check_share_conflict(&h->share, flags, false);
	update_share_counters(&h->share, FSAL_O_CLOSED, FSAL_IS_ERROR(st) ? old : flags);
	if (!FSAL_IS_ERROR(st))
		fd->openflags = effective(flags);
	PTHREAD_RWLOCK_unlock(&o->obj_lock);
	if (!FSAL_IS_ERROR(st) && (flags & FSAL_O_TRUNC))
		st = truncate_to_zero(h);
	return st;
}

static fsal_openflags_t pando_status2(struct fsal_obj_handle *o, struct state_t *state)
{
	return state_fd(state)->openflags;
}

static fsal_status_t pando_close2(struct fsal_obj_handle *o, struct state_t *state)
{
	struct pando_handle *h = to_handle(o);
	struct fsal_fd *fd = state_fd(state);

	PTHREAD_RWLOCK_wrlock(&o->obj_lock);
	if (state->state_type == STATE_TYPE_SHARE || state->state_type == STATE_TYPE_NLM_SHARE ||
	    state->state_type == STATE_TYPE_9P_FID)
		update_share_counters(&h->share, fd->openflags, FSAL_O_CLOSED);
	fd->openflags = FSAL_O_CLOSED;
	PTHREAD_RWLOCK_unlock(&o->obj_lock);
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

static fsal_status_t pando_close(struct fsal_obj_handle *o)
{
	struct pando_handle *h = to_handle(o);
	fsal_status_t st = fsalstat(ERR_FSAL_NO_ERROR, 0);

	if (o->type != REGULAR_FILE)
		return fsalstat(ERR_FSAL_NOT_OPENED, 0);
	PTHREAD_RWLOCK_wrlock(&o->obj_lock);
	if (h->fd.openflags == FSAL_O_CLOSED)
		st = fsalstat(ERR_FSAL_NOT_OPENED, 0);
	h->fd.openflags = FSAL_O_CLOSED;
	PTHREAD_RWLOCK_unlock(&o->obj_lock);
	return st;
}

void pando_file_ops_init(struct fsal_obj_ops *ops)
{
	ops->open2 = pando_open2;
	ops->reopen2 = pando_reopen2;
	ops->status2 = pando_status2;
	ops->close2 = pando_close2;
	ops->close = pando_close;
	ops->check_verifier = pando_check_verifier;
}
