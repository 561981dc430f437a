/* Progress keys in etcd, put when they change (progress_put.c). */
#ifndef PANDO_PROGRESS_PUT_H
#define PANDO_PROGRESS_PUT_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

struct etcd_client;

struct pando_progress_key {
	char key[256];
	char *last; /* what was put last, without "updated" */
	time_t at;
};

/* Puts o (consumed; "updated" is added) under lease unless it says what
 * the last put did and that was under 10 s ago. */
int pando_progress_put(struct etcd_client *c, int64_t lease, struct pando_progress_key *k,
		       json_t *o);
void pando_progress_key_free(struct pando_progress_key *k);
/* o (consumed) with "updated" (now) as compact JSON text, malloc'd; NULL
 * for no o or no memory.  What the dbus status methods answer. */
char *pando_progress_text(json_t *o);

#endif
