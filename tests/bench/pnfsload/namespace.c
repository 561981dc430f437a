/* Metadata operations through the MDS: path walks, mkdir, OPEN/CLOSE,
 * GETATTR of an open file, REMOVE and stat (LOOKUP + GETATTR). */
#include <errno.h>
#include <string.h>

#include "pnfsload.h"

#define DIR_MODE 0755u
#define FILE_MODE 0644u
#define NAME_MAX_LEN 255u

static void put_dir(struct compound *c, const struct nfs4_fh *dir)
{
	if (dir)
		c4_putfh(&c->w, dir);
	else
		c4_putrootfh(&c->w);
}

/* LOOKUP name in dir; false when it is not there.  (Path walks and
 * mkdir send their call again on the new session after a lost one:
 * handles outlive a restart of the MDS.) */
static bool lookup_one(struct client *cl, const struct nfs4_fh *dir, const char *name,
		       struct nfs4_fh *out)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	do {
		cl_begin(cl, &c, 0, 3, rbuf, sizeof(rbuf));
		put_dir(&c, dir);
		c4_lookup(&c.w, name);
		c4_getfh(&c.w);
	} while (cl_call(cl, &c, "LOOKUP") == CL_LOST);
	cl_op(cl, &c, dir ? OP_PUTFH : OP_PUTROOTFH, 0);
	if (cl_op(cl, &c, OP_LOOKUP, NFS4ERR_NOENT) == NFS4ERR_NOENT)
		return false;
	cl_op(cl, &c, OP_GETFH, 0);
	cl_check(cl, d4_getfh(&c.r, out), OP_GETFH);
	return true;
}

void ns_lookup_path(struct client *cl, const struct nfs4_fh *from, const char *path, bool create,
		    struct nfs4_fh *out)
{
	char name[NAME_MAX_LEN + 1];
	const char *p = path;
	bool at_root = from == NULL;

	if (from)
		*out = *from;
	else
		out->len = 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		struct nfs4_fh next;

		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n > NAME_MAX_LEN)
			cl_die(cl, "path %s: a name longer than %u bytes", path, NAME_MAX_LEN);
		memcpy(name, p, n);
		name[n] = 0;
		if (!lookup_one(cl, at_root ? NULL : out, name, &next)) {
			if (!create || at_root)
				cl_die(cl,
				       "LOOKUP %s in %s: NFS4ERR_NOENT (no such export or directory)",
				       name, path);
			ns_mkdir(cl, 0, out, name, &next);
		}
		*out = next;
		at_root = false;
		p += n + (p[n] == '/');
	}
	if (at_root) {
		uint8_t rbuf[CTL_BUF];
		struct compound c;

		do {
			cl_begin(cl, &c, 0, 2, rbuf, sizeof(rbuf));
			c4_putrootfh(&c.w);
			c4_getfh(&c.w);
		} while (cl_call(cl, &c, "PUTROOTFH") == CL_LOST);
		cl_op(cl, &c, OP_PUTROOTFH, 0);
		cl_op(cl, &c, OP_GETFH, 0);
		cl_check(cl, d4_getfh(&c.r, out), OP_GETFH);
	}
}

void ns_mkdir(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name,
	      struct nfs4_fh *out)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	do {
		cl_begin(cl, &c, slot, 3, rbuf, sizeof(rbuf));
		c4_putfh(&c.w, dir);
		c4_mkdir(&c.w, name, DIR_MODE);
		c4_getfh(&c.w);
	} while (cl_call(cl, &c, "CREATE") == CL_LOST);
	cl_op(cl, &c, OP_PUTFH, 0);
	if (cl_op(cl, &c, OP_CREATE, NFS4ERR_EXIST) == NFS4ERR_EXIST) {
		/* Another client made it first. */
		if (!lookup_one(cl, dir, name, out))
			cl_die(cl, "CREATE %s: EXIST, then LOOKUP: NOENT", name);
		return;
	}
	cl_check(cl, d4_create(&c.r), OP_CREATE);
	cl_op(cl, &c, OP_GETFH, 0);
	cl_check(cl, d4_getfh(&c.r, out), OP_GETFH);
}

int ns_open(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name,
	    bool create, uint32_t access, struct open_file *f)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	memset(f, 0, sizeof(*f));
	/* Linux fetches FATTR4_MDSTHRESHOLD with OPEN too. */
	cl_begin(cl, &c, slot, 4, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, dir);
	c4_open(&c.w, cl->clientid, cl->owner, name, create, access, FILE_MODE);
	c4_getfh(&c.w);
	c4_getattr_mdsthreshold(&c.w);
	if (cl_call(cl, &c, "OPEN") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_PUTFH, 0);
	if (cl_op(cl, &c, OP_OPEN, NFS4ERR_NOENT) == NFS4ERR_NOENT)
		cl_die(cl, "OPEN %s: NFS4ERR_NOENT (no such file)", name);
	cl_check(cl, d4_open(&c.r, &f->open_sid), OP_OPEN);
	cl_op(cl, &c, OP_GETFH, 0);
	cl_check(cl, d4_getfh(&c.r, &f->fh), OP_GETFH);
	cl_op(cl, &c, OP_GETATTR, 0);
	cl_check(cl, d4_mdsthreshold(&c.r, &f->threshold), OP_GETATTR);
	return 0;
}

void ns_close(struct client *cl, unsigned slot, struct open_file *f)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, slot, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, &f->fh);
	c4_close(&c.w, &f->open_sid);
	/* A lost session (cl_rides) took the open state with it. */
	if (cl_call(cl, &c, "CLOSE") == CL_LOST)
		return;
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_op(cl, &c, OP_CLOSE, 0);
	cl_check(cl, d4_stateid(&c.r, &f->open_sid), OP_CLOSE);
}

int ns_getattr(struct client *cl, unsigned slot, const struct open_file *f,
	       struct nfs4_attrs *attrs)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, slot, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, &f->fh);
	c4_getattr(&c.w);
	if (cl_call(cl, &c, "GETATTR") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_op(cl, &c, OP_GETATTR, 0);
	cl_check(cl, d4_getattr(&c.r, attrs), OP_GETATTR);
	return 0;
}

void ns_remove(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, slot, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, dir);
	c4_remove(&c.w, name);
	cl_call(cl, &c, "REMOVE");
	cl_op(cl, &c, OP_PUTFH, 0);
	if (cl_op(cl, &c, OP_REMOVE, NFS4ERR_NOENT) == NFS4ERR_NOENT)
		cl_die(cl, "REMOVE %s: NFS4ERR_NOENT (no such file)", name);
	cl_check(cl, d4_change_info(&c.r), OP_REMOVE);
}

void ns_stat(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name,
	     struct nfs4_attrs *attrs)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, slot, 3, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, dir);
	c4_lookup(&c.w, name);
	c4_getattr(&c.w);
	cl_call(cl, &c, "LOOKUP+GETATTR");
	cl_op(cl, &c, OP_PUTFH, 0);
	if (cl_op(cl, &c, OP_LOOKUP, NFS4ERR_NOENT) == NFS4ERR_NOENT)
		cl_die(cl, "LOOKUP %s: NFS4ERR_NOENT (no such file)", name);
	cl_op(cl, &c, OP_GETATTR, 0);
	cl_check(cl, d4_getattr(&c.r, attrs), OP_GETATTR);
}
