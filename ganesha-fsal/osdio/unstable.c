/* Files with UNSTABLE gateway writes not yet committed (unstable.h): a
 * chained hash by inode under one mutex.  It holds only the files written
 * unstable since their last COMMIT, and each call is a short walk: the
 * OSD round trip of the write it follows costs far more. */
#include "unstable.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define UNSTABLE_BUCKETS 256
/* A reserved entry whose write has not come back yet. */
#define EPOCH_NONE UINT64_MAX

struct unstable_file {
	struct unstable_file *next;
	uint64_t ino;
	uint64_t epoch;
};

struct unstable_files {
	pthread_mutex_t lock;
	size_t count, max;
	struct unstable_file *buckets[UNSTABLE_BUCKETS];
};

/* Where ino's entry is, or would be linked. */
static struct unstable_file **slot(struct unstable_files *u, uint64_t ino)
{
	struct unstable_file **p = &u->buckets[ino % UNSTABLE_BUCKETS];

	while (*p && (*p)->ino != ino)
		p = &(*p)->next;
	return p;
}

struct unstable_files *unstable_files_new(size_t max)
{
	struct unstable_files *u = calloc(1, sizeof(*u));

	if (u) {
		pthread_mutex_init(&u->lock, NULL);
		u->max = max;
	}
	return u;
}

void unstable_files_free(struct unstable_files *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < UNSTABLE_BUCKETS; i++) {
		while (u->buckets[i]) {
			struct unstable_file *f = u->buckets[i];

			u->buckets[i] = f->next;
			free(f);
		}
	}
	pthread_mutex_destroy(&u->lock);
	free(u);
}

/* Under the lock: ino's entry, made with epoch if there is none and
 * room for one; NULL with *rc set otherwise. */
static struct unstable_file *entry(struct unstable_files *u, uint64_t ino, uint64_t epoch, int *rc)
{
	struct unstable_file **p = slot(u, ino);

	if (*p)
		return *p;
	if (u->count >= u->max) {
		*rc = -ENOSPC;
		return NULL;
	}
	*p = malloc(sizeof(**p));
	if (!*p) {
		*rc = -ENOMEM;
		return NULL;
	}
	**p = (struct unstable_file){ .ino = ino, .epoch = epoch };
	u->count++;
	return *p;
}

int unstable_files_reserve(struct unstable_files *u, uint64_t ino)
{
	int rc = 0;

	pthread_mutex_lock(&u->lock);
	entry(u, ino, EPOCH_NONE, &rc);
	pthread_mutex_unlock(&u->lock);
	return rc;
}

int unstable_files_note(struct unstable_files *u, uint64_t ino, uint64_t epoch)
{
	struct unstable_file *f;
	int rc = 0;

	pthread_mutex_lock(&u->lock);
	f = entry(u, ino, epoch, &rc);
	if (f && f->epoch == EPOCH_NONE)
		f->epoch = epoch;
	pthread_mutex_unlock(&u->lock);
	return rc;
}

bool unstable_files_lost(struct unstable_files *u, uint64_t ino, uint64_t now)
{
	struct unstable_file **p, *f;
	bool lost;

	pthread_mutex_lock(&u->lock);
	p = slot(u, ino);
	f = *p;
	if (f) {
		*p = f->next;
		u->count--;
	}
	pthread_mutex_unlock(&u->lock);
	lost = f && f->epoch != EPOCH_NONE && f->epoch != now;
	free(f);
	return lost;
}
