/* The set of OSDs (cluster_map.h): lookup and the merge of two maps. */
#include "cluster_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct cluster_map_osd *cluster_map_osd(const struct cluster_map *m, uint32_t id)
{
	size_t lo = 0, hi = m->nosds;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->osds[mid].id == id)
			return &m->osds[mid];
		if (m->osds[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool cluster_map_osd_takes(const struct cluster_map_osd *o)
{
	return o->up && o->in && o->weight > 0 && !o->removed;
}

bool cluster_map_pool_name_ok(const char *s)
{
	size_t n = strnlen(s, CLUSTER_MAP_POOL_MAX);

	/* "default" names the export's own protection (the map's pools, `pando
	 * df`'s first rows), never a set of OSDs. */
	if (n == 0 || n == CLUSTER_MAP_POOL_MAX || s[0] == '-' || s[0] == '_' ||
	    !strcmp(s, "default"))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= '0' && s[i] <= '9') && s[i] != '-' &&
		    s[i] != '_')
			return false;
	return true;
}

bool cluster_map_osd_in_pool(const struct cluster_map_osd *o, const char *pool)
{
	return !pool || !pool[0] || !strncmp(o->pool, pool, CLUSTER_MAP_POOL_MAX);
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = ((const struct cluster_map_osd *)a)->id;
	uint32_t y = ((const struct cluster_map_osd *)b)->id;

	return x < y ? -1 : x > y;
}

int cluster_map_sort(struct cluster_map *m, uint32_t *dup)
{
	qsort(m->osds, m->nosds, sizeof(*m->osds), cmp_id);
	for (size_t i = 1; i < m->nosds; i++)
		if (m->osds[i].id == m->osds[i - 1].id) {
			*dup = m->osds[i].id;
			return -EINVAL;
		}
	return 0;
}

static struct cluster_map_osd removed(const struct cluster_map_osd *o)
{
	struct cluster_map_osd r = *o;

	r.up = r.in = false;
	r.weight = 0;
	r.removed = true;
	return r;
}

/* Both lists are sorted by id, so one pass makes the sorted union. */
int cluster_map_merge(const struct cluster_map *older, const struct cluster_map *newer,
		      struct cluster_map *out)
{
	size_t cap = older->nosds + newer->nosds, i = 0, j = 0, n = 0;
	struct cluster_map_osd *osds = calloc(cap ? cap : 1, sizeof(*osds));

	if (!osds)
		return -ENOMEM;
	while (i < older->nosds || j < newer->nosds) {
		uint32_t a = i < older->nosds ? older->osds[i].id : UINT32_MAX;
		uint32_t b = j < newer->nosds ? newer->osds[j].id : UINT32_MAX;

		if (j < newer->nosds && b <= a) {
			osds[n++] = newer->osds[j++];
			i += a == b;
		} else {
			osds[n++] = removed(&older->osds[i++]);
		}
	}
	if (n > CLUSTER_MAP_MAX_OSDS) {
		free(osds);
		return -E2BIG;
	}
	*out = (struct cluster_map){
		.epoch = newer->epoch, .partition = newer->partition, .nosds = n, .osds = osds
	};
	return 0;
}

void cluster_map_free(struct cluster_map *m)
{
	free(m->osds);
	m->osds = NULL;
	m->nosds = 0;
}
