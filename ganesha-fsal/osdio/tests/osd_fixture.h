/* Real pando-osd processes for the cluster library's tests: the build's
 * own binary, started on loopback ports the kernel picks, with a cluster
 * key of their own, in a temporary directory removed when every check
 * passed (kept, and named on stderr, when one failed). */
#ifndef PANDO_OSD_FIXTURE_H
#define PANDO_OSD_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "cluster_map.h"
#include "objio.h"
#include "osd_conns.h"
#include "pando/storage_map.h"

#define OSD_FIXTURE_MAX 16

struct osd_fixture {
	char root[64];
	char bindir[4096];
	struct cluster_key key;
	struct cluster_map_osd osds[OSD_FIXTURE_MAX];
	pid_t pids[OSD_FIXTURE_MAX];
	int n;
	uint64_t partition;
	struct cluster_map map; /* what osd_fixture_pool made its pool from */
};

/* Starts n OSDs (ids 1..n); 0 or -1. */
int osd_fixture_start(struct osd_fixture *f, int n, uint64_t partition);
/* Stops OSD index i (id i + 1) with SIGTERM: its exit status, 0 when clean. */
int osd_fixture_stop(struct osd_fixture *f, int i);
/* Starts OSD index i again on its data directory and control port. */
int osd_fixture_restart(struct osd_fixture *f, int i);
/* Stops every OSD still running and removes the directory unless keep. */
int osd_fixture_finish(struct osd_fixture *f, int keep);
/* Writes key as the OSDs' key file and sends each running one SIGHUP,
 * which makes it read the file again (its log says when); 0 or -1.
 * f->key, what osd_fixture_pool signs with, stays as it was. */
int osd_fixture_set_key(struct osd_fixture *f, const struct cluster_key *key);
/* The cluster map of the fixture's OSDs (epoch 1, all up and in), over
 * f->osds. */
struct cluster_map osd_fixture_cluster_map(struct osd_fixture *f);
/* A connection pool over the fixture's OSDs, short timeouts and back-off. */
int osd_fixture_pool(struct osd_fixture *f, struct osd_conns **out);
/* What an I/O test starts from: n OSDs started and io pointed at a
 * connection pool over them (its owner and fault callback stay as the
 * caller set them).  0 or -1; either way osd_fixture_finish_io ends it. */
int osd_fixture_start_io(struct osd_fixture *f, int n, uint64_t partition, struct objio *io);
/* Frees io's connection pool, then osd_fixture_finish. */
int osd_fixture_finish_io(struct osd_fixture *f, struct objio *io, int keep);
/* A map of shape with `groups` groups over OSDs 1..osds: component c of
 * group g on OSD 1 + (c + 3g) mod osds, object first_object + g * width + c. */
struct pando_storage_map *osd_fixture_map(const struct osd_fixture *f,
					  const struct pando_map_shape *shape, uint32_t groups,
					  uint32_t osds, uint64_t first_object);
/* The RS(k,m) osd_fixture_map, objects from 100. */
struct pando_storage_map *osd_fixture_rs_map(const struct osd_fixture *f, uint8_t k, uint8_t m,
					     uint32_t stripe_unit, uint32_t visit_rows,
					     uint32_t groups, uint32_t osds);
/* Waits until the pool's calls reach OSD id again (it backs off from an
 * OSD that failed): 0, or -1 after about five seconds. */
int osd_fixture_back_in_pool(struct osd_conns *conns, uint32_t id);
/* n pseudo-random bytes from seed. */
void osd_fixture_fill(uint8_t *p, size_t n, unsigned seed);
/* Flips one byte of an object's data file behind its OSD's back. */
int osd_fixture_corrupt(struct osd_fixture *f, uint32_t osd, uint64_t object, uint64_t off);

#endif
