/* The NFSv4.1 session of one client: EXCHANGE_ID, CREATE_SESSION (no back
 * channel), RECLAIM_COMPLETE, one SEQUENCE slot per worker, and
 * DESTROY_SESSION / DESTROY_CLIENTID at the end. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pnfsload.h"

#define SEQID_OFFSET (12 + 4 + NFS4_SESSIONID_SIZE)	/* in the args of cl_begin */
#define NFS4ERR_COMPLETE_ALREADY 10054u
#define DELAY_US 20000
#define RENEW_S 5

void cl_die(const struct client *cl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	die("client %u: %s", cl->idx, msg);
}

void cl_check(struct client *cl, int err, uint32_t opnum)
{
	if (err)
		cl_die(cl, "%s: malformed reply from the MDS", nfs4_op_name(opnum));
}

static void transport_die(const struct client *cl, const char *what, int err, uint32_t why)
{
	if (err == -EACCES)
		cl_die(cl, "%s: RPC call denied by the MDS (reject_stat %u)", what, why);
	if (err == -EPROTO)
		cl_die(cl, "%s: RPC not accepted by the MDS (accept_stat %u%s)", what, why,
		       why == 1 ? ": not an NFS server" : why == 2 ? ": no NFSv4" : "");
	if (err == -EBADMSG)
		cl_die(cl, "%s: malformed RPC reply from the MDS (is %s an NFS server?)", what,
		       cl->mds.name);
	cl_die(cl, "%s: %s: %s", what, cl->mds.name, strerror(-err));
}

/* A compound without SEQUENCE (EXCHANGE_ID, CREATE_SESSION, DESTROY_*). */
static int raw_call(struct client *cl, struct xdr_w *w, uint8_t *rbuf, size_t cap,
		    struct xdr_r *r, const char *what)
{
	struct iovec iov = { w->buf, w->len };
	const uint8_t *res;
	size_t len;
	uint32_t why = 0, status, nres;
	int err = rpc_call(&cl->mds, 0, NFSPROC4_COMPOUND, &cl->cred, &iov, 1, rbuf, cap, &res, &len,
			   &why);

	if (err)
		transport_die(cl, what, err, why);
	*r = (struct xdr_r){ res, res + len, false, false };
	if (d4_compound(r, &status, &nres))
		transport_die(cl, what, -EBADMSG, 0);
	return (int)status;
}

static void exchange_id(struct client *cl, uint32_t *seq, uint32_t *flags)
{
	uint8_t args[1024], rbuf[CTL_BUF], verifier[NFS4_VERIFIER_SIZE];
	struct xdr_w w = { args, sizeof(args), 0 };
	struct nfs4_exchange_res res;
	struct xdr_r r;
	uint64_t v = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ cl->idx;
	char owner[128];

	memcpy(verifier, &v, sizeof(verifier));
	snprintf(owner, sizeof(owner), "pnfsload.%d.%u.%u", (int)getpid(), cl->idx,
		 cl->idx - cl->opt->client_base);
	c4_begin(&w, 1);
	c4_exchange_id(&w, verifier, owner, 0);
	raw_call(cl, &w, rbuf, sizeof(rbuf), &r, "EXCHANGE_ID");
	uint32_t status;

	cl_check(cl, d4_op(&r, OP_EXCHANGE_ID, &status), OP_EXCHANGE_ID);
	if (status)
		cl_die(cl, "EXCHANGE_ID: %s (%u)", nfs4_status_name(status), status);
	cl_check(cl, d4_exchange_id(&r, &res), OP_EXCHANGE_ID);
	cl->clientid = res.clientid;
	*seq = res.sequenceid;
	*flags = res.flags;
}

static void create_session(struct client *cl, uint32_t seq)
{
	uint8_t args[1024], rbuf[CTL_BUF];
	struct xdr_w w = { args, sizeof(args), 0 };
	uint32_t size = cl->opt->transfer + REPLY_SLACK, status;
	struct nfs4_channel fore = { size, size, cl->opt->depth + 1 };
	struct nfs4_session_res res;
	struct xdr_r r;

	c4_begin(&w, 1);
	c4_create_session(&w, cl->clientid, seq, CREATE_SESSION4_FLAG_CONN_BACK_CHAN, &fore);
	raw_call(cl, &w, rbuf, sizeof(rbuf), &r, "CREATE_SESSION");
	cl_check(cl, d4_op(&r, OP_CREATE_SESSION, &status), OP_CREATE_SESSION);
	if (status)
		cl_die(cl, "CREATE_SESSION: %s (%u)", nfs4_status_name(status), status);
	cl_check(cl, d4_create_session(&r, &res), OP_CREATE_SESSION);
	memcpy(cl->sessionid, res.sessionid, sizeof(cl->sessionid));
	cl->back_channel = res.flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
	if (res.fore.maxrequests < 2)
		cl_die(cl, "CREATE_SESSION: the server granted %u slots, pnfsload needs 2",
		       res.fore.maxrequests);
	cl->nslots = res.fore.maxrequests - 1 < cl->opt->depth ? res.fore.maxrequests - 1
							       : cl->opt->depth;
	cl->renew_slot = cl->nslots;
	cl->maxrequest = res.fore.maxrequestsize;
	cl->maxresponse = res.fore.maxresponsesize;
	for (unsigned i = 0; i <= MAX_DEPTH; i++)
		cl->seq[i] = 1;
}

static void reclaim_complete(struct client *cl)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, 0, 1, rbuf, sizeof(rbuf));
	c4_reclaim_complete(&c.w);
	cl_call(cl, &c, "RECLAIM_COMPLETE");
	cl_op(cl, &c, OP_RECLAIM_COMPLETE, NFS4ERR_COMPLETE_ALREADY);
}

void cl_setup(struct client *cl)
{
	char name[300];
	uint32_t seq, flags;
	int err;

	pthread_mutex_init(&cl->renew_lock, NULL);
	pthread_mutex_init(&cl->devs_lock, NULL);
	pthread_cond_init(&cl->renew_cond, NULL);
	snprintf(name, sizeof(name), "MDS %s:%s", cl->opt->host, cl->opt->port);
	err = rpc_connect(&cl->mds, (const struct sockaddr *)&cl->mds_addr, cl->mds_addrlen,
			  NFS4_PROGRAM, NFS4_VERSION, cl->opt->depth + 1, name);
	if (!err)
		err = rpc_serve_calls(&cl->mds, cb_handler, cl);
	if (err)
		cl_die(cl, "connect to %s: %s", name, strerror(-err));
	snprintf(cl->owner, sizeof(cl->owner), "pnfsload-owner.%d.%u", (int)getpid(), cl->idx);
	exchange_id(cl, &seq, &flags);
	create_session(cl, seq);
	cl->pnfs = !cl->opt->no_layouts && (flags & EXCHGID4_FLAG_USE_PNFS_MDS);
	reclaim_complete(cl);
	ns_lookup_path(cl, NULL, cl->opt->export_path, false, &cl->root);
}

void cl_teardown(struct client *cl)
{
	uint8_t args[256], rbuf[CTL_BUF];
	struct xdr_w w = { args, sizeof(args), 0 };
	struct xdr_r r;

	for (unsigned i = 0; i < cl->ndevs; i++)
		rpc_close(&cl->devs[i].conn);
	c4_begin(&w, 1);
	c4_destroy_session(&w, cl->sessionid);
	raw_call(cl, &w, rbuf, sizeof(rbuf), &r, "DESTROY_SESSION");
	w.len = 0;
	c4_begin(&w, 1);
	c4_destroy_clientid(&w, cl->clientid);
	raw_call(cl, &w, rbuf, sizeof(rbuf), &r, "DESTROY_CLIENTID");
	rpc_close(&cl->mds);
}

void cl_begin(struct client *cl, struct compound *c, unsigned slot, uint32_t nops,
	      uint8_t *rbuf, size_t rcap)
{
	c->w = (struct xdr_w){ c->args, sizeof(c->args), 0 };
	c->payload = NULL;
	c->payload_len = 0;
	c->slot = slot;
	c->rbuf = rbuf;
	c->rcap = rcap;
	c4_begin(&c->w, nops + 1);
	c4_sequence(&c->w, cl->sessionid, 0, slot, cl->renew_slot);
}

/* SEQUENCE's result: true when the slot moved on (the compound ran). */
static bool sequence_done(struct client *cl, struct compound *c, const char *what)
{
	uint32_t status;

	cl_check(cl, d4_op(&c->r, OP_SEQUENCE, &status), OP_SEQUENCE);
	if (status == NFS4ERR_DELAY)
		return false;
	if (status)
		cl_die(cl, "%s: SEQUENCE slot %u seqid %u: %s (%u)", what, c->slot, cl->seq[c->slot],
		       nfs4_status_name(status), status);
	cl_check(cl, d4_sequence(&c->r, cl->sessionid), OP_SEQUENCE);
	cl->seq[c->slot]++;
	return true;
}

uint32_t cl_call(struct client *cl, struct compound *c, const char *what)
{
	static const uint8_t zeros[4];

	if (c->w.len > c->w.cap)
		cl_die(cl, "%s: compound too long", what);
	for (;;) {
		uint32_t seq = htonl(cl->seq[c->slot]), why = 0, nres;
		struct iovec iov[3] = { { c->args, c->w.len },
					{ (void *)c->payload, c->payload_len },
					{ (void *)zeros, XDR_PAD(c->payload_len) - c->payload_len } };
		const uint8_t *res;
		size_t len;
		int err;

		memcpy(c->args + SEQID_OFFSET, &seq, 4);
		err = rpc_call(&cl->mds, c->slot, NFSPROC4_COMPOUND, &cl->cred, iov,
			       c->payload_len ? 3 : 1, c->rbuf, c->rcap, &res, &len, &why);
		if (err)
			transport_die(cl, what, err, why);
		c->r = (struct xdr_r){ res, res + len, false, false };
		cl_check(cl, d4_compound(&c->r, &c->status, &nres), OP_SEQUENCE);
		if (sequence_done(cl, c, what) && c->status != NFS4ERR_DELAY &&
		    c->status != NFS4ERR_GRACE)
			return c->status;
		stats_add(&cl->st->errors, 1);
		usleep(DELAY_US);
	}
}

uint32_t cl_op(struct client *cl, struct compound *c, uint32_t opnum, uint32_t allowed)
{
	uint32_t status;

	cl_check(cl, d4_op(&c->r, opnum, &status), opnum);
	if (status != NFS4_OK && status != allowed)
		cl_die(cl, "%s: %s (%u)", nfs4_op_name(opnum), nfs4_status_name(status), status);
	return status;
}

/* Returns a recalled layout; called and returns with renew_lock held. */
static void give_back(struct client *cl)
{
	const struct recall_hook *h = cl->hook;

	cl->recall_pending = false;
	if (!h)
		return;
	cl->returning = true;
	pthread_mutex_unlock(&cl->renew_lock);
	h->give_back(h->arg, cl->renew_slot);
	pthread_mutex_lock(&cl->renew_lock);
	cl->returning = false;
	pthread_cond_broadcast(&cl->renew_cond);
}

static void *renewer_main(void *arg)
{
	struct client *cl = arg;
	uint8_t rbuf[CTL_BUF];
	struct compound c;
	struct timespec next;

	pthread_mutex_lock(&cl->renew_lock);
	clock_gettime(CLOCK_REALTIME, &next);
	next.tv_sec += RENEW_S;
	while (cl->renewing) {
		if (cl->recall_pending) {
			give_back(cl);
			continue;
		}
		if (pthread_cond_timedwait(&cl->renew_cond, &cl->renew_lock, &next) != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&cl->renew_lock);
		cl_begin(cl, &c, cl->renew_slot, 0, rbuf, sizeof(rbuf));
		cl_call(cl, &c, "SEQUENCE (lease renewal)");
		pthread_mutex_lock(&cl->renew_lock);
		clock_gettime(CLOCK_REALTIME, &next);
		next.tv_sec += RENEW_S;
	}
	pthread_mutex_unlock(&cl->renew_lock);
	return NULL;
}

void cl_start_renewer(struct client *cl)
{
	cl->renewing = true;
	if (pthread_create(&cl->renewer, NULL, renewer_main, cl))
		cl_die(cl, "cannot start the lease renewer");
}

void cl_stop_renewer(struct client *cl)
{
	pthread_mutex_lock(&cl->renew_lock);
	cl->renewing = false;
	pthread_cond_broadcast(&cl->renew_cond);
	pthread_mutex_unlock(&cl->renew_lock);
	pthread_join(cl->renewer, NULL);
}

void cl_set_recall_hook(struct client *cl, const struct recall_hook *hook)
{
	pthread_mutex_lock(&cl->renew_lock);
	while (cl->returning)
		pthread_cond_wait(&cl->renew_cond, &cl->renew_lock);
	cl->hook = hook;
	cl->recall_pending = false;
	pthread_mutex_unlock(&cl->renew_lock);
}
