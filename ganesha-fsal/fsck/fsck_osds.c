/* The object check, step 2: what the OSDs hold.  Every partition the maps
 * and intents use is listed on every OSD of the cluster map, and each
 * object listed is matched against what the namespace names: an object
 * nothing names is an orphan (removed on repair, unless the file it says
 * it belongs to has a map that cannot be read), a RAID-0/1 object longer
 * than its file has a tail (trimmed on repair), and what a map names and
 * its OSD lacks is missing.  An OSD that does not answer is reported, and
 * its objects are not counted missing. */
#include "fsck_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "pando/osd_ctl_client.h"
#include "pando/storage_map.h"

/* Page 1 (file-system attributes): logical length and owning file. */
#define ATTR_PAGE 1
#define ATTR_LENGTH 1
#define ATTR_OWNER 5

/* Every control call is made once, not retried over a lost connection:
 * what fails is reported (an OSD that does not answer is unreachable, and
 * its objects are not counted missing: list_osd). */
static int call_once(struct fsck *f, uint32_t osd, osd_conns_fn fn, void *arg)
{
	return osd_conns_call_tries(f->conns, osd, 1, fn, arg);
}

struct attrs_call {
	struct osd_ctl_obj_id id;
	struct osd_ctl_attr attrs[2];
	size_t n;
};

static int attrs_fn(struct osd_ctl_client *c, void *arg)
{
	static const struct osd_ctl_attr_key keys[2] = {
		{ ATTR_PAGE, ATTR_LENGTH },
		{ ATTR_PAGE, ATTR_OWNER },
	};
	struct attrs_call *a = arg;

	return osd_ctl_getattr(c, &a->id, keys, 2, a->attrs, 2, &a->n);
}

/* Page-1 attributes of an object: logical length and owning file. */
static int object_attrs(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object,
			uint64_t *length, uint64_t *owner)
{
	struct attrs_call a = { .id = { partition, object } };
	/* A short answer is checked here, not in attrs_fn: the OSD did
	 * answer, and an -EPROTO recorded would mark it unreachable. */
	int rc = call_once(f, osd, attrs_fn, &a);

	if (!rc && (a.n != 2 || a.attrs[0].len != 8 || a.attrs[1].len != 8))
		rc = -EPROTO;
	if (!rc) {
		*length = get_be64(a.attrs[0].value);
		*owner = get_be64(a.attrs[1].value);
	}
	return rc;
}

struct remove_call {
	uint64_t partition;
	uint64_t object;
	int res;
};

static int remove_fn(struct osd_ctl_client *c, void *arg)
{
	struct remove_call *r = arg;

	return osd_ctl_objects_remove(c, r->partition, &r->object, 1, &r->res);
}

int fsck_remove_object(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
{
	struct remove_call r = { partition, object, 0 };
	int rc = call_once(f, osd, remove_fn, &r);

	if (!rc)
		rc = r.res;
	return rc == -ENOENT ? 0 : rc;
}

static void orphan(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
{
	uint64_t length = 0, owner = 0;
	char who[64] = "attributes unreadable", buf[160];
	const char *end = "";
	bool removed = false;
	int rc = object_attrs(f, osd, partition, object, &length, &owner);

	if (!rc)
		snprintf(who, sizeof(who), "file %llu, %llu bytes", (unsigned long long)owner,
			 (unsigned long long)length);
	/* Its file's map, unreadable, may well name it. */
	if (!rc && fsck_is_broken(f, owner)) {
		end = ": kept: its file's map is undecodable";
	} else if (f->o->repair) {
		rc = fsck_remove_object(f, osd, partition, object);
		removed = !rc;
		end = fsck_outcome(f, rc, "removed", buf, sizeof(buf));
	}
	fsck_problem(f, FSCK_ORPHAN_OBJECT, removed,
		     "osd %u: orphan object %llu in partition "
		     "%llu (%s): named by no map or intent%s",
		     osd, (unsigned long long)object, (unsigned long long)partition, who, end);
}

struct length_call {
	struct osd_ctl_obj_id id;
	struct osd_ctl_attr length;
};

static int set_length_fn(struct osd_ctl_client *c, void *arg)
{
	struct length_call *l = arg;

	return osd_ctl_setattr(c, &l->id, &l->length, 1, NULL);
}

static int truncate_object(struct fsck *f, const struct want *w)
{
	struct length_call l = {
		.id = { w->partition, w->object },
		.length = { .page = ATTR_PAGE, .number = ATTR_LENGTH, .len = 8 },
	};

	put_be64(l.length.value, w->size);
	return call_once(f, w->osd, set_length_fn, &l);
}

/* RAID-0 and RAID-1 objects keep file offsets: none is longer than its
 * file.  (RS components pack rows; their lengths say nothing.) */
static void check_size(struct fsck *f, const struct want *w)
{
	uint64_t length, owner;
	char done[64], buf[128];
	int rc;

	if (w->size == UNKNOWN_SIZE || w->raid == PANDO_RS)
		return;
	if (object_attrs(f, w->osd, w->partition, w->object, &length, &owner) || length <= w->size)
		return;
	/* Bytes past the size are what a crash left of writes it never
	 * acknowledged (the size update was lost with them), or pNFS writes
	 * whose LAYOUTCOMMIT was refused (the protocol never made them part of
	 * the file): not damage, but a later growth of the file would show
	 * them instead of zeros, so --repair trims them.  -v lists them first,
	 * for an admin who wants to look. */
	rc = f->o->repair ? truncate_object(f, w) : 0;
	snprintf(done, sizeof(done), "truncated to %llu", (unsigned long long)w->size);
	fsck_detail(f,
		    "file %llu: object %llu (component %u) on osd %u holds %llu bytes, past the "
		    "file's size %llu (a tail of writes never committed to the size)%s",
		    (unsigned long long)w->ino, (unsigned long long)w->object, w->component, w->osd,
		    (unsigned long long)length, (unsigned long long)w->size,
		    fsck_outcome(f, rc, done, buf, sizeof(buf)));
}

static void listed(struct fsck *f, uint32_t osd, uint64_t partition, uint64_t object)
{
	struct want *w = fsck_want_find(f, osd, partition, object);

	if (++f->res->listed % NS_PROGRESS_EVERY == 0 && f->h->progress)
		f->h->progress(f->h->arg, "objects", f->res->listed);
	/* The journal's: no map names them, and they are not orphans. */
	if (object & PANDO_JOURNAL_OBJECT_BIT) {
		f->res->journal++;
		return;
	}
	if (!w) {
		orphan(f, osd, partition, object);
		return;
	}
	if (!w->intent)
		check_size(f, w);
	for (; w < f->wants + f->nwants && w->osd == osd && w->partition == partition &&
	       w->object == object;
	     w++)
		w->seen = true;
}

struct list_call {
	uint64_t partition;
	uint64_t after;
	uint64_t *ids;
	size_t n;
	bool eof;
};

/* One batch of the partition's ids past after. */
static int list_fn(struct osd_ctl_client *c, void *arg)
{
	struct list_call *l = arg;

	return osd_ctl_list(c, l->partition, l->after, l->ids, OSD_CTL_CLIENT_MAX_BATCH, &l->n,
			    &l->eof);
}

static int list_partition(struct fsck *f, const struct cluster_map_osd *o, uint64_t partition,
			  uint64_t *ids)
{
	struct list_call l = { .partition = partition, .ids = ids };
	int rc = 0;

	while (!rc && !l.eof) {
		l.n = 0;
		rc = call_once(f, o->id, list_fn, &l);
		for (size_t i = 0; !rc && i < l.n; i++)
			listed(f, o->id, partition, ids[i]);
		if (!rc && l.n)
			l.after = ids[l.n - 1];
		else if (!rc && !l.eof)
			rc = -EPROTO; /* no progress: the target would keep us here */
	}
	/* A partition the OSD never got holds nothing. */
	return rc == -ENOENT ? 0 : rc;
}

bool fsck_osd_out(const struct fsck *f, uint32_t id)
{
	for (size_t i = 0; i < f->o->nout; i++)
		if (f->o->out[i] == id)
			return true;
	return false;
}

static void list_osd(struct fsck *f, size_t i, uint64_t *ids)
{
	const struct cluster_map_osd *o = &f->cluster_map->osds[i];
	int rc = 0;

	for (size_t p = 0; !rc && p < f->nparts; p++)
		rc = list_partition(f, o, f->parts[p], ids);
	if (!rc) {
		fsck_detail(f, "osd %u (%s): listed", o->id, o->ctl);
		return;
	}
	f->down[i] = true;
	/* A dead OSD the map took out is expected not to answer; whether
	 * files still name it is the redundancy check's to say. */
	if (fsck_osd_out(f, o->id))
		fsck_note(f, "osd %u (%s): out, and unreachable: %s: not checked", o->id, o->ctl,
			  strerror(-rc));
	else
		fsck_problem(f, FSCK_UNREACHABLE_OSD, false,
			     "osd %u (%s): unreachable: %s: its "
			     "objects were not checked",
			     o->id, o->ctl, strerror(-rc));
}

bool fsck_osd_down(const struct fsck *f, uint32_t id)
{
	const struct cluster_map_osd *o = cluster_map_osd(f->cluster_map, id);

	return !o || f->down[o - f->cluster_map->osds];
}

/* Whatever a map names and no OSD holds.  With mirrors or parity another
 * copy may survive; rebuild is what restores it, not fsck. */
static void check_missing(struct fsck *f)
{
	for (size_t i = 0; i < f->nwants; i++) {
		const struct want *w = &f->wants[i];

		if (w->intent || w->seen || fsck_osd_down(f, w->osd))
			continue;
		fsck_problem(f, FSCK_MISSING_OBJECT, false,
			     "file %llu: object %llu (component "
			     "%u) missing on osd %u: %s",
			     (unsigned long long)w->ino, (unsigned long long)w->object,
			     w->component, w->osd,
			     w->raid == PANDO_RAID0 ? "its data is lost"
						    : "a copy is lost (rebuild restores it)");
	}
}

int fsck_list_osds(struct fsck *f)
{
	uint64_t *ids = malloc(OSD_CTL_CLIENT_MAX_BATCH * sizeof(*ids));

	fsck_phase(f, "objects");
	f->down = calloc(f->cluster_map->nosds ? f->cluster_map->nosds : 1, sizeof(*f->down));
	if (!ids || !f->down) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->cluster_map->nosds; i++)
		list_osd(f, i, ids);
	free(ids);
	check_missing(f);
	return 0;
}
