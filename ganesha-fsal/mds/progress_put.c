/* Progress keys in etcd (rebuild/progress/<mds>, scrub/progress/<mds>):
 * put when they say something new, and at least every PROGRESS_REFRESH_S
 * so readers see the writer is alive, not every tick: every put is a
 * durable raft write that every etcd member syncs to disk. */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_client.h"
#include "progress_put.h"

#define PROGRESS_REFRESH_S 10

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int pando_progress_put(struct etcd_client *c, int64_t lease, struct pando_progress_key *k,
		       json_t *o)
{
	char *same = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	time_t now = time(NULL);
	char *text = NULL;
	int rc = 0;

	if (!same) {
		json_decref(o);
		return -ENOMEM;
	}
	if (k->last && !strcmp(k->last, same) && now - k->at < PROGRESS_REFRESH_S) {
		free(same);
		json_decref(o);
		return 0;
	}
	json_object_set_new(o, "updated", json_real(wall()));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	rc = text ? etcd_put(c, k->key, text, strlen(text), lease) : -ENOMEM;
	free(text);
	if (rc == 0) {
		free(k->last);
		k->last = same;
		k->at = now;
	} else {
		free(same);
	}
	return rc;
}

void pando_progress_key_free(struct pando_progress_key *k)
{
	free(k->last);
	k->last = NULL;
}

char *pando_progress_text(json_t *o)
{
	char *text;

	if (!o)
		return NULL;
	json_object_set_new(o, "updated", json_real(wall()));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}
