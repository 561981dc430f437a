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

#define DEFAULT_WEIGHT (1ull << 40)

static struct pando_view *view_alloc(size_t n)
{
	struct pando_view *v = mds_calloc(1, sizeof(*v));

	v->desc.osds = mds_calloc(n ? n : 1, sizeof(*v->desc.osds));
	v->state = mds_calloc(n ? n : 1, sizeof(*v->state));
	return v;
}

static void view_free(struct pando_view *v)
{
	if (v->placement)
		pando_placement_view_free(v->placement);
	free(v->desc.osds);
	free(v->state);
	free(v);
}

static bool takes(const struct pando_view_osd *s)
{
	return s->listed && s->up && s->in && s->weight > 0;
}

/* Same domain string, same id; "" is each OSD alone. */
static uint32_t domain_id(const struct pando_view *v, size_t i)
{
	if (!v->state[i].domain[0])
		return PANDO_DOMAIN_NONE;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(v->state[j].domain, v->state[i].domain))
			return (uint32_t)j + 1;
	return (uint32_t)i + 1;
}

/* Placement over the OSDs that take new components; the others are in
 * it with capacity 0, so maps naming them still decode against it. */
static int make_placement(struct pando_mds *mds, struct pando_view *v)
{
	struct pando_placement_policy pol = { .spares = 1, .bias_limit_ppm = 0 };
	size_t n = v->desc.nosds, takers = 0;
	struct pando_osd *osds = mds_calloc(n ? n : 1, sizeof(*osds));
	int rc;

	for (size_t i = 0; i < n; i++) {
		osds[i].id = v->desc.osds[i].id;
		osds[i].domain = domain_id(v, i);
		osds[i].capacity = takes(&v->state[i]) ? v->state[i].weight : 0;
		takers += osds[i].capacity > 0;
	}
	/* Spares are for rebuild; with no OSD left over for one, none. */
	if (takers <= mds->cfg.mirrors * mds->cfg.stripe_width)
		pol.spares = 0;
	rc = takers ? pando_placement_view_new(osds, n, &pol, &v->placement) : 0;
	free(osds);
	return rc;
}

static void publish(struct pando_mds *mds, struct pando_view *v)
{
	v->older = atomic_load_explicit(&mds->view, memory_order_relaxed);
	atomic_store_explicit(&mds->view, v, memory_order_release);
}

int pando_view_seed(struct pando_mds *mds)
{
	const struct cluster_desc *d = &mds->cluster;
	struct pando_view *v = view_alloc(d->nosds);
	int rc;

	v->desc.partition = d->partition;
	v->desc.nosds = d->nosds;
	snprintf(v->source, sizeof(v->source), "cluster.conf");
	for (size_t i = 0; i < d->nosds; i++) {
		v->desc.osds[i] = d->osds[i];
		v->state[i] = (struct pando_view_osd){ .listed = true,
						       .up = true,
						       .in = true,
						       .weight = d->osds[i].capacity
									 ? d->osds[i].capacity
									 : DEFAULT_WEIGHT };
	}
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

static ssize_t find(const struct pando_view *v, uint32_t id)
{
	size_t lo = 0, hi = v->desc.nosds;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->desc.osds[mid].id == id)
			return (ssize_t)mid;
		if (v->desc.osds[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const struct cluster_osd *pando_view_osd(const struct pando_view *v, uint32_t id,
					 const struct pando_view_osd **state)
{
	ssize_t i = find(v, id);

	if (i < 0)
		return NULL;
	if (state)
		*state = &v->state[i];
	return &v->desc.osds[i];
}

bool pando_view_takes(const struct pando_view *v, uint32_t id)
{
	ssize_t i = find(v, id);

	return i >= 0 && takes(&v->state[i]);
}

/* The union of the old view's OSDs and the map's, sorted by id: an OSD
 * the map dropped stays known (its components still name it), out. */
static struct pando_view *merge(const struct pando_view *old, const struct cluster_map *m)
{
	struct pando_view *v = view_alloc(old->desc.nosds + m->nosds);
	size_t i = 0, j = 0, n = 0;

	while (i < old->desc.nosds || j < m->nosds) {
		uint32_t a = i < old->desc.nosds ? old->desc.osds[i].id : UINT32_MAX;
		uint32_t b = j < m->nosds ? m->osds[j].id : UINT32_MAX;

		if (j < m->nosds && b <= a) {
			const struct cluster_map_osd *o = &m->osds[j++];
			struct cluster_osd *c = &v->desc.osds[n];

			c->id = o->id;
			strcpy(c->ctl, o->ctl);
			strcpy(c->nfs, o->nfs);
			strcpy(c->advertise, o->advertise);
			c->capacity = o->weight;
			v->state[n] = (struct pando_view_osd){
				.listed = true, .up = o->up, .in = o->in, .weight = o->weight
			};
			strcpy(v->state[n].domain, o->domain);
			i += a == b;
		} else {
			v->desc.osds[n] = old->desc.osds[i++];
		}
		n++;
	}
	v->desc.nosds = n;
	v->desc.partition = m->partition;
	v->epoch = m->epoch;
	return v;
}

/* "osd.5 new (up/in weight W), osd.3 now down/in weight W, osd.2 removed",
 * at most cap bytes; the OSDs that went out in outs[]. */
static void describe(const struct pando_view *old, const struct pando_view *v, char *buf,
		     size_t cap, uint32_t *outs, size_t *nout)
{
	size_t len = 0;

	buf[0] = 0;
	*nout = 0;
	for (size_t i = 0; i < v->desc.nosds; i++) {
		const struct pando_view_osd *was = NULL, *now = &v->state[i];
		const struct cluster_osd *c = &v->desc.osds[i];
		const struct cluster_osd *oc = pando_view_osd(old, c->id, &was);
		char what[160] = "";

		if (!oc)
			snprintf(what, sizeof(what), "osd.%u new (%s/%s weight %" PRIu64 ")", c->id,
				 now->up ? "up" : "down", now->in ? "in" : "out", now->weight);
		else if (was->listed && !now->listed)
			snprintf(what, sizeof(what), "osd.%u removed", c->id);
		else if (was->up != now->up || was->in != now->in || was->weight != now->weight)
			snprintf(what, sizeof(what), "osd.%u now %s/%s weight %" PRIu64, c->id,
				 now->up ? "up" : "down", now->in ? "in" : "out", now->weight);
		else if (strcmp(oc->ctl, c->ctl) || strcmp(oc->advertise, c->advertise))
			snprintf(what, sizeof(what), "osd.%u moved to %s (clients: %s)", c->id,
				 c->ctl, c->advertise);
		if (oc && was->listed && was->in && !(now->listed && now->in) &&
		    *nout < CLUSTER_DESC_MAX_OSDS)
			outs[(*nout)++] = c->id;
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
	for (size_t i = 0; i < v->desc.nosds; i++) {
		int rc = osd_conns_add(mds->conns, &v->desc.osds[i]);

		if (rc)
			mds_log(MDS_LOG_CRIT, __func__,
				"pando: cannot add osd.%u to the OSD connections: %s",
				v->desc.osds[i].id, strerror(-rc));
	}
}

int pando_view_apply(struct pando_mds *mds, const struct cluster_map *m, const char *source)
{
	uint32_t *outs = mds_calloc(CLUSTER_DESC_MAX_OSDS, sizeof(*outs));
	const struct pando_view *old;
	struct pando_view *v;
	char what[1024];
	size_t nout = 0;
	int rc;

	pthread_mutex_lock(&mds->view_lock);
	old = pando_view_get(mds);
	if (m->epoch <= old->epoch) {
		pthread_mutex_unlock(&mds->view_lock);
		free(outs);
		return -EALREADY;
	}
	v = merge(old, m);
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
	if (m->partition != mds->cluster.partition)
		mds_log(MDS_LOG_WARN, __func__,
			"pando: the cluster map says partition %" PRIu64 ", cluster.conf %" PRIu64
			": new objects stay in %" PRIu64,
			m->partition, mds->cluster.partition, mds->cluster.partition);
	mds_log(MDS_LOG_EVENT, __func__,
		"pando: cluster map epoch %" PRIu64 " applied (from %s): %s", v->epoch, source,
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
