/* Rebuild of one file (rebuild.h; the handoff is in ../README.md,
 * "Rebuild"): copy each lost component from a healthy mirror while the
 * file stays in use, then freeze the file's writers (recall, fence),
 * copy again if anything was written meanwhile, and switch the storage
 * map in one batch that also claims the new objects' intent and records
 * the old ones for removal.  An RS component has no mirror: it is
 * decoded from k of the other components of its group instead
 * (objio_rs_rebuild.h), through the same steps. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grants.h"
#include "mds_clock.h"
#include "objio.h"
#include "objio_rs_rebuild.h"
#include "pando/placement.h"
#include "pando/policy.h"
#include "rebuild.h"
#include "view.h"

#define MAX_REPAIRS 16

struct repair {
	uint32_t g, c;
	struct pando_component src; /* a healthy mirror of the same column; not RS */
	struct pando_component dst; /* the new component (or the stale one) */
};

struct rebuild {
	struct pando_mds *mds;
	const struct pando_rebuild_task *t;
	struct pando_rebuild_pace *pace;
	void *buf;
	size_t cap;
	struct objio io;
	struct pando_storage_map *map;
	uint8_t *blob; /* the map the copy is for, encoded */
	size_t blen;
	struct repair r[MAX_REPAIRS];
	size_t n;
	bool in_place;   /* catch a stale component up where it is */
	bool rs;         /* decode from the group, no mirror */
	uint64_t size;   /* RS: the file size the copy is for */
	bool inflight;   /* registered with the reaper's guard */
	uint64_t intent; /* of the new objects; 0: none (yet) */
	/* The file's policy's pool ("": any OSD): new components stay in it,
	 * as its first ones were placed. */
	char pool[CLUSTER_MAP_POOL_MAX];
};

void pando_rebuild_pace(struct pando_rebuild_pace *p, uint64_t n)
{
	uint64_t now = mds_mono_ns(), start;
	struct timespec ts;

	pthread_mutex_lock(&p->lock);
	if (!p->bytes_per_s) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	start = p->next_free_ns > now ? p->next_free_ns : now;
	p->next_free_ns = start + n * 1000000000ull / p->bytes_per_s;
	pthread_mutex_unlock(&p->lock);
	if (start <= now)
		return;
	ts.tv_sec = (time_t)((start - now) / 1000000000ull);
	ts.tv_nsec = (long)((start - now) % 1000000000ull);
	nanosleep(&ts, NULL);
}

uint64_t pando_rebuild_load(struct pando_rebuild_pace *p, uint32_t osd, uint64_t add)
{
	uint64_t bytes = 0;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < REBUILD_LOAD_SLOTS; i++) {
		size_t k = (osd + i) % REBUILD_LOAD_SLOTS;

		if (p->load[k].osd == 0 && add)
			p->load[k].osd = osd;
		if (p->load[k].osd == osd) {
			p->load[k].bytes += add;
			bytes = p->load[k].bytes;
			break;
		}
		if (p->load[k].osd == 0)
			break;
	}
	pthread_mutex_unlock(&p->lock);
	return bytes;
}

void pando_rebuild_load_reset(struct pando_rebuild_pace *p)
{
	pthread_mutex_lock(&p->lock);
	memset(p->load, 0, sizeof(p->load));
	pthread_mutex_unlock(&p->lock);
}

static bool is_stale(const struct rebuild *rb, uint32_t osd)
{
	for (size_t i = 0; i < rb->io.nskip; i++)
		if (rb->io.skip[i] == osd)
			return true;
	return false;
}

/* A component that can be read now: not the one rebuilt, not stale, its
 * OSD up in the map and answering. */
static bool readable(const struct rebuild *rb, uint32_t osd)
{
	const struct cluster_map_osd *o = pando_view_osd(pando_view_get(rb->mds), osd);

	if (osd == rb->t->osd || is_stale(rb, osd))
		return false;
	if (o && !o->removed && !o->up)
		return false;
	return osd_conns_reachable(rb->mds->conns, osd);
}

static int pick_source(const struct rebuild *rb, uint32_t g, uint32_t c,
		       struct pando_component *src)
{
	uint32_t data = rb->map->shape.data, copies = rb->map->shape.copies;

	for (uint32_t k = 0; k < copies; k++) {
		const struct pando_component *m =
			pando_map_component(rb->map, g, k * data + c % data);

		if (k * data + c % data != c && readable(rb, m->osd_id)) {
			*src = *m;
			return 0;
		}
	}
	return -EIO;
}

static bool group_uses(const struct pando_storage_map *map, uint32_t g, uint32_t osd)
{
	for (uint32_t c = 0; c < pando_map_width(map); c++)
		if (pando_map_component(map, g, c)->osd_id == osd)
			return true;
	return false;
}

/* The job's spare if it may hold the component (in the file's pool),
 * else the declustered placement's choice over the pool (not in the
 * group, not in a domain the group uses):
 * of TARGET_DRAWS draws, the OSD given the fewest bytes to write in this
 * rebuild so far.  One random draw per component leaves the busiest
 * survivor with about 1.5 times the mean at 16 OSDs, and the rebuild
 * lasts as long as that survivor's writes; the best of a few draws
 * evens the writes out ("the power of two choices"). */
#define TARGET_DRAWS 3

static int pick_target(const struct rebuild *rb, uint32_t g, uint32_t c, uint64_t bytes,
		       uint32_t *osd)
{
	const struct pando_view *v = pando_view_get(rb->mds);
	const struct pando_placement_view *placement;
	uint64_t seed = rb->t->ino * 0x9e3779b97f4a7c15ull + rb->t->job, least = UINT64_MAX;
	int rc = -ENOSPC;

	placement = pando_view_placement(v, rb->pool);
	if (rb->t->target && pando_view_takes(v, rb->t->target) &&
	    cluster_map_osd_in_pool(pando_view_osd(v, rb->t->target), rb->pool) &&
	    !group_uses(rb->map, g, rb->t->target)) {
		*osd = rb->t->target;
		pando_rebuild_load(rb->pace, *osd, bytes);
		return 0;
	}
	for (int d = 0; placement && d < TARGET_DRAWS; d++) {
		/* The file's distributed spare comes first in every draw that
		 * sees it: the later draws look past it. */
		struct pando_storage_map unspared = *rb->map;
		uint32_t id;
		uint64_t load;

		unspared.spare_count = d ? 0 : rb->map->spare_count;
		if (pando_place_replacement(placement, &unspared, g, c,
					    seed + (uint64_t)d * 0xbf58476d1ce4e5b9ull, &id))
			continue;
		load = pando_rebuild_load(rb->pace, id, 0);
		if (load < least) {
			least = load;
			*osd = id;
			rc = 0;
		}
	}
	if (!rc)
		pando_rebuild_load(rb->pace, *osd, bytes ? bytes : 1);
	return rc;
}

/* What to copy where: every component on the task's OSD. */
static int plan(struct rebuild *rb)
{
	uint32_t width = pando_map_width(rb->map);
	uint64_t first = 0, len = 0;
	int rc = 0;

	rb->n = 0;
	for (uint32_t g = 0; !rc && g < rb->map->groups; g++) {
		for (uint32_t c = 0; !rc && c < width; c++) {
			struct repair *r = &rb->r[rb->n];

			if (pando_map_component(rb->map, g, c)->osd_id != rb->t->osd)
				continue;
			if (rb->n == MAX_REPAIRS)
				return -E2BIG;
			*r = (struct repair){ .g = g,
					      .c = c,
					      .dst = *pando_map_component(rb->map, g, c) };
			if (rb->rs)
				len = objio_rs_component_length(rb->map, g, c, rb->size);
			else
				rc = pick_source(rb, g, c, &r->src);
			if (!rc && !rb->in_place && !rb->rs)
				rc = objio_component_length(&rb->io, rb->map->partition_id, &r->src,
							    &len);
			if (!rc && !rb->in_place)
				rc = pick_target(rb, g, c, len, &r->dst.osd_id);
			rb->n++;
		}
	}
	if (!rc && rb->n == 0)
		return -ENOENT;
	if (!rc && !rb->in_place)
		rc = ns_ids_reserve(rb->mds->ns, (uint32_t)rb->n, &first);
	for (size_t i = 0; !rc && !rb->in_place && i < rb->n; i++)
		rb->r[i].dst.object_id = first + i;
	return rc;
}

/* The new (or the old) components alone, as a RAID-0 map: the form
 * intents name objects in. */
static int components_blob(const struct rebuild *rb, bool old, uint8_t **blob, size_t *len)
{
	struct pando_map_shape shape = { .raid = PANDO_RAID0,
					 .copies = 1,
					 .data = (uint8_t)rb->n,
					 .stripe_unit = rb->map->shape.stripe_unit,
					 .visit_rows = rb->map->shape.visit_rows };
	struct pando_storage_map *m;
	int rc = pando_map_new(&shape, 1, 0, &m);

	if (rc)
		return rc;
	m->seed = rb->map->seed;
	m->partition_id = rb->map->partition_id;
	for (size_t i = 0; i < rb->n; i++)
		m->comp[i] = old ? *pando_map_component(rb->map, rb->r[i].g, rb->r[i].c)
				 : rb->r[i].dst;
	rc = pando_map_blob(m, blob, len);
	pando_map_free(m);
	return rc;
}

/* The new objects: named by a durable intent first (a crash leaves them
 * to the reaper), made with the file's capability version. */
static int make_objects(struct rebuild *rb)
{
	uint32_t width = pando_map_width(rb->map), ver = OBJIO_CAP_VERSION_NEW;
	uint8_t *blob = NULL;
	size_t len = 0;
	int rc = components_blob(rb, false, &blob, &len);

	if (rc)
		return rc;
	pando_inflight_add(rb->mds, rb->t->ino);
	rb->inflight = true;
	rc = ns_intent_add(rb->mds->ns, rb->t->ino, blob, len, &rb->intent);
	free(blob);
	if (rc)
		return rc;
	pando_inflight_intent(rb->mds, rb->t->ino, rb->intent);
	rc = pando_objects_cap_version(rb->mds, rb->map, &ver);
	for (size_t i = 0; !rc && i < rb->n; i++)
		rc = objio_component_create(&rb->io, rb->map->partition_id, &rb->r[i].dst,
					    rb->r[i].g * width + rb->r[i].c, ver);
	return rc;
}

static int copy_range(struct rebuild *rb, const struct repair *r, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	int rc = 0;

	while (!rc && off < end) {
		uint64_t want = end - off < rb->cap ? end - off : rb->cap, got = 0;

		if (atomic_load(&rb->pace->stop))
			return -EINTR;
		pando_rebuild_pace(rb->pace, want);
		rc = objio_component_copy(&rb->io, rb->map->partition_id, &r->src, &r->dst, off,
					  want, rb->buf, rb->cap, &got);
		/* Progress counts what was copied, not what was scheduled. */
		atomic_fetch_add(&rb->pace->bytes, want);
		off += want;
	}
	return rc;
}

/* A stale component in place: only the extents whose checksums differ
 * from the source's (what it missed), the rest left as they are. */
static int catch_up_one(struct rebuild *rb, const struct repair *r, uint64_t len)
{
	const uint64_t ext = OSD_CTL_CSUM_EXTENT_BYTES;
	uint64_t extents = (len + ext - 1) / ext, first = 0;
	bool differs[OBJIO_DIFF_MAX];
	int rc = 0;

	while (!rc && first < extents) {
		size_t n = 0;

		rc = objio_component_diff(&rb->io, rb->map->partition_id, &r->src, &r->dst, first,
					  extents - first, differs, &n);
		if (!rc && n == 0)
			rc = -EPROTO;
		for (size_t i = 0; !rc && i < n; i++) {
			size_t run = 0;

			while (i + run < n && differs[i + run])
				run++;
			if (run)
				rc = copy_range(rb, r, (first + i) * ext, run * ext);
			i += run;
		}
		first += n;
	}
	return rc;
}

/* RS: the group's components that cannot be read now join the skip
 * list, so the decode does not wait on them row after row. */
static void skip_unreadable(struct rebuild *rb, uint32_t g)
{
	for (uint32_t c = 0; c < pando_map_width(rb->map); c++) {
		uint32_t osd = pando_map_component(rb->map, g, c)->osd_id;

		if (!is_stale(rb, osd) && !readable(rb, osd) && rb->io.nskip < OBJIO_MAX_SKIP)
			rb->io.skip[rb->io.nskip++] = osd;
	}
}

/* RS: the component decoded whole from the rest of its group, a stale
 * one in place too (no checksum says which of its extents it missed: no
 * other OSD holds its bytes).  Progress and pace count the bytes written,
 * as for a copy; each is read from k components. */
static int rs_copy_one(struct rebuild *rb, const struct repair *r)
{
	const struct pando_map_shape *s = &rb->map->shape;
	uint64_t len = objio_rs_component_length(rb->map, r->g, r->c, rb->size);
	size_t need = (size_t)pando_map_width(rb->map) * s->stripe_unit;
	size_t cap = rb->cap < need ? need : rb->cap;
	uint8_t *buf = rb->cap < need ? malloc(need) : rb->buf;
	/* object bytes holding the rows one buffer takes */
	uint64_t step = cap / need * (r->c < s->data ? (uint64_t)s->data : 1) * s->stripe_unit;
	int rc = buf ? 0 : -ENOMEM;

	skip_unreadable(rb, r->g);
	for (uint64_t off = 0; !rc && off < len; off += step) {
		uint64_t done = 0;

		if (atomic_load(&rb->pace->stop))
			rc = -EINTR;
		if (!rc)
			rc = objio_rs_rebuild_component(&rb->io, rb->map, r->g, r->c, &r->dst,
							rb->size, off,
							len - off < step ? len - off : step, buf,
							cap, &done);
		atomic_fetch_add(&rb->pace->bytes, done);
		pando_rebuild_pace(rb->pace, done);
	}
	if (buf != rb->buf)
		free(buf);
	return rc ? rc : objio_component_settle(&rb->io, rb->map->partition_id, &r->dst, len);
}

static int copy_one(struct rebuild *rb, const struct repair *r)
{
	uint64_t len = 0;
	int rc;

	if (rb->rs)
		return rs_copy_one(rb, r);
	rc = objio_component_length(&rb->io, rb->map->partition_id, &r->src, &len);
	if (!rc && rb->in_place)
		rc = catch_up_one(rb, r, len);
	if (rc == -EOPNOTSUPP || (!rc && !rb->in_place))
		rc = copy_range(rb, r, 0, len); /* no checksums: all of it */
	return rc ? rc : objio_component_settle(&rb->io, rb->map->partition_id, &r->dst, len);
}

static int copy_all(struct rebuild *rb)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < rb->n; i++)
		rc = copy_one(rb, &rb->r[i]);
	return rc;
}

/* Under the freeze: the map is still the one the copy was for. */
static int map_unchanged(struct rebuild *rb)
{
	void *now = NULL;
	size_t len = 0;
	int rc = ns_map_get(rb->mds->ns, rb->t->ino, &now, &len);

	if (!rc && (len != rb->blen || memcmp(now, rb->blob, len)))
		rc = -EAGAIN;
	free(now);
	return rc;
}

/* RS, under the freeze: whether the size moved since the copy (a
 * truncate changes rows without a write), taking the new one for the
 * copy again; asked before whether the file was written, so that copy
 * covers the rows a write added. */
static bool rs_resized(struct rebuild *rb)
{
	struct ns_attr a;

	if (!rb->rs)
		return false;
	if (ns_getattr(rb->mds->ns, rb->t->ino, &a) != 0)
		return true; /* cannot tell: copy again at the old size */
	if (a.size == rb->size)
		return false;
	rb->size = a.size;
	return true;
}

/* The new map, the old components' removal intent and the claim of the
 * new objects' intent: one durable batch. */
static int switch_map(struct rebuild *rb)
{
	struct pando_storage_map *next = NULL;
	uint8_t *blob = NULL, *orphans = NULL;
	size_t len = 0, olen = 0;
	int rc = pando_map_copy(rb->map, &next);

	for (size_t i = 0; !rc && i < rb->n; i++)
		rc = pando_map_replace_component(next, rb->r[i].g, rb->r[i].c, rb->r[i].dst.osd_id,
						 rb->r[i].dst.object_id);
	if (!rc)
		rc = pando_map_blob(next, &blob, &len);
	if (!rc)
		rc = components_blob(rb, true, &orphans, &olen);
	if (!rc)
		rc = ns_map_set(rb->mds->ns, rb->t->ino, 0, blob, len, orphans, olen, rb->intent);
	if (!rc)
		rb->intent = 0;
	free(blob);
	free(orphans);
	if (next)
		pando_map_free(next);
	return rc;
}

/* Copy while the file is in use, then again under the freeze if it was
 * written meanwhile, then the switch. */
static int handoff(struct rebuild *rb)
{
	struct pando_grants *g = rb->mds->grants;
	uint64_t mark = pando_grants_watch(g, rb->t->ino);
	int rc = rb->in_place ? 0 : make_objects(rb);

	if (!rc)
		rc = copy_all(rb);
	if (!rc)
		rc = pando_grants_freeze(g, rb->t->ino, "rebuild");
	if (rc) {
		pando_grants_unwatch(g, rb->t->ino);
		return rc == -ETIMEDOUT ? -EAGAIN : rc;
	}
	rc = map_unchanged(rb);
	/* RS copies again whole: a row write changes its data unit and every
	 * parity unit, so no component's own checksums say which rows the
	 * lost one missed. */
	if (!rc && (rs_resized(rb) || pando_grants_written_since(g, rb->t->ino, mark))) {
		mds_log(MDS_LOG_EVENT, __func__,
			"pando: inode %" PRIu64 " was written during its rebuild: "
			"copied again with its writers held",
			rb->t->ino);
		rc = copy_all(rb);
	}
	if (!rc && !rb->in_place)
		rc = switch_map(rb);
	if (!rc)
		rc = ns_damage_clear(rb->mds->ns, rb->t->ino, rb->t->osd);
	pando_grants_thaw(g, rb->t->ino);
	pando_grants_unwatch(g, rb->t->ino);
	return rc;
}

/* A failed rebuild's new objects go now if they can, else to the reaper. */
static void discard(struct rebuild *rb)
{
	struct pando_storage_map *m = NULL;
	uint8_t *blob = NULL;
	size_t len = 0;

	if (rb->intent && components_blob(rb, false, &blob, &len) == 0 &&
	    pando_map_decode(blob, len, &m) == 0 && objio_remove(&rb->io, m) == 0)
		ns_intent_done(rb->mds->ns, rb->intent);
	else if (rb->intent)
		pando_reaper_kick(rb->mds->reaper);
	free(blob);
	if (m)
		pando_map_free(m);
}

/* A stale component is caught up where it is when its OSD is up and in;
 * one on an OSD that is down but in waits (it may come back); on an OSD
 * that is out it moves. */
static int choose_mode(struct rebuild *rb)
{
	const struct cluster_map_osd *o = pando_view_osd(pando_view_get(rb->mds), rb->t->osd);
	bool out = o && !o->removed && !o->in;
	bool up = !o || o->removed || o->up;

	if (rb->t->job != 0 || out)
		return 0;
	if (!up || !osd_conns_reachable(rb->mds->conns, rb->t->osd))
		return -EAGAIN;
	rb->in_place = true;
	return 0;
}

static int load(struct rebuild *rb)
{
	int rc = pando_objects_open(rb->mds, rb->t->ino, &rb->io, &rb->map);
	struct ns_attr a;

	rb->rs = !rc && rb->map->shape.raid == PANDO_RS;
	if (rb->rs && !atomic_load(&rb->mds->parity_resynced)) {
		rc = -EAGAIN; /* decoding needs parity recomputed first (write_hole.c) */
	} else if (rb->rs) {
		rc = ns_getattr(rb->mds->ns, rb->t->ino, &a);
		rb->size = rc ? 0 : a.size;
	} else if (!rc && rb->map->shape.copies < 2)
		rc = -EIO; /* RAID-0: no other copy to rebuild from */
	if (!rc)
		rc = pando_map_blob(rb->map, &rb->blob, &rb->blen);
	return rc;
}

int pando_rebuild_file(struct pando_mds *mds, const struct pando_rebuild_task *t,
		       struct pando_rebuild_pace *pace, void *buf, size_t cap)
{
	struct rebuild rb = { .mds = mds, .t = t, .pace = pace, .buf = buf, .cap = cap };
	struct pando_policy policy;
	int rc = load(&rb);

	if (!rc && pando_file_policy(mds, t->ino, &policy))
		snprintf(rb.pool, sizeof(rb.pool), "%s", policy.pool);
	if (!rc)
		rc = choose_mode(&rb);
	if (!rc)
		rc = plan(&rb);
	if (!rc)
		rc = handoff(&rb);
	if (rc && rb.intent)
		discard(&rb);
	if (rb.inflight)
		pando_inflight_del(mds, t->ino);
	if (rc == -ENOENT || rc == -ENODATA) {
		/* The file went, went inline, or no longer uses the OSD. */
		ns_damage_clear(mds->ns, t->ino, t->osd);
		rc = 0;
	} else if (!rc) {
		/* Holders of the old map get the new one. */
		pando_grants_recall_file(mds->grants, t->ino, 0, false, "rebuilt");
		pando_reaper_kick(mds->reaper);
	}
	free(rb.blob);
	if (rb.map)
		pando_map_free(rb.map);
	return rc;
}
