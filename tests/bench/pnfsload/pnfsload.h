/* pnfsload: shared types of the client, its workloads and main. */
#ifndef PNFSLOAD_H
#define PNFSLOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfs4_xdr.h"
#include "pando/ff_xdr.h"
#include "rpc.h"

#define MAX_TRANSFER (1u << 20)
#define MAX_DEPTH 64u
#define MAX_CLIENTS 1024u
#define MAX_DEVICES 64u
#define REPLY_SLACK 8192u /* room for headers around a transfer */
#define CTL_BUF 65536u    /* reply buffer for metadata compounds */
/* cl_call's answer when the MDS lost the session (it restarted) and a new
 * one was made (--writer and --verifier only): the caller's state is gone. */
#define CL_LOST 0xffffffffu

enum workload { WL_NONE, WL_IOR, WL_MDTEST, WL_LAYOUTGET, WL_WRITER, WL_VERIFIER, WL_FIND };
enum phase { PH_WRITE, PH_READ, PH_CREATE, PH_STAT, PH_REMOVE, PH_FIND };

struct options {
	char host[256];
	char port[16];
	char export_path[256];
	char dir[256];
	unsigned clients;
	unsigned client_base;
	unsigned depth;
	double start_at;
	/* IOR's stonewalling: no new transfer after this long (0: none),
	 * counted from --start-at when given, so every process stops at once. */
	double stonewall_s;
	bool no_layouts;
	bool progress;
	enum workload workload;
	enum phase phase;
	bool shared;
	/* ior-hard: the shared file's transfers go round the clients, transfer
	 * i of client c at (i * interleave + c) * transfer; 0: a segment of
	 * --block bytes each.  The clients of every process together. */
	unsigned interleave;
	uint32_t transfer;
	uint64_t block;
	bool verify;
	bool fsync;
	unsigned files;
	uint32_t write_bytes; /* mdtest -w: bytes written into each new file */
	uint64_t find_size;   /* --find: regular files of this size match; 0: none */
	bool unique_dir;
	uint64_t layoutgets; /* --layoutget: LAYOUTGETs per client */
	unsigned pace_ms;    /* --writer: at most one transfer per pace_ms */
	unsigned timeout_s;
	uint32_t uid;
	uint32_t gid;
	char ds_host[256]; /* reach data servers here, at their advertised port */
};

/* Counters of the whole run, updated with atomics. */
struct stats {
	uint64_t bytes;
	uint64_t ops;
	uint64_t layouts;
	uint64_t mds_io_bytes;
	uint64_t ds_io_bytes;
	uint64_t errors;     /* recovered: DELAY retries, refused layouts */
	uint64_t recoveries; /* --writer, --verifier: MDS sessions lost and made again */
	uint64_t ds_errors;  /* --writer, --verifier: data-server failures ridden through */
	uint64_t matches;    /* --find: files of --find-size */
	double t_start;      /* CLOCK_REALTIME, min over clients */
	double t_end;        /* max over clients */
	pthread_mutex_t lock;
};

struct device {
	uint8_t id[PANDO_FF_DEVICEID_SIZE];
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char name[300]; /* "DS <uaddr>", for messages */
	struct rpc_conn conn;
};

/* One mirror's data server as a file's I/O sees it. */
struct ds_target {
	struct rpc_conn *conn;
	struct pando_ff_fh fh;
	struct rpc_cred cred;
};

/* What a workload holding a layout tells the back channel. */
struct recall_hook {
	/* On the receiver thread, under the client's renew_lock: does a
	 * recall of fh (NULL: every layout) hit it?  If so, mark it recalled.
	 * A recall of its file also moves its seqid (lo_recall_is_ours; sid NULL
	 * with fh NULL). */
	bool (*matches)(void *arg, const struct nfs4_fh *fh, const struct pando_stateid *sid);
	/* On the renewer thread: return the recalled layout, on slot. */
	void (*give_back)(void *arg, unsigned slot);
	void *arg;
};

struct client {
	unsigned idx; /* global index (--client-base + local) */
	const struct options *opt;
	struct stats *st;
	struct rpc_conn mds;
	struct sockaddr_storage mds_addr;
	socklen_t mds_addrlen;
	struct rpc_cred cred;
	uint64_t clientid;
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t seq[MAX_DEPTH + 1];
	unsigned nslots;     /* session slots for the workers */
	unsigned renew_slot; /* one more, for the lease renewer */
	pthread_t renewer;
	bool renewing;
	pthread_mutex_t renew_lock; /* also: hook, recall_pending, returning */
	pthread_cond_t renew_cond;
	const struct recall_hook *hook;
	bool recall_pending;
	bool returning;
	bool back_channel;   /* the server bound our connection to its back channel */
	uint32_t maxrequest; /* fore channel sizes */
	uint32_t maxresponse;
	bool pnfs; /* the server is an MDS and layouts are wanted */
	char owner[64];
	uint64_t verifier;         /* EXCHANGE_ID's, the same on a new session */
	bool recovering;           /* making a lost session again (cl_rides) */
	struct nfs4_fh root;       /* the export */
	struct nfs4_fh dir;        /* --dir (or this client's unique dir) */
	struct nfs4_fh parent;     /* --dir when dir is a unique dir */
	pthread_mutex_t devs_lock; /* devs, ndevs: workers may LAYOUTGET at once */
	struct device devs[MAX_DEVICES];
	unsigned ndevs;
	double t_start;
	double t_end;
};

/* An open file and, with a layout, where its mirrors are: target
 * m * columns + c is mirror m's data server for stripe units c,
 * c + columns, ... (RFC 8435 sparse striping: each data server's object
 * keeps file offsets). */
struct open_file {
	struct nfs4_fh fh;
	struct pando_stateid open_sid;
	struct nfs4_mdsthreshold threshold; /* from the OPEN reply */
	bool has_layout;
	uint32_t iomode;
	struct pando_stateid layout_sid;
	struct pando_ff_layout layout;
	unsigned ntargets; /* mirrors x columns */
	unsigned mirrors;
	unsigned columns;
	uint64_t stripe_unit; /* 0 with one column */
	struct ds_target targets[MAX_DEVICES];
};

/* A compound in the making: SEQUENCE first, then the caller's ops. */
struct compound {
	uint8_t args[4096];
	struct xdr_w w;
	const uint8_t *payload; /* WRITE data after args, then padding */
	uint32_t payload_len;
	unsigned slot;
	uint8_t *rbuf;
	size_t rcap;
	struct xdr_r r; /* after cl_call: at the first op after SEQUENCE */
	uint32_t status;
};

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
double realtime_now(void);
double monotonic_now(void);
void stats_add(uint64_t *counter, uint64_t n);
void stats_span(struct stats *st, double t0, double t1);
/* Runs fn(state, k) for k in 0..n-1 at once, k = 0 on this thread. */
void run_workers(unsigned n, void (*fn)(void *state, unsigned k), void *state);

/* session.c */
/* Whether the workload rides through failures as a kernel client does
 * (--writer, --verifier): a lost session is made again, a data server
 * that fails is reported and the I/O goes another way.  The others stop
 * at the first failure. */
bool cl_rides(const struct client *cl);
void cl_setup(struct client *cl);
void cl_teardown(struct client *cl);
/* A SEQUENCE every few seconds on a slot of its own, so that the lease
 * outlives data-server I/O and --start-at waits. */
void cl_start_renewer(struct client *cl);
void cl_stop_renewer(struct client *cl);
/* Installs (or, with NULL, removes, waiting out a return in progress) the
 * workload's recall hook. */
void cl_set_recall_hook(struct client *cl, const struct recall_hook *hook);

/* callback.c: the rpc_call_handler of the MDS connection (arg: client). */
uint32_t cb_handler(void *arg, uint32_t prog, uint32_t proc, const uint8_t *args, size_t len,
		    struct xdr_w *res);
void cl_begin(struct client *cl, struct compound *c, unsigned slot, uint32_t nops, uint8_t *rbuf,
	      size_t rcap);
/* Sends it, retrying NFS4ERR_DELAY and NFS4ERR_GRACE; dies on transport
 * and SEQUENCE failures, except that a workload that rides (cl_rides)
 * makes a new connection and session when the MDS lost its own and
 * returns CL_LOST.  Returns the compound's status (the first failing
 * op's). */
uint32_t cl_call(struct client *cl, struct compound *c, const char *what);
/* Reads the next op's result header; dies naming the op on a malformed
 * reply or (unless allowed) a failure.  Returns the op's status. */
uint32_t cl_op(struct client *cl, struct compound *c, uint32_t opnum, uint32_t allowed);
void cl_check(struct client *cl, int err, uint32_t opnum);
/* A failure a workload that rides got through, on stderr with the
 * CLOCK_MONOTONIC time it happened at. */
void cl_note(const struct client *cl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cl_die(const struct client *cl, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* mds_io.c: WRITE and READ through the MDS; 0, or -ESTALE when the
 * session was lost (CL_LOST); any other failure is fatal. */
/* rbuf: CTL_BUF bytes. */
int mds_write(struct client *cl, unsigned slot, const struct open_file *f, const char *name,
	      uint64_t off, const uint8_t *buf, uint32_t count, uint32_t stable, uint8_t *rbuf);
/* Up to count bytes at off into rbuf (count + REPLY_SLACK bytes); *data
 * where they start, *len how many, *eof whether the file ends there. */
int mds_read(struct client *cl, unsigned slot, const struct open_file *f, uint64_t off,
	     uint32_t count, uint8_t *rbuf, const uint8_t **data, uint32_t *len, bool *eof);

/* namespace.c */
/* Walks path from `from` (NULL: the server's root), creating missing
 * directories when create is set (mkdir -p). */
void ns_lookup_path(struct client *cl, const struct nfs4_fh *from, const char *path, bool create,
		    struct nfs4_fh *out);
void ns_mkdir(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name,
	      struct nfs4_fh *out);
/* 0, or -ESTALE when the session was lost (CL_LOST), as lo_* below. */
int ns_open(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name,
	    bool create, uint32_t access, struct open_file *f);
void ns_close(struct client *cl, unsigned slot, struct open_file *f);
/* GETATTR of an open file: 0, or -ESTALE as ns_open. */
int ns_getattr(struct client *cl, unsigned slot, const struct open_file *f,
	       struct nfs4_attrs *attrs);
void ns_remove(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name);
void ns_stat(struct client *cl, unsigned slot, const struct nfs4_fh *dir, const char *name,
	     struct nfs4_attrs *attrs);

/* layout.c */
/* Whether a file of `size` bytes is one the MDS says to do I/O through
 * without asking for a layout (its FATTR4_MDSTHRESHOLD), as Linux's
 * pnfs_within_mdsthreshold decides. */
bool lo_below_threshold(const struct open_file *f, bool write, uint64_t size);
/* LAYOUTGET over [offset, offset + length); 1 granted, 0 when the server
 * refused (the file then does I/O through the MDS), or, for a workload
 * that rides, when a data server of the layout cannot be reached (it is
 * reported in the LAYOUTRETURN that gives the layout back). */
int lo_get(struct client *cl, unsigned slot, struct open_file *f, uint32_t iomode, uint64_t offset,
	   uint64_t length);
int lo_commit(struct client *cl, unsigned slot, struct open_file *f, uint64_t offset,
	      uint64_t length);
int lo_return(struct client *cl, unsigned slot, struct open_file *f);
/* A recall hook's test: whether a CB_LAYOUTRECALL of fh (NULL: every
 * file) is of f's file.  If so, the server moved the layout seqid with it
 * (RFC 8881 12.5.5.2.1.5; sid, when given), and the LAYOUTRETURN must
 * carry that one. */
bool lo_recall_is_ours(struct open_file *f, const struct nfs4_fh *fh,
		       const struct pando_stateid *sid);
/* Drops the layout without telling the MDS (it forgot it). */
void lo_forget(struct open_file *f);
/* The target of mirror m that holds file offset off. */
unsigned lo_target(const struct open_file *f, unsigned m, uint64_t off);
/* LAYOUTRETURN reporting that an I/O to target t failed (ff_ioerr4); the
 * layout is gone after it. */
int lo_return_error(struct client *cl, unsigned slot, struct open_file *f, unsigned t,
		    uint64_t offset, uint64_t length, int err, uint32_t opnum);

/* ds_io.c: NFSv3 to a data server; slot is the caller's slot on it.  Each
 * returns 0, an NFS3 status (> 0), -EREMOTEIO (a short or under-stable
 * write, a short read), -EBADMSG (a malformed reply) or a transport -errno. */
int ds_write_start(struct ds_target *t, unsigned slot, uint64_t off, const uint8_t *data,
		   uint32_t count, uint32_t stable, uint8_t *rbuf, size_t cap);
int ds_write_finish(struct ds_target *t, unsigned slot, uint32_t count, uint32_t stable);
/* How much of [off, off + count) lies in off's stripe unit of f. */
uint32_t ds_piece(const struct open_file *f, uint64_t off, uint32_t count);
/* Writes [off, off + count) to every mirror of f's layout, split at
 * stripe-unit boundaries (rbufs: 1 KiB per mirror).  0, or the first
 * failure (as above) with *failed the target that failed; every call it
 * started is finished either way. */
int ds_write_mirrors(struct open_file *f, unsigned slot, uint64_t off, const uint8_t *buf,
		     uint32_t count, uint32_t stable, uint8_t *rbufs, unsigned *failed);
/* READ into rbuf; *data: where the bytes start in it. */
int ds_read(struct ds_target *t, unsigned slot, uint64_t off, uint32_t count, uint8_t *rbuf,
	    size_t cap, const uint8_t **data);
int ds_commit(struct ds_target *t, unsigned slot, uint8_t *rbuf, size_t cap);
const char *ds_strerror(int err);
/* The nfsstat4 a data-server failure is reported as in LAYOUTRETURN. */
int32_t ds_error_status(int err);

/* pattern.c */
void pattern_fill(uint8_t *buf, uint64_t offset, uint32_t n, uint64_t seed);
/* The first offset whose byte is wrong, or UINT64_MAX. */
uint64_t pattern_check(const uint8_t *buf, uint64_t offset, uint32_t n, uint64_t seed);
/* The same, where a zero byte (a hole) counts as right too. */
uint64_t pattern_or_zero_check(const uint8_t *buf, uint64_t offset, uint32_t n, uint64_t seed);

/* ior.c, mdtest.c: set-up (untimed) and the timed phase of one client. */
void *ior_setup(struct client *cl);
void ior_run(struct client *cl, void *state);
void *mdtest_setup(struct client *cl);
void mdtest_run(struct client *cl, void *state);
void *layoutget_setup(struct client *cl);
void layoutget_run(struct client *cl, void *state);
void *writer_setup(struct client *cl);
void writer_run(struct client *cl, void *state);
void *verifier_setup(struct client *cl);
void verifier_run(struct client *cl, void *state);
void *find_setup(struct client *cl);
void find_run(struct client *cl, void *state);

#endif
