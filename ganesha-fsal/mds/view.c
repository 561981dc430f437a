/* The cluster view of the engine and how a cluster map becomes one
 * (view.h).  Applying is serialised by mds->view_lock; reading is a
 * single acquire load. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grants.h"
#include "pando/placement.h"
#include "view.h"

static void view_free(struct pando_view *v)
{
	pando_placement_view_free(v->placement);
	for (size_t i = 0; i < v->npools; i++)
		pando_placement_view_free(v->pools[i].placement);
	free(v->pools);
	cluster_map_free(&v->map);
	free(v);
}

/* Placement over the OSDs of pool ("": all) that take new components;
 * the others are in it with capacity 0, so maps naming them still
 * decode against it.  *out NULL when none takes. */
static int place_over(struct pando_mds *mds, const struct cluster_map *map, const char *pool,
		      struct pando_placement_view **out)
{
	struct pando_placement_policy pol = { .spares = 1, .bias_limit_ppm = 0, .pool = pool };
	size_t takers = 0;

	*out = NULL;
	for (size_t i = 0; i < map->nosds; i++)
		takers += cluster_map_osd_takes(&map->osds[i]) &&
			  cluster_map_osd_in_pool(&map->osds[i], pool);
	/* Spares are for rebuild; with no OSD left over for one, none. */
	if (takers <= mds->cfg.mirrors * mds->cfg.stripe_width)
		pol.spares = 0;
	return takers ? pando_placement_view_new(map, NULL, &pol, out) : 0;
}

static bool pool_listed(const struct pando_view *v, const char *name)
{
	for (size_t i = 0; i < v->npools; i++)
		if (!strcmp(v->pools[i].name, name))
			return true;
	return false;
}

static int cmp_pool(const void *a, const void *b)
{
	return strcmp(((const struct pando_view_pool *)a)->name,
		      ((const struct pando_view_pool *)b)->name);
}

/* The placement of every OSD, then one per pool the map's OSDs name. */
static int make_placement(struct pando_mds *mds, struct pando_view *v)
{
	int rc = place_over(mds, &v->map, "", &v->placement);

	v->pools = mds_calloc(v->map.nosds ? v->map.nosds : 1, sizeof(*v->pools));
	for (size_t i = 0; !rc && i < v->map.nosds; i++) {
		const char *name = v->map.osds[i].pool;

		if (!name[0] || pool_listed(v, name))
			continue;
		snprintf(v->pools[v->npools].name, sizeof(v->pools[0].name), "%s", name);
		rc = place_over(mds, &v->map, name, &v->pools[v->npools++].placement);
	}
	qsort(v->pools, v->npools, sizeof(*v->pools), cmp_pool);
	return rc;
}

const struct pando_placement_view *pando_view_placement(const struct pando_view *v,
							const char *pool)
{
	struct pando_view_pool key = { 0 }, *found;

	if (!pool || !pool[0])
		return v->placement;
	snprintf(key.name, sizeof(key.name), "%s", pool);
	found = bsearch(&key, v->pools, v->npools, sizeof(*v->pools), cmp_pool);
	return found ? found->placement : NULL;
}

static void publish(struct pando_mds *mds, struct pando_view *v)
{
	v->older = atomic_load_explicit(&mds->view, memory_order_relaxed);
	atomic_store_explicit(&mds->view, v, memory_order_release);
}

int pando_view_seed(struct pando_mds *mds)
{
	struct cluster_map none = { 0 };
	struct pando_view *v = mds_calloc(1, sizeof(*v));
	int rc = cluster_map_merge(&none, &mds->conf.map, &v->map);

	snprintf(v->source, sizeof(v->source), "cluster.conf");
	if (!rc)
		rc = make_placement(mds, v);
	if (rc) {
		view_free(v);
		return rc;
	}
	publish(mds, v);
	return 0;
}

const struct pando_view *pando_view_get(struct pando_mds *mds)
{
	return atomic_load_explicit(&mds->view, memory_order_acquire);
}

const struct cluster_map_osd *pando_view_osd(const struct pando_view *v, uint32_t id)
{
	return cluster_map_osd(&v->map, id);
}

bool pando_view_takes(const struct pando_view *v, uint32_t id)
{
	const struct cluster_map_osd *o = cluster_map_osd(&v->map, id);

	return o && cluster_map_osd_takes(o);
}

static const char *state(const struct cluster_map_osd *o)
{
	return o->up ? (o->in ? "up/in" : "up/out") : (o->in ? "down/in" : "down/out");
}

/* What became of OSD now since the old view, in what[cap]; "" if nothing. */
static void describe_osd(const struct pando_view *old, const struct cluster_map_osd *now,
			 char *what, size_t cap)
{
	const struct cluster_map_osd *was = pando_view_osd(old, now->id);

	what[0] = 0;
	if (!was)
		snprintf(what, cap, "osd.%u new (%s weight %" PRIu64 ")", now->id, state(now),
			 now->weight);
	else if (!was->removed && now->removed)
		snprintf(what, cap, "osd.%u removed", now->id);
	else if (was->up != now->up || was->in != now->in || was->weight != now->weight)
		snprintf(what, cap, "osd.%u now %s weight %" PRIu64, now->id, state(now),
			 now->weight);
	else if (strcmp(was->ctl, now->ctl) || strcmp(was->advertise, now->advertise))
		snprintf(what, cap, "osd.%u moved to %s (clients: %s)", now->id, now->ctl,
			 now->advertise);
	else if (strcmp(was->pool, now->pool))
		snprintf(what, cap, "osd.%u now in pool \"%s\"", now->id, now->pool);
}

/* "osd.5 new (up/in weight W), osd.3 now down/in weight W, osd.2 removed",
 * at most cap bytes; the OSDs that went out in outs[]. */
static void describe(const struct pando_view *old, const struct pando_view *v, char *buf,
		     size_t cap, uint32_t *outs, size_t *nout)
{
	size_t len = 0;

	buf[0] = 0;
	*nout = 0;
	for (size_t i = 0; i < v->map.nosds; i++) {
		const struct cluster_map_osd *now = &v->map.osds[i];
		const struct cluster_map_osd *was = pando_view_osd(old, now->id);
		char what[160];

		describe_osd(old, now, what, sizeof(what));
		if (was && !was->removed && was->in && (now->removed || !now->in) &&
		    *nout < CLUSTER_MAP_MAX_OSDS)
			outs[(*nout)++] = now->id;
		if (what[0] && len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
						what);
	}
	if (!buf[0])
		snprintf(buf, cap, "no OSD changed");
}

/* Connections for the OSDs the pool does not know yet, or at new
 * addresses (the pool closes nothing a caller may be using). */
static void connect_new(struct pando_mds *mds, const struct pando_view *v)
{
	for (size_t i = 0; i < v->map.nosds; i++) {
		int rc = osd_conns_add(mds->conns, &v->map.osds[i]);

		if (rc)
			mds_log(MDS_LOG_CRIT, __func__,
				"pando: cannot add osd.%u to the OSD connections: %s",
				v->map.osds[i].id, strerror(-rc));
	}
}

int pando_view_apply(struct pando_mds *mds, const struct cluster_map *m, const char *source)
{
	uint32_t *outs = mds_calloc(CLUSTER_MAP_MAX_OSDS, sizeof(*outs));
	const struct pando_view *old;
	struct pando_view *v;
	char what[1024];
	size_t nout = 0;
	int rc;

	pthread_mutex_lock(&mds->view_lock);
	old = pando_view_get(mds);
	if (m->epoch <= old->map.epoch) {
		pthread_mutex_unlock(&mds->view_lock);
		free(outs);
		return -EALREADY;
	}
	v = mds_calloc(1, sizeof(*v));
	rc = cluster_map_merge(&old->map, m, &v->map);
	if (rc) {
		pthread_mutex_unlock(&mds->view_lock);
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: cluster map epoch %" PRIu64 " not applied: %s", m->epoch,
			strerror(-rc));
		free(v);
		free(outs);
		return rc;
	}
	snprintf(v->source, sizeof(v->source), "%s", source);
	connect_new(mds, v);
	rc = make_placement(mds, v);
	if (rc)
		mds_log(MDS_LOG_CRIT, __func__,
			"pando: cluster map epoch %" PRIu64
			": no placement (%s): no file can move to objects until a map places",
			m->epoch, strerror(-rc));
	describe(old, v, what, sizeof(what), outs, &nout);
	publish(mds, v);
	pthread_mutex_unlock(&mds->view_lock);
	if (m->partition != mds->conf.map.partition)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: the cluster map says partition %" PRIu64 ", cluster.conf %" PRIu64
			": new objects stay in %" PRIu64,
			m->partition, mds->conf.map.partition, mds->conf.map.partition);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: cluster map epoch %" PRIu64 " applied (from %s): %s", v->map.epoch, source,
		what);
	for (size_t i = 0; i < nout && mds->grants; i++)
		pando_grants_recall_osd(mds->grants, outs[i], "an OSD it uses is out");
	free(outs);
	return 0;
}

void pando_views_free(struct pando_mds *mds)
{
	struct pando_view *v = atomic_load(&mds->view);

	while (v) {
		struct pando_view *older = v->older;

		view_free(v);
		v = older;
	}
	atomic_store(&mds->view, NULL);
}
