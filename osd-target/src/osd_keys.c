#include "osd_keys.h"

#include <errno.h>
#include <string.h>

int osd_keys_init(struct osd_keys *k, const struct cluster_key *file, uint32_t osd_id)
{
	pthread_rwlockattr_t attr;
	int rc;

	if (ctl_auth_keyring_init(&k->ctl, file, osd_id))
		return -EIO;
	k->file = *file;
	pthread_rwlockattr_init(&attr);
	/* Calls never stop coming: a reload must not wait behind them for ever. */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	rc = pthread_rwlock_init(&k->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return -rc;
}

int osd_keys_replace(struct osd_keys *k, const struct cluster_key *file, uint32_t osd_id)
{
	struct ctl_auth_keyring ctl;

	if (ctl_auth_keyring_init(&ctl, file, osd_id))
		return -EIO;
	pthread_rwlock_wrlock(&k->lock);
	k->file = *file;
	k->ctl = ctl;
	pthread_rwlock_unlock(&k->lock);
	explicit_bzero(&ctl, sizeof(ctl));
	return 0;
}

void osd_keys_destroy(struct osd_keys *k)
{
	pthread_rwlock_destroy(&k->lock);
	explicit_bzero(&k->file, sizeof(k->file));
	explicit_bzero(&k->ctl, sizeof(k->ctl));
}
