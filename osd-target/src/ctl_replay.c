#include "ctl_replay.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* Seconds of credential time the ring tells apart: more than the
 * 2 * window + 1 that can be live at once, so live seconds never share
 * a bucket. */
#define RING 1024u
#define BUCKET_MIN 16u

struct replay_entry {
	uint64_t nonce;
	uint32_t key_id; /* 0: an empty slot */
};

struct replay_bucket {
	uint64_t time_s; /* the second held; meaningful while n > 0 */
	uint32_t n;
	uint32_t cap; /* slots: 0 or a power of two, at most half full */
	struct replay_entry *slots;
};

struct ctl_replay {
	pthread_mutex_t lock;
	size_t max;
	size_t n;
	unsigned window;
	uint64_t low;   /* seconds below this hold nothing */
	uint64_t floor; /* credentials older than this are refused */
	struct replay_bucket ring[RING];
};

struct ctl_replay *ctl_replay_new(size_t max_entries, unsigned window_s)
{
	struct ctl_replay *r;

	if (2 * (size_t)window_s + 2 > RING || max_entries == 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (pthread_mutex_init(&r->lock, NULL)) {
		free(r);
		return NULL;
	}
	r->max = max_entries;
	r->window = window_s;
	return r;
}

static void bucket_drop(struct ctl_replay *r, struct replay_bucket *b)
{
	r->n -= b->n;
	free(b->slots);
	*b = (struct replay_bucket){ 0 };
}

void ctl_replay_free(struct ctl_replay *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < RING; i++)
		free(r->ring[i].slots);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* splitmix64's finaliser: clients count their nonces up from a random
 * start, and consecutive ones must spread over the slots. */
static uint64_t slot_hash(uint32_t key_id, uint64_t nonce)
{
	uint64_t h = nonce ^ ((uint64_t)key_id << 48);

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* The slot holding (key_id, nonce), or the empty one where it would go. */
static struct replay_entry *bucket_slot(const struct replay_bucket *b, uint32_t key_id,
					uint64_t nonce)
{
	uint32_t mask = b->cap - 1;
	uint32_t i = (uint32_t)slot_hash(key_id, nonce) & mask;

	for (;; i = (i + 1) & mask) {
		struct replay_entry *e = &b->slots[i];

		if (!e->key_id || (e->key_id == key_id && e->nonce == nonce))
			return e;
	}
}

static int bucket_grow(struct replay_bucket *b)
{
	struct replay_bucket bigger = { .time_s = b->time_s, .n = b->n };

	bigger.cap = b->cap ? 2 * b->cap : BUCKET_MIN;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (uint32_t i = 0; i < b->cap; i++)
		if (b->slots[i].key_id)
			*bucket_slot(&bigger, b->slots[i].key_id, b->slots[i].nonce) = b->slots[i];
	free(b->slots);
	*b = bigger;
	return 0;
}

/* Drops the seconds that fell out of the window: their credentials fail
 * the time check now. */
static void expire(struct ctl_replay *r, uint64_t now_s)
{
	uint64_t limit = now_s > r->window ? now_s - r->window : 0;

	if (limit <= r->low)
		return;
	if (limit - r->low >= RING) {
		for (unsigned i = 0; i < RING; i++)
			bucket_drop(r, &r->ring[i]);
	} else {
		for (uint64_t t = r->low; t < limit; t++) {
			struct replay_bucket *b = &r->ring[t % RING];

			if (b->n && b->time_s == t)
				bucket_drop(r, b);
		}
	}
	r->low = limit;
}

/* Full: the oldest second goes, and with it the right to be that old.
 * false when there was nothing to drop. */
static bool evict_oldest(struct ctl_replay *r)
{
	struct replay_bucket *oldest = NULL;

	for (unsigned i = 0; i < RING; i++) {
		struct replay_bucket *b = &r->ring[i];

		if (b->n && (!oldest || b->time_s < oldest->time_s))
			oldest = b;
	}
	if (!oldest)
		return false;
	r->floor = oldest->time_s + 1;
	bucket_drop(r, oldest);
	return true;
}

static enum ctl_replay_verdict remember(struct ctl_replay *r, uint32_t key_id, uint64_t time_s,
					uint64_t nonce)
{
	struct replay_bucket *b = &r->ring[time_s % RING];
	struct replay_entry *e;

	/* Another second in this bucket can only be one the clock left
	 * behind when it stepped back over the window: dead either way. */
	if (b->n && b->time_s != time_s)
		bucket_drop(r, b);
	if (b->n && bucket_slot(b, key_id, nonce)->key_id)
		return CTL_REPLAY_SEEN;
	while (r->n >= r->max && time_s >= r->floor && evict_oldest(r))
		;
	if (time_s < r->floor)
		return CTL_REPLAY_STALE;
	if (2 * (b->n + 1) > b->cap && bucket_grow(b))
		return CTL_REPLAY_NOMEM;
	b->time_s = time_s;
	e = bucket_slot(b, key_id, nonce);
	e->key_id = key_id;
	e->nonce = nonce;
	b->n++;
	r->n++;
	return CTL_REPLAY_FRESH;
}

enum ctl_replay_verdict ctl_replay_check(struct ctl_replay *r, uint32_t key_id, uint64_t time_s,
					 uint64_t nonce, uint64_t now_s)
{
	enum ctl_replay_verdict v;

	pthread_mutex_lock(&r->lock);
	expire(r, now_s);
	v = time_s < r->floor ? CTL_REPLAY_STALE : remember(r, key_id, time_s, nonce);
	pthread_mutex_unlock(&r->lock);
	return v;
}

size_t ctl_replay_count(struct ctl_replay *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->n;
	pthread_mutex_unlock(&r->lock);
	return n;
}
