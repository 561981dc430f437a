/* File handle = capability: the checks every NFS request goes through
 * before it may touch an object (order and statuses in README.md). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "nfs3.h"

int nfs3_decode_fh_args(struct xdr_r *in, struct nfs3_fh *fh)
{
	fh->data = xr_opaque_ref(in, NFS3_FHSIZE, &fh->len);
	return in->err ? -EINVAL : 0;
}

/* Authenticity first: a handle we cannot verify tells its sender nothing
 * about the target, not even whether the object exists. */
static enum nfsstat3 check_handle(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  const struct nfs3_fh *fh, struct capability *cap)
{
	enum cap_verdict v;

	osd_keys_read(ctx->keys);
	v = capability_verify(&ctx->keys->file, fh->data, fh->len, cap);
	osd_keys_done(ctx->keys);
	if (v != CAP_VALID) {
		log_debug("nfs3: bad handle (%s)", cap_verdict_name(v));
		return NFS3ERR_BADHANDLE;
	}
	if (cap->osd_id != ctx->osd_id) {
		log_debug("nfs3: handle for osd %u", cap->osd_id);
		return NFS3ERR_STALE;
	}
	if (cap->expiry != 0 && cap->expiry < (uint64_t)time(NULL)) {
		log_debug("nfs3: handle expired at %llu", (unsigned long long)cap->expiry);
		return NFS3ERR_STALE;
	}
	/* The holder's uid: a handle that leaked to another host or user
	 * does not serve it.  Only after the checks above, so a caller
	 * learns nothing from a handle it could not use anyway. */
	if (cap->holder != 0 && !(who->auth_sys && who->uid == cap->holder)) {
		if (who->auth_sys)
			log_debug("nfs3: handle for uid %u used by uid %u", cap->holder, who->uid);
		else
			log_debug("nfs3: handle for uid %u used without AUTH_SYS", cap->holder);
		return NFS3ERR_ACCES;
	}
	return NFS3_OK;
}

/* A handle for an object that is gone (or, with id 0, never was) is
 * stale; any other failure is the target's own. */
static enum nfsstat3 open_failed(const struct obj_id *id, int err)
{
	if (err == -ENOENT || err == -EINVAL)
		return NFS3ERR_STALE;
	log_warn("nfs3: open %llx.%llx: %s", (unsigned long long)id->partition,
		 (unsigned long long)id->object, strerror(-err));
	return NFS3ERR_IO;
}

/* Called with the object's versions held: a read-write handle must carry
 * the current version; a read handle any from the read floor up, so that
 * revoking the writers (raising the version alone) spares the readers. */
static bool version_valid(const struct nfs3_obj *obj)
{
	uint32_t floor, cur, v = obj->cap.cap_version;

	obj_ref_cap_versions(obj->ref, &floor, &cur);
	if (obj->cap.rights == CAP_RIGHTS_RW)
		return v == cur;
	return floor <= v && v <= cur;
}

enum nfsstat3 nfs3_obj_open(const struct osd_ctx *ctx, const struct nfs3_caller *who,
			    const struct nfs3_fh *fh, enum nfs3_need need, struct nfs3_obj *obj)
{
	struct obj_id id;
	enum nfsstat3 st;
	int err;

	obj->ref = NULL;
	st = check_handle(ctx, who, fh, &obj->cap);
	if (st != NFS3_OK)
		return st;

	id.partition = obj->cap.partition;
	id.object = obj->cap.object;
	err = objstore_get(ctx->store, &id, &obj->ref);
	if (err) {
		obj->ref = NULL;
		return open_failed(&id, err);
	}
	obj_ref_cap_hold(obj->ref);
	if (!version_valid(obj)) {
		log_debug("nfs3: handle version %u revoked", obj->cap.cap_version);
		st = NFS3ERR_STALE;
	} else if (need == NFS3_NEED_WRITE && obj->cap.rights != CAP_RIGHTS_RW)
		st = NFS3ERR_ACCES;
	if (st != NFS3_OK)
		nfs3_obj_close(ctx, obj);
	return st;
}

void nfs3_obj_close(const struct osd_ctx *ctx, struct nfs3_obj *obj)
{
	if (obj->ref) {
		obj_ref_cap_release(obj->ref);
		objstore_put(ctx->store, obj->ref);
	}
	obj->ref = NULL;
}

enum nfsstat3 nfs3_stat_from_errno(const char *op, const struct nfs3_obj *obj, int err)
{
	switch (err) {
	case 0:
		return NFS3_OK;
	case -ENOSPC:
		return NFS3ERR_NOSPC;
	case -EFBIG:
		return NFS3ERR_FBIG;
	case -ENOENT: /* removed while we held it */
		return NFS3ERR_STALE;
	default:
		log_warn("nfs3 %s %llx.%llx: %s", op, (unsigned long long)obj->cap.partition,
			 (unsigned long long)obj->cap.object, strerror(-err));
		return NFS3ERR_IO;
	}
}
