/* The cluster map's JSON as etcd holds it (ganesha-fsal/osdio/
 * cluster_map_json.c), what every metadata manager parses on each epoch,
 * and what is derived from a parsed map: its merge over itself and over
 * nothing, and the placement view. */
#include <string.h>

#include "cluster_map_json.h"
#include "fuzz.h"
#include "pando/placement.h"

static void check_osd(const struct cluster_map_osd *o)
{
	fuzz_check(o->id != 0, "an OSD with id 0");
	fuzz_check(memchr(o->ctl, 0, sizeof(o->ctl)) && o->ctl[0], "a ctl address unset");
	fuzz_check(memchr(o->nfs, 0, sizeof(o->nfs)) && o->nfs[0], "an nfs address unset");
	fuzz_check(memchr(o->advertise, 0, sizeof(o->advertise)) && o->advertise[0],
		   "an advertised address unset");
	fuzz_check(memchr(o->domain, 0, sizeof(o->domain)) != NULL, "a domain without its NUL");
	fuzz_check(!o->removed, "a parsed OSD marked removed");
}

static void check_derived(const struct cluster_map *m)
{
	struct pando_placement_policy pol = { .spares = 1 };
	struct pando_placement_view *view = NULL;
	struct cluster_map none = { 0 }, same, fresh;

	fuzz_check(cluster_map_merge(m, m, &same) == 0, "a map does not merge over itself");
	fuzz_check(same.nosds == m->nosds &&
			   !memcmp(same.osds, m->osds, m->nosds * sizeof(*m->osds)),
		   "a map merged over itself changed");
	fuzz_check(cluster_map_merge(&none, m, &fresh) == 0 && fresh.nosds == m->nosds,
		   "a map does not merge over nothing");
	fuzz_check(pando_placement_view_new(m, NULL, &pol, &view) == 0,
		   "a parsed map gives no placement view");
	pando_placement_view_free(view);
	cluster_map_free(&same);
	cluster_map_free(&fresh);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cluster_map m = { 0 };
	char why[256];

	if (cluster_map_parse((const char *)data, size, &m, why, sizeof(why)) != 0) {
		fuzz_check(m.osds == NULL, "a refused map left OSDs behind");
		fuzz_check(memchr(why, 0, sizeof(why)) && why[0], "a refused map without a reason");
		return 0;
	}
	fuzz_check(m.epoch >= 1 && m.partition >= 1, "an epoch or partition of 0");
	fuzz_check(m.nosds <= CLUSTER_MAP_MAX_OSDS, "more OSDs than the bound");
	for (size_t i = 0; i < m.nosds; i++) {
		check_osd(&m.osds[i]);
		fuzz_check(i == 0 || m.osds[i - 1].id < m.osds[i].id, "OSDs not sorted by id");
	}
	check_derived(&m);
	cluster_map_free(&m);
	return 0;
}
