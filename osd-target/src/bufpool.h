/* A pool of equal, large buffers (a record or a READ payload each).
 * glibc serves allocations of a megabyte with mmap and returns them with
 * munmap, so every 1 MiB request would fault in 256 fresh pages; reusing
 * buffers tripled 1 MiB WRITE throughput (tests/bench/osd_throughput). */
#ifndef PANDO_BUFPOOL_H
#define PANDO_BUFPOOL_H

#include <pthread.h>
#include <stddef.h>

struct bufpool {
	pthread_mutex_t lock;
	size_t size;       /* every buffer's capacity */
	unsigned max_free; /* buffers kept for reuse; more are freed */
	unsigned nfree;
	void **free;
};

int bufpool_init(struct bufpool *p, size_t size, unsigned max_free);
void bufpool_destroy(struct bufpool *p);
/* A buffer of p->size bytes, or NULL when memory is short. */
void *bufpool_get(struct bufpool *p);
void bufpool_put(struct bufpool *p, void *buf);

#endif
