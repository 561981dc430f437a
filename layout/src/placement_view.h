/* The prepared placement view shared by placement and replacement. */
#ifndef PANDO_LAYOUT_PLACEMENT_VIEW_H
#define PANDO_LAYOUT_PLACEMENT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "pando/placement.h"

struct view_osd {
	uint32_t id;
	uint32_t domain; /* index into the view's domains */
	uint32_t bias_ppm;
	uint64_t weight; /* capacity x bias, scaled below 2^40; 0: takes nothing */
};

struct pando_placement_view {
	size_t count;
	struct view_osd *osds; /* sorted by id */
	size_t domains;
	uint32_t *domain_first; /* domains + 1 entries into members */
	uint32_t *members;      /* OSD indices, domain by domain, by id within */
	size_t eligible;        /* OSDs with weight */
	uint32_t spares;
};

/* Index of an OSD id in view->osds, or -1. */
long view_find(const struct pando_placement_view *view, uint32_t osd_id);

#endif
