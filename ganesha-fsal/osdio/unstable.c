/* Files with UNSTABLE gateway writes not yet committed (unstable.h): a
 * chained hash by inode under one mutex.  It holds only the files written
 * unstable since their last COMMIT, and each call is a short walk: the
 * OSD round trip of the write it follows costs far more. */
#include "unstable.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define UNSTABLE_BUCKETS 256

struct unstable_file {
	struct unstable_file *next;
	uint64_t ino;
	uint64_t epoch;
};

struct unstable_files {
	pthread_mutex_t lock;
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

struct unstable_files *unstable_files_new(void)
{
	struct unstable_files *u = calloc(1, sizeof(*u));

	if (u)
		pthread_mutex_init(&u->lock, NULL);
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

int unstable_files_note(struct unstable_files *u, uint64_t ino, uint64_t epoch)
{
	struct unstable_file **p;
	int rc = 0;

	pthread_mutex_lock(&u->lock);
	p = slot(u, ino);
	if (!*p) {
		*p = malloc(sizeof(**p));
		if (*p)
			**p = (struct unstable_file){ .ino = ino, .epoch = epoch };
		else
			rc = -ENOMEM;
	}
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
	if (f)
		*p = f->next;
	pthread_mutex_unlock(&u->lock);
	lost = f && f->epoch != now;
	free(f);
	return lost;
}
