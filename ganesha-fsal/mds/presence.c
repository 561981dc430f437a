/* The manager's presence in etcd (FSAL option Etcd): mds/<Mds_Name> kept
 * alive under a lease by common/etcd's presence thread, with what the
 * mgr shows and sums (mgr/README.md, "Metadata-manager presence").
 *
 * "clients" is the number of distinct clients holding layouts now: the
 * NFSv4 client table is Ganesha's and has no cheap count the FSAL may
 * read, and clients without layouts do no I/O the mgr would chart.
 * "degraded" counts the files with a stale component (the damage list). */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_client.h"
#include "grants.h"
#include "view.h"

#define PRESENCE_TTL_S 5
#define PRESENCE_INTERVAL_S 2

struct pando_presence {
	struct pando_mds *mds;
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

/* The store's quota and usage; zeros in the limits: none.  NULL when
 * the store cannot say (the value then has no "quota"). */
static json_t *quota_json(struct pando_mds *mds)
{
	struct ns_statfs st;
	struct ns_quota q;

	if (ns_quota_get(mds->ns, &q) || ns_statfs(mds->ns, &st))
		return NULL;
	return json_pack("{sI sI sI sI}", "bytes", (json_int_t)q.bytes, "files",
			 (json_int_t)q.files, "used_bytes", (json_int_t)st.bytes, "used_files",
			 (json_int_t)st.inodes);
}

static char *fill(void *arg)
{
	struct pando_presence *p = arg;
	struct pando_mds *mds = p->mds;
	struct pando_layout_stats st = { 0 };
	struct stale_count stale = { 0 };
	struct timespec now;
	json_t *o, *q;
	char *s;

	pando_grants_stats(mds->grants, &st);
	ns_damage_list(mds->ns, 0, count_stale, &stale);
	clock_gettime(CLOCK_REALTIME, &now);
	o = json_pack("{ss ss sI sf sI sI sI sI sI sI sI sI}", "name", p->name, "nfs", p->nfs,
		      "pid", (json_int_t)getpid(), "time", now.tv_sec + now.tv_nsec / 1e9, "epoch",
		      (json_int_t)pando_view_get(mds)->map.epoch, "clients",
		      (json_int_t)pando_grants_holders(mds->grants), "layouts",
		      (json_int_t)st.segments, "recalls", (json_int_t)st.recalls, "fences",
		      (json_int_t)st.fenced, "degraded", (json_int_t)stale.files,
		      "gateway_read_bytes", (json_int_t)atomic_load(&mds->mds_read_bytes),
		      "gateway_write_bytes", (json_int_t)atomic_load(&mds->mds_write_bytes));
	if (!o)
		return NULL;
	json_object_set_new(o, "store_failed", json_boolean(ns_failed(mds->ns)));
	json_object_set_new(o, "op_bounds", bounds_json());
	json_object_set_new(o, "ops", ops_json(mds->opstats));
	if ((q = quota_json(mds)))
		json_object_set_new(o, "quota", q);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static void log_state(void *arg, int level, const char *msg)
{
	struct pando_presence *p = arg;

	if (level)
		mds_log(MDS_LOG_WARN, __func__, "pando: presence %s: %s", p->key, msg);
	else
		mds_log(MDS_LOG_EVENT, __func__, "pando: presence %s: %s", p->key, msg);
}

int pando_presence_start(struct pando_mds *mds, struct pando_presence **out)
{
	struct pando_presence *p = mds_calloc(1, sizeof(*p));
	struct etcd_options eo;
	struct etcd_presence_options o = { .etcd = &eo,
					   .ttl_s = PRESENCE_TTL_S,
					   .interval_s = PRESENCE_INTERVAL_S,
					   .fill = fill,
					   .log = log_state,
					   .arg = p };
	size_t klen;
	int rc;

	p->mds = mds;
	pando_mds_name(mds, p->name, sizeof(p->name));
	snprintf(p->nfs, sizeof(p->nfs), "%s:%u", mds->nfs_host[0] ? mds->nfs_host : p->name,
		 mds->nfs_port);
	klen = strlen(mds->cfg.etcd_prefix) + strlen(p->name) + 8;
	p->key = mds_malloc(klen);
	snprintf(p->key, klen, "%smds/%s", mds->cfg.etcd_prefix, p->name);
	o.key = p->key;
	pando_etcd_options(mds, 0, &eo);
	rc = etcd_presence_start(&o, &p->etcd);
	if (rc) {
		char what[300];

		snprintf(what, sizeof(what), "cannot keep presence %s", p->key);
		pando_etcd_new_failed(mds, what, rc);
		free(p->key);
		free(p);
		return rc;
	}
	mds_log(MDS_LOG_EVENT, __func__, "pando: presence %s in etcd %s", p->key, mds->cfg.etcd);
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
	free(p->key);
	free(p);
}
