/* The cluster key of the engine, and its reload (mds.h). */
#include "mds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pando_key_get(struct pando_mds *mds, struct cluster_key *out)
{
	pthread_mutex_lock(&mds->key_lock);
	*out = mds->conf.key;
	pthread_mutex_unlock(&mds->key_lock);
}

/* Why the manager cannot take key k in place of cur, or NULL.  A key id
 * names one secret for good: capabilities and control keys of either
 * would otherwise verify under the other's name. */
static const char *key_refusal(const struct cluster_key *cur, const struct cluster_key *k)
{
	if (k->id == cur->id && memcmp(k->secret, cur->secret, sizeof(k->secret)))
		return "gives the key in use another secret (a new key needs a new id)";
	return NULL;
}

int pando_key_reload(struct pando_mds *mds, char *msg, size_t cap)
{
	const char *path = mds->conf.key_path, *why = NULL;
	struct cluster_key k, cur;
	int rc = cluster_key_load(path, &k, &why);

	pando_key_get(mds, &cur);
	if (!rc && (why = key_refusal(&cur, &k)))
		rc = -EINVAL;
	if (rc) {
		snprintf(msg, cap, "key file %s: %s; keeping cluster key %u", path,
			 why ? why : strerror(-rc), cur.id);
		mds_log(MDS_LOG_WARN, __func__, "pando: %s", msg);
	} else {
		pthread_mutex_lock(&mds->key_lock);
		mds->conf.key = k;
		pthread_mutex_unlock(&mds->key_lock);
		if (k.id != cur.id)
			rc = osd_conns_rekey(mds->conns, &k);
		if (k.previous_id)
			snprintf(msg, cap, "cluster key %u (previous %u) in use", k.id,
				 k.previous_id);
		else
			snprintf(msg, cap, "cluster key %u in use", k.id);
		if (rc)
			snprintf(msg + strlen(msg), cap - strlen(msg),
				 "; some OSD connections keep key %u: %s", cur.id, strerror(-rc));
		mds_log(MDS_LOG_EVENT, __func__, "pando: reload: %s", msg);
	}
	explicit_bzero(&k, sizeof(k));
	explicit_bzero(&cur, sizeof(cur));
	return rc;
}
