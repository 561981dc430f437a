/* A bounded set of 64-bit ids (the metadata manager's NFSv4 client ids
 * that fetched FATTR4_MDSTHRESHOLD): it holds the newest PANDO_IDSET_CAP
 * ids added and forgets the oldest to make room, so a peer that makes up
 * ids costs a fixed amount of memory.  Thread-safe; no allocation.  A
 * static one is initialised with { .lock = PTHREAD_MUTEX_INITIALIZER }. */
#ifndef PANDO_IDSET_H
#define PANDO_IDSET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

enum { PANDO_IDSET_CAP = 1024 };

struct pando_idset {
	pthread_mutex_t lock;
	uint64_t ids[PANDO_IDSET_CAP];
	uint32_t count; /* ids held, up to PANDO_IDSET_CAP */
	uint32_t next;  /* where the next id goes, over the oldest */
};

void pando_idset_add(struct pando_idset *s, uint64_t id);
bool pando_idset_has(struct pando_idset *s, uint64_t id);

#endif
