/* The manager's presence in etcd (FSAL option Etcd): mds/<Mds_Name> kept
 * alive under a lease by common/etcd's presence thread, with what the
 * mgr shows and sums (mgr/README.md, "Metadata-manager presence").
 *
 * "clients" is the number of distinct clients holding layouts now: the
 * NFSv4 client table is Ganesha's and has no cheap count the FSAL may
 * read, and clients without layouts do no I/O the mgr would chart.
 * "degraded" counts the files with a stale component (the damage list). */
#include "pando_fsal.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_client.h"
#include "gsh_config.h"
#include "layouts.h"
#include "view.h"

#define PRESENCE_TTL_S 5
#define PRESENCE_INTERVAL_S 2

struct pando_presence {
	struct pando_export *exp;
	struct etcd_presence *etcd;
	char name[256];
	char nfs[300];
	char *key;
};

struct stale_count {
	uint64_t files;
	uint64_t last_ino;
};

static int count_stale(void *arg, const struct ns_damage *dr)
{
	struct stale_count *c = arg;

	if (dr->stale && dr->ino != c->last_ino) {
		c->files++;
		c->last_ino = dr->ino;
	}
	return 0;
}

static json_t *ops_json(struct pando_opstats *s)
{
	json_t *ops = json_object();

	for (int op = 0; op < PANDO_OP_COUNT; op++) {
		struct pando_op_snapshot snap;
		json_t *b = json_array();

		pando_opstats_get(s, op, &snap);
		for (int i = 0; i <= PANDO_OP_BOUNDS; i++)
			json_array_append_new(b, json_integer((json_int_t)snap.buckets[i]));
		json_object_set_new(ops, pando_op_names[op],
				    json_pack("{sI sf so}", "count", (json_int_t)snap.count, "sum",
					      snap.sum_ns / 1e9, "buckets", b));
	}
	return ops;
}

static json_t *bounds_json(void)
{
	json_t *a = json_array();

	for (int i = 0; i < PANDO_OP_BOUNDS; i++)
		json_array_append_new(a, json_real(pando_op_bounds[i]));
	return a;
}

static char *fill(void *arg)
{
	struct pando_presence *p = arg;
	struct pando_export *exp = p->exp;
	struct pando_layout_stats st = { 0 };
	struct stale_count stale = { 0 };
	struct timespec now;
	json_t *o;
	char *s;

	pando_grants_stats(exp->grants, &st);
	ns_damage_list(exp->ns, 0, count_stale, &stale);
	clock_gettime(CLOCK_REALTIME, &now);
	o = json_pack("{ss ss sI sf sI sI sI sI sI sI sI sI}", "name", p->name, "nfs", p->nfs,
		      "pid", (json_int_t)getpid(), "time", now.tv_sec + now.tv_nsec / 1e9, "epoch",
		      (json_int_t)pando_view_get(exp)->epoch, "clients",
		      (json_int_t)pando_grants_holders(exp->grants), "layouts",
		      (json_int_t)st.segments, "recalls", (json_int_t)st.recalls, "fences",
		      (json_int_t)st.fenced, "degraded", (json_int_t)stale.files,
		      "gateway_read_bytes", (json_int_t)atomic_load(&exp->mds_read_bytes),
		      "gateway_write_bytes", (json_int_t)atomic_load(&exp->mds_write_bytes));
	if (!o)
		return NULL;
	json_object_set_new(o, "store_failed", json_boolean(ns_failed(exp->ns)));
	json_object_set_new(o, "op_bounds", bounds_json());
	json_object_set_new(o, "ops", ops_json(exp->opstats));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static void log_state(void *arg, int level, const char *msg)
{
	struct pando_presence *p = arg;

	if (level)
		LogWarn(COMPONENT_FSAL, "pando: presence %s: %s", p->key, msg);
	else
		LogEvent(COMPONENT_FSAL, "pando: presence %s: %s", p->key, msg);
}

/* "HOST:PORT" clients mount: Bind_Addr when it names one, else the host. */
static void nfs_address(struct pando_presence *p)
{
	const struct sockaddr_in *sin = (const void *)&nfs_param.core_param.bind_addr;
	const struct sockaddr_in6 *sin6 = (const void *)&nfs_param.core_param.bind_addr;
	char host[INET6_ADDRSTRLEN + 2] = "";

	/* Ganesha resolves Bind_Addr as IPv6 first, so an IPv4 address is
	 * usually held v4-mapped (cluster/README.md, "Bind_Addr"). */
	if (sin->sin_family == AF_INET && sin->sin_addr.s_addr != htonl(INADDR_ANY)) {
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
	} else if (sin6->sin6_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		inet_ntop(AF_INET, &sin6->sin6_addr.s6_addr[12], host, sizeof(host));
	} else if (sin6->sin6_family == AF_INET6 && !IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr)) {
		host[0] = '[';
		inet_ntop(AF_INET6, &sin6->sin6_addr, host + 1, sizeof(host) - 2);
		strcat(host, "]");
	}
	snprintf(p->nfs, sizeof(p->nfs), "%s:%u", host[0] ? host : p->name,
		 nfs_param.core_param.port[P_NFS]);
}

int pando_presence_start(struct pando_export *exp, struct pando_presence **out)
{
	struct pando_presence *p = gsh_calloc(1, sizeof(*p));
	struct etcd_options eo;
	struct etcd_presence_options o = { .etcd = &eo,
					   .ttl_s = PRESENCE_TTL_S,
					   .interval_s = PRESENCE_INTERVAL_S,
					   .fill = fill,
					   .log = log_state,
					   .arg = p };
	size_t klen;
	int rc;

	p->exp = exp;
	if (exp->cfg.mds_name[0])
		snprintf(p->name, sizeof(p->name), "%s", exp->cfg.mds_name);
	else if (gethostname(p->name, sizeof(p->name) - 1) != 0)
		snprintf(p->name, sizeof(p->name), "mds");
	nfs_address(p);
	klen = strlen(exp->cfg.etcd_prefix) + strlen(p->name) + 8;
	p->key = gsh_malloc(klen);
	snprintf(p->key, klen, "%smds/%s", exp->cfg.etcd_prefix, p->name);
	o.key = p->key;
	pando_etcd_options(exp, 0, &eo);
	rc = etcd_presence_start(&o, &p->etcd);
	if (rc) {
		char what[300];

		snprintf(what, sizeof(what), "cannot keep presence %s", p->key);
		pando_etcd_new_failed(exp, what, rc);
		gsh_free(p->key);
		gsh_free(p);
		return rc;
	}
	LogEvent(COMPONENT_FSAL, "pando: presence %s in etcd %s", p->key, exp->cfg.etcd);
	*out = p;
	return 0;
}

const char *pando_presence_name(const struct pando_presence *p)
{
	return p ? p->name : "";
}

void pando_presence_kick(struct pando_presence *p)
{
	if (p)
		etcd_presence_kick(p->etcd);
}

void pando_presence_stop(struct pando_presence *p)
{
	if (!p)
		return;
	etcd_presence_stop(p->etcd);
	gsh_free(p->key);
	gsh_free(p);
}
