/* The keys a running target accepts: its cluster key file's, for
 * capabilities, and the control keys derived from them for this target.
 * SIGHUP replaces them while calls are served (README.md, "Cluster key
 * file"); a reader holds the lock across one verification only. */
#ifndef PANDO_OSD_KEYS_H
#define PANDO_OSD_KEYS_H

#include <pthread.h>
#include <stdint.h>

#include "ctl_auth.h"
#include "pando/cluster_key.h"

struct osd_keys {
	pthread_rwlock_t lock;
	struct cluster_key file;
	struct ctl_auth_keyring ctl;
};

/* 0, -EIO (no HMAC), or -errno from the lock's set-up. */
int osd_keys_init(struct osd_keys *k, const struct cluster_key *file, uint32_t osd_id);
/* Derives the new control keys first, so that a failure leaves the old
 * ones in use; then swaps under the write lock.  0 or -EIO. */
int osd_keys_replace(struct osd_keys *k, const struct cluster_key *file, uint32_t osd_id);
void osd_keys_destroy(struct osd_keys *k);

static inline void osd_keys_read(struct osd_keys *k)
{
	pthread_rwlock_rdlock(&k->lock);
}

static inline void osd_keys_done(struct osd_keys *k)
{
	pthread_rwlock_unlock(&k->lock);
}

#endif
