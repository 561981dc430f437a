/* Object handles: the wire form, attributes, getattrs/setattr2, and the
 * errno-to-FSAL mapping every other file uses. */
#include "pando_fsal.h"

#include <string.h>

#include "byteorder.h"
#include "fsal_convert.h"
#include "layouts.h"

fsal_status_t pando_status(int neg_errno)
{
	if (neg_errno == 0)
		return fsalstat(ERR_FSAL_NO_ERROR, 0);
	/* Internal states the store reports that NFS has no word for. */
	/* Layouts of other clients are being recalled: retry shortly. */
	if (neg_errno == -EBUSY)
		return fsalstat(ERR_FSAL_DELAY, EBUSY);
	/* A manager no longer sure that it leads: the next active takes it. */
	if (neg_errno == -ESHUTDOWN)
		return fsalstat(ERR_FSAL_DELAY, ESHUTDOWN);
	if (neg_errno == -EREMOTE || neg_errno == -ENODATA || neg_errno == -EAGAIN)
		return fsalstat(ERR_FSAL_SERVERFAULT, -neg_errno);
	if (neg_errno == -EHOSTDOWN || neg_errno == -ETIMEDOUT || neg_errno == -ECONNREFUSED)
		return fsalstat(ERR_FSAL_IO, -neg_errno);
	return posix2fsal_status(-neg_errno);
}

/* Wire handle: u8 version, u8 type, u16 0, u32 generation, u64 inode id,
 * u8[8] the store's uuid (its first half): a handle from another store,
 * or a store formatted again at the same place, is stale, not aliased. */
void pando_fh_encode(const struct pando_export *exp, uint64_t ino, uint32_t gen, enum ns_type type,
		     uint8_t out[PANDO_FH_LEN])
{
	out[0] = PANDO_FH_VERSION;
	out[1] = (uint8_t)type;
	out[2] = out[3] = 0;
	put_be32(out + 4, gen);
	put_be64(out + 8, ino);
	memcpy(out + 16, exp->mds.uuid, 8);
}

/* -EINVAL: not a handle of ours (malformed); -ESTALE: of another store. */
int pando_fh_decode(const struct pando_export *exp, const void *buf, size_t len, uint64_t *ino,
		    uint32_t *gen)
{
	const uint8_t *p = buf;

	if (len != PANDO_FH_LEN || p[0] != PANDO_FH_VERSION || p[1] < NS_REG || p[1] > NS_SOCK ||
	    p[2] || p[3])
		return -EINVAL;
	if (memcmp(p + 16, exp->mds.uuid, 8) != 0)
		return -ESTALE;
	*gen = get_be32(p + 4);
	*ino = get_be64(p + 8);
	return *ino == 0 ? -EINVAL : 0;
}

static object_file_type_t fsal_type(enum ns_type t)
{
	switch (t) {
	case NS_REG:
		return REGULAR_FILE;
	case NS_DIR:
		return DIRECTORY;
	case NS_LNK:
		return SYMBOLIC_LINK;
	case NS_CHR:
		return CHARACTER_FILE;
	case NS_BLK:
		return BLOCK_FILE;
	case NS_FIFO:
		return FIFO_FILE;
	case NS_SOCK:
		return SOCKET_FILE;
	}
	return NO_FILE_TYPE;
}

/* The store's uuid; a junction's differs from it in the minor number, by
 * its inode (never 0), so each junction is a file system of its own to
 * clients (referral.c). */
static fsal_fsid_t pando_fsid(const struct pando_export *exp, const struct ns_attr *a)
{
	uint64_t minor = get_be64(exp->mds.uuid + 8);

	if (a->junction)
		minor ^= a->ino * 0x9e3779b97f4a7c15ull;
	return (fsal_fsid_t){ .major = get_be64(exp->mds.uuid), .minor = minor };
}

void pando_attr_to_fsal(const struct pando_export *exp, const struct ns_attr *a,
			struct fsal_attrlist *out)
{
	out->type = fsal_type(a->type);
	out->filesize = a->size;
	out->fsid = pando_fsid(exp, a);
	out->fileid = a->ino;
	out->mode = a->mode;
	out->numlinks = a->nlink;
	out->owner = a->uid;
	out->group = a->gid;
	out->rawdev.major = a->rdev_major;
	out->rawdev.minor = a->rdev_minor;
	out->atime = a->atime;
	out->mtime = a->mtime;
	out->ctime = a->ctime;
	out->creation = a->btime;
	out->change = a->change;
	out->generation = a->gen;
	/* Inline files use their bytes in RocksDB; object files the mirrors'
	 * share is not known here without asking the OSDs: their size. */
	out->spaceused = a->objects ? (a->size + 4095) & ~4095ull : a->inline_len;
	out->valid_mask = ATTRS_POSIX | ATTR_CREATION | ATTR_GENERATION;
	out->supported = PANDO_SUPPORTED_ATTRS;
}

fsal_status_t pando_fill_attrs(struct pando_handle *h, const struct ns_attr *a,
			       struct fsal_attrlist *out)
{
	int rc = 0;

	if (out)
		pando_attr_to_fsal(h->exp, a, out);
	if (out && a->junction && (out->request_mask & ATTR4_FS_LOCATIONS))
		rc = pando_referral_attrs(h, out);
	return pando_status(rc);
}

struct pando_handle *pando_handle_new(struct pando_export *exp, const struct ns_attr *a)
{
	struct pando_handle *h = gsh_calloc(1, sizeof(*h));

	h->exp = exp;
	h->ino = a->ino;
	h->gen = a->gen;
	pando_fh_encode(exp, a->ino, a->gen, a->type, h->key);
	pthread_mutex_init(&h->move_lock, NULL);
	pthread_rwlock_init(&h->rows_lock, NULL);
	fsal_obj_handle_init(&h->obj, &exp->export, fsal_type(a->type));
	h->obj.obj_ops = &PandoFSAL.handle_ops;
	h->obj.fsid = pando_fsid(exp, a);
	h->obj.fileid = a->ino;
	h->junction = a->junction;
	return h;
}

fsal_status_t pando_handle_from_ino(struct pando_export *exp, uint64_t ino, uint32_t gen,
				    struct fsal_obj_handle **out, struct fsal_attrlist *attrs)
{
	struct ns_attr a;
	int rc = ns_getattr_handle(exp->mds.ns, ino, gen, &a);

	if (rc)
		return pando_status(rc);
	*out = &pando_handle_new(exp, &a)->obj;
	if (attrs)
		pando_attr_to_fsal(exp, &a, attrs);
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

/* What a new inode starts with: the mode and owner the client asked for,
 * else the caller's; a set-gid directory passes its group on. */
/* A set-gid directory gives its group to what is made in it, and its
 * set-gid bit to new directories, so a shared project tree stays shared. */
void pando_new_from_attrs(const struct pando_handle *dir, const struct fsal_attrlist *in,
			  uint32_t default_mode, bool is_dir, struct ns_new *out)
{
	struct ns_attr d;

	memset(out, 0, sizeof(*out));
	out->mode = in && FSAL_TEST_MASK(in->valid_mask, ATTR_MODE) ? in->mode & 07777
								    : default_mode;
	out->uid = op_ctx->creds.caller_uid;
	out->gid = op_ctx->creds.caller_gid;
	if (ns_getattr(dir->exp->mds.ns, dir->ino, &d) == 0 && (d.mode & 02000)) {
		out->gid = d.gid;
		if (is_dir)
			out->mode |= 02000;
	}
	if (in && FSAL_TEST_MASK(in->valid_mask, ATTR_OWNER))
		out->uid = (uint32_t)in->owner;
	if (in && FSAL_TEST_MASK(in->valid_mask, ATTR_GROUP))
		out->gid = (uint32_t)in->group;
	if (in && FSAL_TEST_MASK(in->valid_mask, ATTR_RAWDEV)) {
		out->rdev_major = (uint32_t)in->rawdev.major;
		out->rdev_minor = (uint32_t)in->rawdev.minor;
	}
}

static void ns_setattr_from(const struct fsal_attrlist *in, struct ns_setattr *sa)
{
	attrmask_t m = in->valid_mask;

	memset(sa, 0, sizeof(*sa));
	if (FSAL_TEST_MASK(m, ATTR_MODE)) {
		sa->mask |= NS_SET_MODE;
		sa->mode = in->mode & 07777;
	}
	if (FSAL_TEST_MASK(m, ATTR_OWNER)) {
		sa->mask |= NS_SET_UID;
		sa->uid = (uint32_t)in->owner;
	}
	if (FSAL_TEST_MASK(m, ATTR_GROUP)) {
		sa->mask |= NS_SET_GID;
		sa->gid = (uint32_t)in->group;
	}
	if (FSAL_TEST_MASK(m, ATTR_SIZE)) {
		sa->mask |= NS_SET_SIZE;
		sa->size = in->filesize;
	}
	if (FSAL_TEST_MASK(m, ATTR_ATIME_SERVER)) {
		sa->mask |= NS_SET_ATIME_NOW;
	} else if (FSAL_TEST_MASK(m, ATTR_ATIME)) {
		sa->mask |= NS_SET_ATIME;
		sa->atime = in->atime;
	}
	if (FSAL_TEST_MASK(m, ATTR_MTIME_SERVER)) {
		sa->mask |= NS_SET_MTIME_NOW;
	} else if (FSAL_TEST_MASK(m, ATTR_MTIME)) {
		sa->mask |= NS_SET_MTIME;
		sa->mtime = in->mtime;
	}
}

/* The NFSv4 client making this call (0 for NFSv3), for the recalls that
 * leave its own layouts alone. */
static uint64_t caller_clientid(void)
{
	return op_ctx->clientid ? *op_ctx->clientid : 0;
}

/* setattr for every caller (setattr2, open2 with attributes, creates):
 * a size change of an object-backed file cuts the objects first. */
fsal_status_t pando_setattr(struct pando_handle *h, struct fsal_attrlist *in, struct ns_attr *out)
{
	struct ns_setattr sa;
	struct ns_attr a;
	bool guarded = false;
	int rc;

	ns_setattr_from(in, &sa);
	rc = pando_setid_mode_change(h, &sa);
	if (rc)
		return pando_status(rc);
	if (sa.mask & NS_SET_SIZE) {
		if (h->obj.type != REGULAR_FILE)
			return fsalstat(h->obj.type == DIRECTORY ? ERR_FSAL_ISDIR : ERR_FSAL_INVAL,
					0);
		rc = ns_getattr(h->exp->mds.ns, h->ino, &a);
		/* Holders of layouts must not race a size change: recall first.
		 * A cut to 0 gives the objects to the reaper, so the caller's
		 * own layouts go too: they name objects the file no longer has
		 * (writes acknowledged into removed objects, a LAYOUTCOMMIT
		 * that finds the file inline again: FBIG). */
		if (!rc && a.objects && sa.size == 0)
			rc = pando_grants_recall_and_wait(h->exp->mds.grants, h->ino, 0, false,
							  "objects released", RECALL_WAIT_MS);
		else if (!rc && a.objects && sa.size != a.size)
			rc = pando_grants_recall_and_wait(h->exp->mds.grants, h->ino,
							  caller_clientid(), false, "size change",
							  RECALL_WAIT_MS);
		/* Nor a rebuild's map switch (rebuild.c). */
		if (!rc && a.objects) {
			rc = pando_grants_write_begin(h->exp->mds.grants, h->ino);
			guarded = rc == 0;
		}
		/* RS: the cut re-encodes the last row (rows_lock, pando_fsal.h). */
		if (!rc && a.objects && sa.size > 0 && sa.size < a.size) {
			pthread_rwlock_wrlock(&h->rows_lock);
			rc = pando_truncate_objects(h, sa.size);
			pthread_rwlock_unlock(&h->rows_lock);
		}
		if (rc) {
			if (guarded)
				pando_grants_write_end(h->exp->mds.grants, h->ino);
			return pando_status(rc);
		}
	}
	rc = ns_setattr(h->exp->mds.ns, h->ino, &sa, out);
	if (guarded)
		pando_grants_write_end(h->exp->mds.grants, h->ino);
	if (rc == -EFBIG) {
		/* Growing an inline file past the threshold: move it first. */
		rc = pando_move_to_objects(h);
		if (!rc)
			rc = ns_setattr(h->exp->mds.ns, h->ino, &sa, out);
	}
	if (!rc && (sa.mask & NS_SET_SIZE) && sa.size == 0)
		pando_reaper_kick(h->exp->mds.reaper);
	return pando_status(rc);
}

/* Attributes a create got with the new object that the create itself did
 * not set (times, size): one setattr, then fresh attributes out. */
fsal_status_t pando_apply_rest(struct pando_handle *h, struct fsal_attrlist *in, attrmask_t done,
			       struct fsal_attrlist *out)
{
	struct fsal_attrlist rest;
	struct ns_attr a;
	fsal_status_t st;
	int rc;

	if (in && (in->valid_mask & ~done)) {
		rest = *in;
		rest.valid_mask &= ~done;
		st = pando_setattr(h, &rest, &a);
		if (FSAL_IS_ERROR(st))
			return st;
	} else if (out) {
		rc = ns_getattr(h->exp->mds.ns, h->ino, &a);
		if (rc)
			return pando_status(rc);
	}
	return pando_fill_attrs(h, &a, out);
}

static fsal_status_t pando_getattrs(struct fsal_obj_handle *o, struct fsal_attrlist *out)
{
	struct pando_handle *h = to_handle(o);
	struct ns_attr a;
	int rc = ns_getattr_handle(h->exp->mds.ns, h->ino, h->gen, &a);

	if (rc) {
		if (out->request_mask & ATTR_RDATTR_ERR)
			out->valid_mask = ATTR_RDATTR_ERR;
		return pando_status(rc);
	}
	return pando_fill_attrs(h, &a, out);
}

static fsal_status_t pando_setattr2(struct fsal_obj_handle *o, bool bypass, struct state_t *state,
				    struct fsal_attrlist *in)
{
	struct pando_handle *h = to_handle(o);
	fsal_status_t st;

	if (FSAL_TEST_MASK(in->valid_mask, ATTR_SIZE) && o->type == REGULAR_FILE) {
		/* A size change is a write: honour deny-write shares. */
		PTHREAD_RWLOCK_rdlock(&o->obj_lock);
		st = check_share_conflict(&h->share, FSAL_O_WRITE, bypass);
		PTHREAD_RWLOCK_unlock(&o->obj_lock);
		if (FSAL_IS_ERROR(st))
			return st;
	}
	return pando_setattr(h, in, NULL);
}

static fsal_status_t pando_handle_to_wire(const struct fsal_obj_handle *o, fsal_digesttype_t type,
					  struct gsh_buffdesc *fh)
{
	const struct pando_handle *h = container_of(o, const struct pando_handle, obj);

	switch (type) {
	case FSAL_DIGEST_NFSV3:
	case FSAL_DIGEST_NFSV4:
		if (fh->len < PANDO_FH_LEN)
			return fsalstat(ERR_FSAL_TOOSMALL, 0);
		memcpy(fh->addr, h->key, PANDO_FH_LEN);
		fh->len = PANDO_FH_LEN;
		return fsalstat(ERR_FSAL_NO_ERROR, 0);
	default:
		return fsalstat(ERR_FSAL_SERVERFAULT, 0);
	}
}

static void pando_handle_to_key(struct fsal_obj_handle *o, struct gsh_buffdesc *fh)
{
	struct pando_handle *h = to_handle(o);

	fh->addr = h->key;
	fh->len = PANDO_FH_LEN;
}

static void pando_release(struct fsal_obj_handle *o)
{
	struct pando_handle *h = to_handle(o);

	fsal_obj_handle_fini(o);
	pthread_mutex_destroy(&h->move_lock);
	pthread_rwlock_destroy(&h->rows_lock);
	gsh_free(h);
}

/* Two handles for one file met in MDCACHE (a create raced a lookup): the
 * share reservations must add up. */
static fsal_status_t pando_merge(struct fsal_obj_handle *old_hdl, struct fsal_obj_handle *new_hdl)
{
	if (old_hdl == new_hdl || old_hdl->type != REGULAR_FILE || new_hdl->type != REGULAR_FILE)
		return fsalstat(ERR_FSAL_NO_ERROR, 0);
	return merge_share(old_hdl, &to_handle(old_hdl)->share, &to_handle(new_hdl)->share);
}

void pando_handle_ops_init(struct fsal_obj_ops *ops)
{
	fsal_default_obj_ops_init(ops);
	ops->release = pando_release;
	ops->merge = pando_merge;
	ops->getattrs = pando_getattrs;
	ops->setattr2 = pando_setattr2;
	ops->handle_to_wire = pando_handle_to_wire;
	ops->handle_to_key = pando_handle_to_key;
	pando_dir_ops_init(ops);
	pando_referral_ops_init(ops);
	pando_file_ops_init(ops);
	pando_io_ops_init(ops);
	pando_sparse_ops_init(ops);
	pando_mds_ops_init(ops);
	ops->layouterror = pando_layouterror;
	pando_opstats_ops_init(ops, &PandoFSAL.untimed_ops);
}
