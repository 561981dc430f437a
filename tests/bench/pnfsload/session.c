/* The NFSv4.1 session of one client: EXCHANGE_ID, CREATE_SESSION (no back
 * channel), RECLAIM_COMPLETE, one SEQUENCE slot per worker, and
 * DESTROY_SESSION / DESTROY_CLIENTID at the end.  With --writer a session
 * the MDS lost (it restarted) is made again, on a new connection. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pnfsload.h"

#define SEQID_OFFSET (12 + 4 + NFS4_SESSIONID_SIZE) /* in the args of cl_begin */
#define NFS4ERR_COMPLETE_ALREADY 10054u
#define DELAY_US 20000
#define RENEW_S 5
#define RECONNECT_US 100000

void cl_die(const struct client *cl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	die("client %u: %s", cl->idx, msg);
}

void cl_note(const struct client *cl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pnfsload: client %u: %s (at %.3f)\n", cl->idx, msg, monotonic_now());
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
		       why == 1   ? ": not an NFS server"
		       : why == 2 ? ": no NFSv4"
				  : "");
	if (err == -EBADMSG)
		cl_die(cl, "%s: malformed RPC reply from the MDS (is %s an NFS server?)", what,
		       cl->mds.name);
	cl_die(cl, "%s: %s: %s", what, cl->mds.name, strerror(-err));
}

/* A compound without SEQUENCE (EXCHANGE_ID, CREATE_SESSION, DESTROY_*).
 * Dies on a transport failure, unless recover() is making a new session:
 * then returns its -errno. */
static int raw_call(struct client *cl, struct xdr_w *w, uint8_t *rbuf, size_t cap, struct xdr_r *r,
		    const char *what)
{
	struct iovec iov = { w->buf, w->len };
	const uint8_t *res;
	size_t len;
	uint32_t why = 0, status, nres;
	int err = rpc_call(&cl->mds, 0, NFSPROC4_COMPOUND, &cl->cred, &iov, 1, rbuf, cap, &res,
			   &len, &why);

	if (err && cl->recovering)
		return err;
	if (err)
		transport_die(cl, what, err, why);
	*r = (struct xdr_r){ res, res + len, false, false };
	if (d4_compound(r, &status, &nres))
		transport_die(cl, what, -EBADMSG, 0);
	return (int)status;
}

static int exchange_id(struct client *cl, uint32_t *seq, uint32_t *flags)
{
	uint8_t args[1024], rbuf[CTL_BUF], verifier[NFS4_VERIFIER_SIZE];
	struct xdr_w w = { args, sizeof(args), 0 };
	struct nfs4_exchange_res res;
	struct xdr_r r;
	char owner[128];

	memcpy(verifier, &cl->verifier, sizeof(verifier));
	snprintf(owner, sizeof(owner), "pnfsload.%d.%u.%u", (int)getpid(), cl->idx,
		 cl->idx - cl->opt->client_base);
	c4_begin(&w, 1);
	c4_exchange_id(&w, verifier, owner, 0);
	int err = raw_call(cl, &w, rbuf, sizeof(rbuf), &r, "EXCHANGE_ID");
	uint32_t status;

	if (err < 0)
		return err;
	cl_check(cl, d4_op(&r, OP_EXCHANGE_ID, &status), OP_EXCHANGE_ID);
	if (status)
		cl_die(cl, "EXCHANGE_ID: %s (%u)", nfs4_status_name(status), status);
	cl_check(cl, d4_exchange_id(&r, &res), OP_EXCHANGE_ID);
	cl->clientid = res.clientid;
	*seq = res.sequenceid;
	*flags = res.flags;
	return 0;
}

static int create_session(struct client *cl, uint32_t seq)
{
	uint8_t args[1024], rbuf[CTL_BUF];
	struct xdr_w w = { args, sizeof(args), 0 };
	uint32_t size = cl->opt->transfer + REPLY_SLACK, status;
	struct nfs4_channel fore = { size, size, cl->opt->depth + 1 };
	struct nfs4_session_res res;
	struct xdr_r r;

	c4_begin(&w, 1);
	c4_create_session(&w, cl->clientid, seq, CREATE_SESSION4_FLAG_CONN_BACK_CHAN, &fore);
	int err = raw_call(cl, &w, rbuf, sizeof(rbuf), &r, "CREATE_SESSION");

	if (err < 0)
		return err;
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
	return 0;
}

static void reclaim_complete(struct client *cl)
{
	uint8_t rbuf[CTL_BUF];
	struct compound c;

	cl_begin(cl, &c, 0, 1, rbuf, sizeof(rbuf));
	c4_reclaim_complete(&c.w);
	if (cl_call(cl, &c, "RECLAIM_COMPLETE") == CL_LOST)
		return; /* the new session sent its own */
	cl_op(cl, &c, OP_RECLAIM_COMPLETE, NFS4ERR_COMPLETE_ALREADY);
}

static int connect_mds(struct client *cl)
{
	char name[300];
	int err;

	snprintf(name, sizeof(name), "MDS %s:%s", cl->opt->host, cl->opt->port);
	err = rpc_connect(&cl->mds, (const struct sockaddr *)&cl->mds_addr, cl->mds_addrlen,
			  NFS4_PROGRAM, NFS4_VERSION, cl->opt->depth + 1, name);
	return err ? err : rpc_serve_calls(&cl->mds, cb_handler, cl);
}

/* 0, or a transport -errno while recovering. */
static int open_session(struct client *cl)
{
	uint32_t seq, flags;
	int err;

	if ((err = exchange_id(cl, &seq, &flags)) || (err = create_session(cl, seq)))
		return err;
	cl->pnfs = !cl->opt->no_layouts && (flags & EXCHGID4_FLAG_USE_PNFS_MDS);
	reclaim_complete(cl);
	return 0;
}

void cl_setup(struct client *cl)
{
	int err;

	pthread_mutex_init(&cl->renew_lock, NULL);
	pthread_mutex_init(&cl->devs_lock, NULL);
	pthread_cond_init(&cl->renew_cond, NULL);
	cl->verifier = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ cl->idx;
	snprintf(cl->owner, sizeof(cl->owner), "pnfsload-owner.%d.%u", (int)getpid(), cl->idx);
	if (cl_rides(cl)) {
		/* An MDS that is restarting (refusing connections, then
		 * dropping them for a while) is waited for, as a mount would. */
		cl->recovering = true;
		while (connect_mds(cl) || open_session(cl)) {
			rpc_close(&cl->mds);
			usleep(RECONNECT_US);
		}
		cl->recovering = false;
	} else {
		if ((err = connect_mds(cl)))
			cl_die(cl, "connect to MDS %s:%s: %s", cl->opt->host, cl->opt->port,
			       strerror(-err));
		open_session(cl);
	}
	ns_lookup_path(cl, NULL, cl->opt->export_path, false, &cl->root);
}

bool cl_rides(const struct client *cl)
{
	return cl->opt->workload == WL_WRITER || cl->opt->workload == WL_VERIFIER;
}

/* cl_rides: the MDS restarted, or dropped our session.  Connects again
 * until a new session of the same client (owner and verifier), which
 * reclaims nothing, is made: a starting Ganesha accepts connections and
 * drops them for a while. */
static void recover(struct client *cl, const char *what)
{
	double t0 = monotonic_now();

	cl->recovering = true;
	do {
		rpc_close(&cl->mds);
		usleep(RECONNECT_US);
	} while (connect_mds(cl) || open_session(cl));
	cl->recovering = false;
	stats_add(&cl->st->recoveries, 1);
	cl_note(cl, "%s: the MDS lost the session; a new one after %.1f s", what,
		monotonic_now() - t0);
}

/* Whether a workload that rides makes a new session: the connection
 * failed, or the MDS no longer knows the session or the client id. */
static bool session_lost(const struct client *cl, int err, uint32_t seq_status)
{
	if (!cl_rides(cl))
		return false;
	if (err)
		return err != -EACCES && err != -EPROTO && err != -EBADMSG;
	return seq_status == NFS4ERR_BADSESSION || seq_status == NFS4ERR_DEADSESSION ||
	       seq_status == NFS4ERR_STALE_CLIENTID;
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

void cl_begin(struct client *cl, struct compound *c, unsigned slot, uint32_t nops, uint8_t *rbuf,
	      size_t rcap)
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

/* SEQUENCE's status; NFS4_OK: the slot moved on (the compound ran). */
static uint32_t sequence_status(struct client *cl, struct compound *c)
{
	uint32_t status, nres;

	cl_check(cl, d4_compound(&c->r, &c->status, &nres), OP_SEQUENCE);
	cl_check(cl, d4_op(&c->r, OP_SEQUENCE, &status), OP_SEQUENCE);
	if (status)
		return status;
	cl_check(cl, d4_sequence(&c->r, cl->sessionid), OP_SEQUENCE);
	cl->seq[c->slot]++;
	return NFS4_OK;
}

/* One try: 0 with *seq_status set, or a transport -errno. */
static int send_compound(struct client *cl, struct compound *c, uint32_t *seq_status, uint32_t *why)
{
	static const uint8_t zeros[4];
	uint32_t seq = htonl(cl->seq[c->slot]);
	struct iovec iov[3] = { { c->args, c->w.len },
				{ (void *)c->payload, c->payload_len },
				{ (void *)zeros, XDR_PAD(c->payload_len) - c->payload_len } };
	const uint8_t *res;
	size_t len;
	int err;

	memcpy(c->args + SEQID_OFFSET, &seq, 4);
	err = rpc_call(&cl->mds, c->slot, NFSPROC4_COMPOUND, &cl->cred, iov, c->payload_len ? 3 : 1,
		       c->rbuf, c->rcap, &res, &len, why);
	if (err)
		return err;
	c->r = (struct xdr_r){ res, res + len, false, false };
	*seq_status = sequence_status(cl, c);
	return 0;
}

uint32_t cl_call(struct client *cl, struct compound *c, const char *what)
{
	if (c->w.len > c->w.cap)
		cl_die(cl, "%s: compound too long", what);
	for (;;) {
		uint32_t seq = NFS4_OK, why = 0;
		int err = send_compound(cl, c, &seq, &why);

		if (session_lost(cl, err, seq)) {
			recover(cl, what);
			return c->status = CL_LOST;
		}
		if (err)
			transport_die(cl, what, err, why);
		if (seq && seq != NFS4ERR_DELAY)
			cl_die(cl, "%s: SEQUENCE slot %u seqid %u: %s (%u)", what, c->slot,
			       cl->seq[c->slot], nfs4_status_name(seq), seq);
		if (!seq && c->status != NFS4ERR_DELAY && c->status != NFS4ERR_GRACE)
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
