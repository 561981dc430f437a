/* Flexfiles layouts: LAYOUTGET, GETDEVICEINFO (device addresses cached by
 * device id, one connection per data server and client), LAYOUTCOMMIT and
 * LAYOUTRETURN with ff_layoutreturn4 error reports. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnfsload.h"

#define NFS_PROGRAM 100003u
#define NFS_V3 3u
#define NFS4ERR_NOMATCHING_LAYOUT 10060u

static struct device *find_device(struct client *cl, const uint8_t *id)
{
	for (unsigned i = 0; i < cl->ndevs; i++)
		if (!memcmp(cl->devs[i].id, id, PANDO_FF_DEVICEID_SIZE))
			return &cl->devs[i];
	return NULL;
}

/* 0, or -ESTALE when the session was lost. */
static int getdeviceinfo(struct client *cl, unsigned slot, const uint8_t *id,
			 struct pando_ff_device_addr *addr)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;
	const uint8_t *body;
	uint32_t len;

	cl_begin(cl, &c, slot, 1, rbuf, sizeof(rbuf));
	c4_getdeviceinfo(&c.w, id, CTL_BUF - 1024);
	if (cl_call(cl, &c, "GETDEVICEINFO") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_GETDEVICEINFO, 0);
	cl_check(cl, d4_getdeviceinfo(&c.r, &body, &len), OP_GETDEVICEINFO);
	if (pando_ff_device_addr_decode(body, len, addr))
		cl_die(cl, "GETDEVICEINFO: malformed ff_device_addr4");
	return 0;
}

/* --ds-host: the same port on another host (the advertised address is
 * one this namespace cannot reach, e.g. qemu's 10.0.2.2). */
static void redirect(struct client *cl, struct sockaddr_storage *ss, socklen_t *len)
{
	uint16_t port = ss->ss_family == AF_INET6 ? ((struct sockaddr_in6 *)ss)->sin6_port
						  : ((struct sockaddr_in *)ss)->sin_port;
	char port_s[8];

	snprintf(port_s, sizeof(port_s), "%u", ntohs(port));
	if (rpc_resolve(cl->opt->ds_host, port_s, ss, len))
		cl_die(cl, "cannot resolve --ds-host %s", cl->opt->ds_host);
}

/* Where the device's data server is, from its GETDEVICEINFO. */
static void resolve_device(struct client *cl, struct device *d,
			   const struct pando_ff_device_addr *addr)
{
	struct sockaddr_storage ss;

	if (addr->versions[0].version != NFS_V3)
		cl_die(cl, "GETDEVICEINFO: data server speaks NFSv%u, only v3 is supported",
		       addr->versions[0].version);
	if (addr->versions[0].wsize < cl->opt->transfer ||
	    addr->versions[0].rsize < cl->opt->transfer)
		cl_die(cl, "data server %s takes %u-byte transfers, less than --transfer %u",
		       addr->netaddrs[0].uaddr, addr->versions[0].wsize, cl->opt->transfer);
	if (pando_netaddr_to_sockaddr(&addr->netaddrs[0], &ss))
		cl_die(cl, "GETDEVICEINFO: bad address %s %s", addr->netaddrs[0].netid,
		       addr->netaddrs[0].uaddr);
	socklen_t len = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);

	if (cl->opt->ds_host[0])
		redirect(cl, &ss, &len);
	d->addr = ss;
	d->addrlen = len;
	snprintf(d->name, sizeof(d->name), "DS %s", addr->netaddrs[0].uaddr);
}

/* A connection to the device's data server: 0 or -errno; fatal unless
 * the workload rides. */
static int dial(struct client *cl, struct device *d)
{
	int err = rpc_connect(&d->conn, (struct sockaddr *)&d->addr, d->addrlen, NFS_PROGRAM,
			      NFS_V3, cl->opt->depth, d->name);

	if (err && !cl_rides(cl))
		cl_die(cl, "connect to %s: %s", d->name, strerror(-err));
	if (err)
		cl_note(cl, "connect to %s: %s", d->name, strerror(-err));
	return err;
}

/* The connection for a device id in *conn: its address is looked up
 * once, then cached.  Under devs_lock, so that two workers asking for one
 * device connect once.  A workload that rides connects again when the
 * connection died (the OSD restarted, or a connect failed).  0, -ESTALE
 * when the session was lost, or the connect's -errno. */
static int device_conn(struct client *cl, unsigned slot, const uint8_t *id, struct rpc_conn **conn)
{
	struct pando_ff_device_addr addr = { 0 };
	struct device *d;
	int err = 0;

	pthread_mutex_lock(&cl->devs_lock);
	d = find_device(cl, id);
	if (!d) {
		if (cl->ndevs == MAX_DEVICES)
			cl_die(cl, "more than %u data servers", MAX_DEVICES);
		d = &cl->devs[cl->ndevs];
		memcpy(d->id, id, PANDO_FF_DEVICEID_SIZE);
		if ((err = getdeviceinfo(cl, slot, id, &addr)))
			goto out;
		resolve_device(cl, d, &addr);
		pando_ff_device_addr_release(&addr);
		cl->ndevs++;
		err = dial(cl, d);
	} else if (cl_rides(cl) &&
		   (!d->conn.started || __atomic_load_n(&d->conn.dead, __ATOMIC_ACQUIRE))) {
		rpc_close(&d->conn);
		err = dial(cl, d);
	}
	*conn = &d->conn;
out:
	pthread_mutex_unlock(&cl->devs_lock);
	return err;
}

static uint32_t numeric_id(const char *s, uint32_t fallback)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	return *s && !*end && v <= UINT32_MAX ? (uint32_t)v : fallback;
}

/* A layout we can drive: the same number of data servers in every mirror,
 * and a stripe unit when there are several. */
static bool usable(const struct pando_ff_layout *l)
{
	uint32_t columns = l->mirror_count ? l->mirrors[0].ds_count : 0;

	if (l->mirror_count == 0 || columns == 0 ||
	    (uint64_t)l->mirror_count * columns > MAX_DEVICES)
		return false;
	if (columns > 1 && l->stripe_unit == 0)
		return false;
	for (uint32_t m = 0; m < l->mirror_count; m++) {
		if (l->mirrors[m].ds_count != columns)
			return false;
		for (uint32_t c = 0; c < columns; c++)
			if (l->mirrors[m].ds[c].fh_count == 0)
				return false;
	}
	return true;
}

/* Each target's connection, file handle and credential: 0, -ESTALE when
 * the session was lost, or a connect's -errno with *failed its target. */
static int bind_targets(struct client *cl, unsigned slot, struct open_file *f, unsigned *failed)
{
	f->mirrors = f->layout.mirror_count;
	f->columns = f->layout.mirrors[0].ds_count;
	f->stripe_unit = f->columns > 1 ? f->layout.stripe_unit : 0;
	f->ntargets = f->mirrors * f->columns;
	for (unsigned t = 0; t < f->ntargets; t++) {
		const struct pando_ff_data_server *ds =
			&f->layout.mirrors[t / f->columns].ds[t % f->columns];
		struct ds_target *target = &f->targets[t];

		int err = device_conn(cl, slot, ds->deviceid, &target->conn);

		if (err) {
			*failed = t;
			return err;
		}
		target->fh = ds->fh_vers[0];
		target->cred.uid = numeric_id(ds->user, cl->opt->uid);
		target->cred.gid = numeric_id(ds->group, cl->opt->gid);
	}
	return 0;
}

unsigned lo_target(const struct open_file *f, unsigned m, uint64_t off)
{
	unsigned c = f->stripe_unit ? (unsigned)((off / f->stripe_unit) % f->columns) : 0;

	return m * f->columns + c;
}

bool lo_below_threshold(const struct open_file *f, bool write, uint64_t size)
{
	uint64_t threshold = write ? f->threshold.write_size : f->threshold.read_size;

	return size < threshold;
}

/* The end of lo_get: 1 with every target bound.  A data server that
 * cannot be reached (only a workload that rides gets here) is reported in
 * LAYOUTRETURN, as Linux marks the device unavailable and reports it, and
 * the I/O goes through the MDS: 0. */
static int bind_or_return(struct client *cl, unsigned slot, struct open_file *f, uint64_t offset,
			  uint64_t length)
{
	unsigned t = 0;
	int err = bind_targets(cl, slot, f, &t);

	if (err == -ESTALE) {
		lo_forget(f);
		return -ESTALE;
	}
	if (!err)
		return 1;
	stats_add(&cl->st->ds_errors, 1);
	return lo_return_error(cl, slot, f, t, offset, length, err,
			       f->iomode == LAYOUTIOMODE4_READ ? OP_READ : OP_WRITE)
		       ? -ESTALE
		       : 0;
}

int lo_get(struct client *cl, unsigned slot, struct open_file *f, uint32_t iomode, uint64_t offset,
	   uint64_t length)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;
	struct nfs4_layout_res res;
	uint32_t status;

	cl_begin(cl, &c, slot, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, &f->fh);
	c4_layoutget(&c.w, iomode, offset, length, length, &f->open_sid, CTL_BUF - 1024);
	if (cl_call(cl, &c, "LAYOUTGET") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_check(cl, d4_op(&c.r, OP_LAYOUTGET, &status), OP_LAYOUTGET);
	/* Refusals Linux answers with I/O through the MDS (fs/nfs/pnfs.c);
	 * Pando says BADLAYOUT to writes a file can keep inline. */
	if (status == NFS4ERR_LAYOUTUNAVAILABLE || status == NFS4ERR_LAYOUTTRYLATER ||
	    status == NFS4ERR_BADLAYOUT || status == NFS4ERR_UNKNOWN_LAYOUTTYPE ||
	    status == NFS4ERR_NOTSUPP)
		return 0;
	if (status)
		cl_die(cl, "LAYOUTGET: %s (%u)", nfs4_status_name(status), status);
	cl_check(cl, d4_layoutget(&c.r, &res), OP_LAYOUTGET);
	if (pando_ff_layout_decode(res.body, res.body_len, &f->layout))
		cl_die(cl, "LAYOUTGET: malformed ff_layout4");
	stats_add(&cl->st->layouts, 1);
	f->has_layout = true;
	f->iomode = iomode;
	f->layout_sid = res.stateid;
	if (!usable(&f->layout) || res.offset > offset ||
	    (res.length != UINT64_MAX && res.offset + res.length < offset + length)) {
		/* A shape we cannot drive, or short: give it back and go
		 * through the MDS. */
		return lo_return(cl, slot, f);
	}
	return bind_or_return(cl, slot, f, offset, length);
}

/* The LAYOUTCOMMIT failures Linux ignores (nfs4_layoutcommit_done: the
 * layout was recalled or is gone), which a workload that rides ignores
 * too; for the others, none (NFS4_OK: every failure is fatal).  Whether
 * the data is where the size says is the server's to settle, and what
 * tests/bench/soak checks at its end. */
static uint32_t ignored_commit_error(const struct client *cl, const struct compound *c)
{
	if (cl_rides(cl) && (c->status == NFS4ERR_BADLAYOUT || c->status == NFS4ERR_BADIOMODE ||
			     c->status == NFS4ERR_DELEG_REVOKED))
		return c->status;
	return NFS4_OK;
}

int lo_commit(struct client *cl, unsigned slot, struct open_file *f, uint64_t offset,
	      uint64_t length)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, slot, 2, rbuf, sizeof(rbuf));
	c4_putfh(&c.w, &f->fh);
	c4_layoutcommit(&c.w, offset, length, &f->layout_sid, offset + length - 1);
	if (cl_call(cl, &c, "LAYOUTCOMMIT") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_PUTFH, 0);
	if (cl_op(cl, &c, OP_LAYOUTCOMMIT, ignored_commit_error(cl, &c)) == NFS4_OK)
		cl_check(cl, d4_layoutcommit(&c.r), OP_LAYOUTCOMMIT);
	else
		cl_note(cl, "LAYOUTCOMMIT: %s: ignored, as Linux does", nfs4_status_name(c.status));
	return 0;
}

static void lo_recalled(struct open_file *f, const struct pando_stateid *sid)
{
	uint32_t held = __atomic_load_n(&f->layout_sid.seqid, __ATOMIC_ACQUIRE);

	if (memcmp(sid->other, f->layout_sid.other, sizeof(sid->other)) == 0 &&
	    (int32_t)(sid->seqid - held) > 0)
		__atomic_store_n(&f->layout_sid.seqid, sid->seqid, __ATOMIC_RELEASE);
}

/* A LAYOUTRETURN refused as NFS4ERR_OLD_STATEID is sent again with the
 * next seqid at most this many times in all. */
enum { MAX_RETURN_TRIES = 8 };

static int send_return(struct client *cl, unsigned slot, struct open_file *f,
		       const struct pando_ff_layoutreturn *body)
{
	uint8_t rbuf[CTL_BUF], enc[1024];
	struct compound c;
	uint32_t status;
	size_t len;

	if (pando_ff_layoutreturn_encode(body, enc, sizeof(enc), &len))
		cl_die(cl, "LAYOUTRETURN: cannot encode the ff_layoutreturn4 body");
	for (unsigned tries = 1;; tries++) {
		cl_begin(cl, &c, slot, 2, rbuf, sizeof(rbuf));
		c4_putfh(&c.w, &f->fh);
		c4_layoutreturn(&c.w, f->iomode, 0, UINT64_MAX, &f->layout_sid, enc, (uint32_t)len);
		if (cl_call(cl, &c, "LAYOUTRETURN") == CL_LOST)
			return -ESTALE;
		cl_op(cl, &c, OP_PUTFH, 0);
		cl_check(cl, d4_op(&c.r, OP_LAYOUTRETURN, &status), OP_LAYOUTRETURN);
		/* The server moved the seqid past ours (its CB_LAYOUTRECALL
		 * does): as Linux does (nfs4_layoutreturn_refresh_stateid),
		 * take the next one and return again. */
		if (status != NFS4ERR_OLD_STATEID || tries == MAX_RETURN_TRIES)
			break;
		f->layout_sid.seqid++;
	}
	if (status == NFS4_OK)
		cl_check(cl, d4_layoutreturn(&c.r), OP_LAYOUTRETURN);
	else if (status != NFS4ERR_NOMATCHING_LAYOUT && !cl_rides(cl))
		cl_die(cl, "LAYOUTRETURN: %s (%u)", nfs4_status_name(status), status);
	else if (status != NFS4ERR_NOMATCHING_LAYOUT)
		/* nfs4_layoutreturn_done: any other failure leaves the layout
		 * returned (the MDS dropped it: a fence, say). */
		cl_note(cl, "LAYOUTRETURN: %s: taken as returned, as Linux does",
			nfs4_status_name(status));
	return 0;
}

void lo_forget(struct open_file *f)
{
	if (f->has_layout)
		pando_ff_layout_release(&f->layout);
	f->has_layout = false;
}

int lo_return(struct client *cl, unsigned slot, struct open_file *f)
{
	struct pando_ff_layoutreturn body = { 0 };
	int err;

	if (!f->has_layout)
		return 0;
	err = send_return(cl, slot, f, &body);
	lo_forget(f);
	return err;
}

int lo_return_error(struct client *cl, unsigned slot, struct open_file *f, unsigned t,
		    uint64_t offset, uint64_t length, int err, uint32_t opnum)
{
	struct pando_device_error derr = { .status = ds_error_status(err), .opnum = opnum };
	struct pando_ff_ioerr ioerr = { offset, length, f->layout_sid, 1, &derr };
	struct pando_ff_layoutreturn body = { 1, &ioerr, 0, NULL };
	int ret;

	if (!f->has_layout || slot >= cl->nslots)
		return 0;
	memcpy(derr.deviceid, f->layout.mirrors[t / f->columns].ds[t % f->columns].deviceid,
	       PANDO_FF_DEVICEID_SIZE);
	ret = send_return(cl, slot, f, &body);
	lo_forget(f);
	return ret;
}

bool lo_recall_is_ours(struct open_file *f, const struct nfs4_fh *fh,
		       const struct pando_stateid *sid)
{
	if (fh && (fh->len != f->fh.len || memcmp(fh->data, f->fh.data, fh->len)))
		return false;
	if (sid)
		lo_recalled(f, sid);
	return true;
}
