/* The open-object cache: one obj_ref per object in use, shared by every
 * request on it, and a bounded LRU of idle ones, so that a busy object is
 * not opened and its record not read on every request. */
#include "objstore_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"

#define IDLE_FDS_MAX 4096

/* Keeps idle descriptors to a quarter of what the process may open: an
 * idle ref holds two (data and checksums), so an eighth of the refs. */
static size_t idle_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return IDLE_FDS_MAX;
	return rl.rlim_cur / 8 < IDLE_FDS_MAX ? rl.rlim_cur / 8 : IDLE_FDS_MAX;
}

void cache_init(struct objstore *s)
{
	s->idle.next = s->idle.prev = &s->idle;
	s->idle_max = idle_limit();
}

/* ---- hash table and LRU ---------------------------------------------- */

static struct obj_ref **bucket(struct objstore *s, const struct obj_id *id)
{
	return &s->buckets[(id_hash(id->partition, id->object) >> 8) & (CACHE_BUCKETS - 1)];
}

static struct obj_ref *cache_find(struct objstore *s, const struct obj_id *id)
{
	struct obj_ref *r;

	for (r = *bucket(s, id); r; r = r->hnext)
		if (r->id.partition == id->partition && r->id.object == id->object)
			return r;
	return NULL;
}

static void cache_unhash(struct objstore *s, struct obj_ref *ref)
{
	struct obj_ref **pp = bucket(s, &ref->id);

	while (*pp != ref)
		pp = &(*pp)->hnext;
	*pp = ref->hnext;
}

static void lru_del(struct objstore *s, struct obj_ref *ref)
{
	ref->lru.prev->next = ref->lru.next;
	ref->lru.next->prev = ref->lru.prev;
	s->nidle--;
}

static void lru_push(struct objstore *s, struct obj_ref *ref)
{
	ref->lru.next = s->idle.next;
	ref->lru.prev = &s->idle;
	s->idle.next->prev = &ref->lru;
	s->idle.next = &ref->lru;
	s->nidle++;
}

static void ref_free_list(struct obj_ref *list)
{
	while (list) {
		struct obj_ref *next = list->hnext;

		close(list->fd);
		if (list->cfd >= 0)
			close(list->cfd);
		pthread_mutex_destroy(&list->csum_lock);
		pthread_rwlock_destroy(&list->cap_lock);
		free(list);
		list = next;
	}
}

/* Drops idle refs, least recently used first, until at most keep remain;
 * returns them for closing outside the lock. */
static struct obj_ref *cache_trim(struct objstore *s, size_t keep)
{
	struct obj_ref *victims = NULL;

	while (s->nidle > keep) {
		struct obj_ref *ref = (struct obj_ref *)s->idle.prev;

		lru_del(s, ref);
		cache_unhash(s, ref);
		ref->hnext = victims;
		victims = ref;
	}
	return victims;
}

/* ---- records that change under the cache ----------------------------- */

/* Detaches a ref whose object is gone: holders get -ENOENT from now on, and
 * the last put closes it.  Returns it when it was idle, for freeing. */
static struct obj_ref *cache_detach(struct objstore *s, struct obj_ref *ref)
{
	atomic_store(&ref->removed, true);
	cache_unhash(s, ref);
	if (ref->refs)
		return NULL;
	lru_del(s, ref);
	ref->hnext = NULL;
	return ref;
}

/* Once it returns, no write that saw the object alive is still changing
 * its data or checksums: a ref in use is held over a pass through its
 * csum_lock, which such a write holds to the end. */
void cache_forget(struct objstore *s, const struct obj_id *id)
{
	struct obj_ref *ref, *dead = NULL, *busy = NULL;

	pthread_mutex_lock(&s->cache_lock);
	s->cache_gen++;
	ref = cache_find(s, id);
	if (ref && ref->refs) {
		ref->refs++;
		busy = ref;
	}
	if (ref)
		dead = cache_detach(s, ref);
	pthread_mutex_unlock(&s->cache_lock);
	ref_free_list(dead);
	if (busy) {
		pthread_mutex_lock(&busy->csum_lock);
		pthread_mutex_unlock(&busy->csum_lock);
		objstore_put(s, busy);
	}
}

void cache_forget_all(struct objstore *s)
{
	struct obj_ref *dead = NULL;

	pthread_mutex_lock(&s->cache_lock);
	s->cache_gen++;
	for (size_t b = 0; b < CACHE_BUCKETS; b++) {
		while (s->buckets[b]) {
			struct obj_ref *ref = cache_detach(s, s->buckets[b]);

			if (ref) {
				ref->hnext = dead;
				dead = ref;
			}
		}
	}
	pthread_mutex_unlock(&s->cache_lock);
	ref_free_list(dead);
}

void cache_set_caps(struct objstore *s, const struct obj_id *id, uint32_t floor, uint32_t cur)
{
	struct obj_ref *ref;

	pthread_mutex_lock(&s->cache_lock);
	s->cache_gen++;
	ref = cache_find(s, id);
	if (ref)
		atomic_store(&ref->cap_versions, cap_versions_pack(floor, cur));
	pthread_mutex_unlock(&s->cache_lock);
}

/* ---- loading --------------------------------------------------------- */

/* Requests keep coming: a fence must not wait behind them for ever. */
static void cap_lock_init(pthread_rwlock_t *lock)
{
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(lock, &attr);
	pthread_rwlockattr_destroy(&attr);
}

static int data_open(struct objstore *s, const struct obj_id *id)
{
	char path[OBJ_PATH_LEN];
	struct obj_ref *victims;
	int fd;

	obj_path(path, id);
	fd = openat(s->objfd, path, O_RDWR | O_CLOEXEC);
	/* Out of descriptors: give back every idle one and try once more. */
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		pthread_mutex_lock(&s->cache_lock);
		victims = cache_trim(s, 0);
		pthread_mutex_unlock(&s->cache_lock);
		ref_free_list(victims);
		fd = openat(s->objfd, path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		log_error("objstore: open %s: %s", path, strerror(errno));
		return errno == EMFILE || errno == ENFILE ? -EMFILE : -EIO;
	}
	return fd;
}

static int ref_load(struct objstore *s, const struct obj_id *id, struct obj_ref **out)
{
	struct obj_ref *ref;
	struct obj_rec r;
	int rc = rec_load(s, id, &r);

	if (rc)
		return rc;
	ref = calloc(1, sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	ref->fd = data_open(s, id);
	if (ref->fd < 0) {
		rc = ref->fd;
		free(ref);
		return rc;
	}
	ref->s = s;
	ref->id = *id;
	ref->cfd = -1;
	ref->refs = 1;
	pthread_mutex_init(&ref->csum_lock, NULL);
	cap_lock_init(&ref->cap_lock);
	atomic_init(&ref->removed, false);
	atomic_init(&ref->cap_versions, cap_versions_pack(r.read_floor, r.cap_version));
	*out = ref;
	return 0;
}

/* Takes a ref on a cached object; called with cache_lock held. */
static struct obj_ref *cache_hold(struct objstore *s, const struct obj_id *id)
{
	struct obj_ref *ref = cache_find(s, id);

	if (ref && ref->refs++ == 0)
		lru_del(s, ref);
	return ref;
}

/* Inserts a freshly loaded ref unless the cache changed while it loaded:
 * the record it was loaded from may be stale, or another loader won. */
static bool cache_insert(struct objstore *s, struct obj_ref *ref, uint64_t gen)
{
	bool fresh;

	pthread_mutex_lock(&s->cache_lock);
	fresh = gen == s->cache_gen && !cache_find(s, &ref->id);
	if (fresh) {
		struct obj_ref **b = bucket(s, &ref->id);

		ref->hnext = *b;
		*b = ref;
	}
	pthread_mutex_unlock(&s->cache_lock);
	return fresh;
}

/* ---- get / put ------------------------------------------------------- */

int objstore_get(struct objstore *s, const struct obj_id *id, struct obj_ref **out)
{
	if (!id->partition || !id->object)
		return -EINVAL;
	for (;;) {
		struct obj_ref *ref;
		uint64_t gen;
		int rc;

		pthread_mutex_lock(&s->cache_lock);
		ref = cache_hold(s, id);
		gen = s->cache_gen;
		pthread_mutex_unlock(&s->cache_lock);
		if (ref) {
			*out = ref;
			return 0;
		}
		rc = ref_load(s, id, &ref);
		if (rc)
			return rc;
		if (cache_insert(s, ref, gen)) {
			*out = ref;
			return 0;
		}
		ref->hnext = NULL;
		ref_free_list(ref);
	}
}

void objstore_put(struct objstore *s, struct obj_ref *ref)
{
	struct obj_ref *dead = NULL;

	pthread_mutex_lock(&s->cache_lock);
	if (--ref->refs == 0) {
		if (atomic_load(&ref->removed)) {
			ref->hnext = NULL;
			dead = ref;
		} else {
			lru_push(s, ref);
			dead = cache_trim(s, s->idle_max);
		}
	}
	pthread_mutex_unlock(&s->cache_lock);
	ref_free_list(dead);
}
