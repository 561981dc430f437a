/* Which files need a rebuild: every file whose map names a job's OSD,
 * and every stale component this manager recorded itself.  Each becomes
 * a task key in etcd (mgr/README.md, "Rebuild and scrub"), named so
 * that the files with the fewest healthy copies sort first. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_client.h"
#include "rebuild_queue.h"
#include "view.h"

/* A component still there: not on the OSD being rebuilt nor on an OSD
 * the map says is down or out. */
static bool usable(const struct pando_view *v, uint32_t id, uint32_t osd)
{
	const struct cluster_map_osd *o = pando_view_osd(v, id);

	if (id == osd)
		return false;
	return !o || o->removed || (o->up && o->in);
}

/* RS: a group with `lost` of its k + m components gone survives m - lost
 * more losses, as a mirrored column with m - lost + 1 copies left does;
 * counted so, RS and mirrored files sort together by how many more
 * failures they can take (0: data already lost), weakest group first. */
static uint32_t rs_healthy(const struct pando_view *v, const struct pando_storage_map *map,
			   uint32_t osd)
{
	uint32_t width = pando_map_width(map), m = map->shape.parity, least = m + 1;

	for (uint32_t g = 0; g < map->groups; g++) {
		uint32_t lost = 0;

		for (uint32_t c = 0; c < width; c++)
			lost += !usable(v, pando_map_component(map, g, c)->osd_id, osd);
		if (lost > m)
			return 0;
		if (m - lost + 1 < least)
			least = m - lost + 1;
	}
	return least;
}

/* Mirrors of the file's weakest column that are neither on the OSD
 * being rebuilt nor on an OSD the map says is down or out. */
static uint32_t healthy_copies(const struct pando_view *v, const struct pando_storage_map *map,
			       uint32_t osd)
{
	uint32_t data = map->shape.data, copies = map->shape.copies, least = copies;

	if (map->shape.raid == PANDO_RS)
		return rs_healthy(v, map, osd);
	for (uint32_t g = 0; g < map->groups; g++) {
		for (uint32_t col = 0; col < data; col++) {
			uint32_t ok = 0;

			for (uint32_t k = 0; k < copies; k++)
				ok += usable(v, pando_map_component(map, g, k * data + col)->osd_id,
					     osd);
			if (ok < least)
				least = ok;
		}
	}
	return least;
}

static uint64_t component_bytes(struct pando_mds *mds, uint64_t ino,
				const struct pando_storage_map *map, uint32_t osd)
{
	struct ns_attr a;
	uint32_t on = 0;

	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++)
		on += map->comp[c].osd_id == osd;
	if (ns_getattr(mds->ns, ino, &a) != 0 || map->shape.data == 0)
		return 0;
	return a.size / map->shape.data * on;
}

/* only_new leaves a key already there: the stale scan's task (job 0)
 * must not replace a job's task for the same component, or that job's
 * count of open tasks never reaches 0 and the job never ends. */
static int put_task(struct pando_rebuild *rq, struct etcd_client *etcd,
		    const struct pando_rebuild_task *t, uint32_t healthy, uint64_t bytes,
		    bool only_new)
{
	char key[512];
	struct timespec now;
	char *value;
	json_t *o;
	int rc;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(key, sizeof(key), "%srebuild/tasks/%s/%02u/%016" PRIx64 ".%u", rq->prefix,
		 rq->name, healthy > 99 ? 99 : healthy, t->ino, t->osd);
	o = json_pack("{sI sI sI sI sI sI sf}", "ino", (json_int_t)t->ino, "job",
		      (json_int_t)t->job, "osd", (json_int_t)t->osd, "target",
		      (json_int_t)t->target, "healthy", (json_int_t)healthy, "bytes",
		      (json_int_t)bytes, "queued", now.tv_sec + now.tv_nsec / 1e9);
	value = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!value)
		return -ENOMEM;
	rc = only_new ? etcd_create(etcd, key, value, strlen(value), 0)
		      : etcd_put(etcd, key, value, strlen(value), 0);
	free(value);
	return rc;
}

int pando_rebuild_put_task(struct pando_rebuild *rq, struct etcd_client *etcd,
			   const struct pando_rebuild_task *t, uint32_t healthy, uint64_t bytes)
{
	return put_task(rq, etcd, t, healthy, bytes, false);
}

struct job_scan {
	struct pando_rebuild *rq;
	struct etcd_client *etcd;
	const struct pando_view *view;
	const struct rebuild_job *job;
	uint64_t files, bytes;
	int rc;
};

static int scan_one(void *arg, uint64_t ino, const void *blob, size_t len)
{
	struct job_scan *js = arg;
	struct pando_storage_map *map;
	struct pando_rebuild_task t = {
		.ino = ino, .osd = js->job->osd, .job = js->job->id, .target = js->job->target
	};
	bool uses = false;
	uint64_t bytes;
	int rc;

	if (atomic_load(&js->rq->pace.stop))
		return -EINTR;
	if (pando_map_decode(blob, len, &map) != 0)
		return 0; /* pando-fsck's business */
	for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++)
		uses |= map->comp[c].osd_id == js->job->osd;
	if (uses) {
		bytes = component_bytes(js->rq->mds, ino, map, js->job->osd);
		rc = pando_rebuild_put_task(js->rq, js->etcd, &t,
					    healthy_copies(js->view, map, js->job->osd), bytes);
		if (rc)
			js->rc = rc;
		else {
			js->files++;
			js->bytes += bytes;
		}
	}
	pando_map_free(map);
	return js->rc;
}

int pando_rebuild_scan_job(struct pando_rebuild *rq, struct etcd_client *etcd,
			   const struct rebuild_job *job, uint64_t *files, uint64_t *bytes)
{
	struct job_scan js = { .rq = rq, .etcd = etcd, .view = pando_view_get(rq->mds), .job = job };
	int rc = ns_map_list(rq->mds->ns, scan_one, &js);

	*files = js.files;
	*bytes = js.bytes;
	return rc ? rc : js.rc;
}

struct stale_scan {
	struct pando_rebuild *rq;
	struct etcd_client *etcd;
	const struct pando_view *view;
	uint64_t files;
};

/* A stale component whose OSD is up and in is caught up in place; one
 * whose OSD is out moves (the out's job does that too, under the same
 * key, which is then left to the job); one whose OSD is down but in
 * waits for it. */
static int stale_one(void *arg, const struct ns_damage *dr)
{
	struct stale_scan *ss = arg;
	struct pando_rebuild_task t = { .ino = dr->ino, .osd = dr->osd_id };
	const struct cluster_map_osd *o = pando_view_osd(ss->view, dr->osd_id);
	struct pando_storage_map *map;

	if (!dr->stale || !pando_rebuild_idle_for(ss->rq, dr->ino))
		return 0;
	if (o && !o->removed && o->in && !o->up)
		return 0;
	if (pando_map_load(ss->rq->mds, dr->ino, &map) != 0)
		return 0;
	if (put_task(ss->rq, ss->etcd, &t, healthy_copies(ss->view, map, dr->osd_id),
		     component_bytes(ss->rq->mds, dr->ino, map, dr->osd_id), true) == 0)
		ss->files++;
	pando_map_free(map);
	return 0;
}

int pando_rebuild_scan_stale(struct pando_rebuild *rq, struct etcd_client *etcd, uint64_t *files)
{
	struct stale_scan ss = { .rq = rq, .etcd = etcd, .view = pando_view_get(rq->mds) };
	int rc = ns_damage_list(rq->mds->ns, 0, stale_one, &ss);

	*files = ss.files;
	return rc;
}
