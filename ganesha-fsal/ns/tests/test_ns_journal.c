/* The journal a standby follows (issue 24), with a journal in memory: the
 * batches it gets (their bytes and seqs, in commit order, from 4 threads),
 * a standby that applies them from a snapshot ending equal to the active,
 * key for key, across a restart; replies that wait for the journal's sync,
 * and fail with it or with the append; malformed batches refused without
 * touching RocksDB; snapshots taken mid-stream; repairs journaled. */
#include "ns_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "byteorder.h"
#include "ns_internal.h"

#define THREADS 4
#define OPS 1500
#define POOL 16

/* ---- a journal in memory ------------------------------------------------ */

struct rec {
	uint64_t seq;
	uint8_t *data;
	size_t len;
};

struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rec *v;
	size_t n, cap;
	int append_rc, sync_rc; /* what the calls answer */
	int syncs;
	uint64_t synced; /* the highest seq a sync returned 0 for */
	bool hold;       /* sync waits while set */
	bool in_sync;
};

/* The seq of the calling thread's last batch: append runs in the thread
 * of the operation that wrote it. */
static __thread uint64_t my_seq;

static int fake_append(void *arg, uint64_t seq, const void *batch, size_t len)
{
	struct fake *f = arg;
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = f->append_rc;
	if (!rc) {
		if (f->n == f->cap) {
			f->cap = f->cap ? 2 * f->cap : 1024;
			f->v = realloc(f->v, f->cap * sizeof(*f->v));
		}
		f->v[f->n].seq = seq;
		f->v[f->n].data = malloc(len);
		memcpy(f->v[f->n].data, batch, len);
		f->v[f->n++].len = len;
		my_seq = seq;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static int fake_sync(void *arg, uint64_t seq)
{
	struct fake *f = arg;
	int rc;

	pthread_mutex_lock(&f->lock);
	f->syncs++;
	f->in_sync = true;
	pthread_cond_broadcast(&f->cond);
	while (f->hold)
		pthread_cond_wait(&f->cond, &f->lock);
	f->in_sync = false;
	rc = f->sync_rc;
	if (!rc && seq > f->synced)
		f->synced = seq;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static struct ns_journal fake_journal(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	return (struct ns_journal){ .append = fake_append, .sync = fake_sync, .arg = f };
}

static void fake_free(struct fake *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].data);
	free(f->v);
}

/* Waits (10 s at most: a broken store must fail the test, not hang it)
 * until the journal holds n batches. */
static void fake_wait_count(struct fake *f, size_t n)
{
	double give_up = now_s() + 10;
	size_t have;

	do {
		pthread_mutex_lock(&f->lock);
		have = f->n;
		pthread_mutex_unlock(&f->lock);
	} while (have < n && now_s() < give_up && usleep(1000) == 0);
	CHECK(have >= n);
}

/* The same for a sync to be under way. */
static void fake_wait_sync(struct fake *f)
{
	struct timespec give_up;

	clock_gettime(CLOCK_REALTIME, &give_up);
	give_up.tv_sec += 10;
	pthread_mutex_lock(&f->lock);
	while (!f->in_sync && pthread_cond_timedwait(&f->cond, &f->lock, &give_up) == 0)
		;
	CHECK(f->in_sync);
	pthread_mutex_unlock(&f->lock);
}

/* A batch's header: its first seq and count, little-endian. */
static uint64_t rec_first(const struct rec *r)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | r->data[i];
	return v;
}

static uint32_t rec_count(const struct rec *r)
{
	return (uint32_t)r->data[8] | (uint32_t)r->data[9] << 8 | (uint32_t)r->data[10] << 16 |
	       (uint32_t)r->data[11] << 24;
}

/* ---- stores -------------------------------------------------------------- */

/* Formatted without the journal, as the manager formats, then opened with
 * it. */
static struct ns_store *active(char *path, size_t len, struct ns_journal *j, bool nosync)
{
	struct ns_options o = { .nosync = nosync };
	struct ns_store *s = NULL;

	test_path(path, len);
	CHECK_EQ(ns_format(path, &o), 0);
	o.journal = j;
	CHECK_EQ(ns_open(path, &o, &s), 0);
	if (!s)
		exit(1);
	return s;
}

static struct ns_store *standby(const char *path, bool nosync)
{
	struct ns_options o = { .nosync = nosync };
	struct ns_store *s = NULL;

	CHECK_EQ(ns_open(path, &o, &s), 0);
	if (!s)
		exit(1);
	return s;
}

/* Applies every captured batch after seq, in order; how many. */
static int apply_after(struct fake *f, struct ns_store *b, uint64_t after)
{
	int n = 0;

	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].seq <= after)
			continue;
		CHECK_EQ(ns_apply(b, f->v[i].data, f->v[i].len), 0);
		n++;
	}
	return n;
}

/* Every key and value of a and b agree; how many keys. */
static size_t same(struct ns_store *a, struct ns_store *b)
{
	uint8_t end[1] = { 0xff };
	struct db_iter i, j;
	size_t n = 0, bad = 0;

	iter_open(a, &i, end, 0, end, 1);
	iter_open(b, &j, end, 0, end, 1);
	for (; iter_valid(&i) && iter_valid(&j); iter_next(&i), iter_next(&j), n++) {
		size_t kl, kl2, vl, vl2;
		const uint8_t *k = iter_key(&i, &kl), *k2 = iter_key(&j, &kl2);
		const uint8_t *v = iter_value(&i, &vl), *v2 = iter_value(&j, &vl2);

		if (kl == kl2 && vl == vl2 && !memcmp(k, k2, kl) && !memcmp(v, v2, vl))
			continue;
		if (bad++ < 5)
			fprintf(stderr,
				"  key %zu differs: '%c' (%zu bytes) and '%c' (%zu bytes)\n", n,
				k[0], kl, k2[0], kl2);
	}
	CHECK_EQ(bad, 0);
	CHECK(!iter_valid(&i) && !iter_valid(&j));
	CHECK_EQ(iter_close(a, &i), 0);
	CHECK_EQ(iter_close(b, &j), 0);
	return n;
}

/* A digest of every key and value (FNV-1a). */
static uint64_t digest(struct ns_store *s)
{
	uint8_t end[1] = { 0xff };
	uint64_t h = 14695981039346656037ull;
	struct db_iter i;

	iter_open(s, &i, end, 0, end, 1);
	for (; iter_valid(&i); iter_next(&i)) {
		size_t kl, vl;
		const uint8_t *k = iter_key(&i, &kl), *v = iter_value(&i, &vl);

		for (size_t x = 0; x < kl; x++)
			h = (h ^ k[x]) * 1099511628211ull;
		for (size_t x = 0; x < vl; x++)
			h = (h ^ v[x]) * 1099511628211ull;
		h = (h ^ 0xff) * 1099511628211ull;
	}
	CHECK_EQ(iter_close(s, &i), 0);
	return h;
}

/* Whether s holds a key of every type in types. */
static bool has_types(struct ns_store *s, const char *types)
{
	uint8_t end[1] = { 0xff };
	bool seen[256] = { false };
	struct db_iter i;

	iter_open(s, &i, end, 0, end, 1);
	for (; iter_valid(&i); iter_next(&i)) {
		size_t kl;

		seen[iter_key(&i, &kl)[0]] = true;
	}
	CHECK_EQ(iter_close(s, &i), 0);
	for (; *types; types++) {
		if (!seen[(uint8_t)*types])
			return false;
	}
	return true;
}

static uint64_t applied(struct ns_store *s)
{
	uint64_t seq = 0;

	CHECK_EQ(ns_applied_seq(s, &seq), 0);
	return seq;
}

/* ---- a mix of operations from several threads ----------------------------- */

static struct ns_store *mix_store;
static _Atomic uint64_t pool[POOL];
static atomic_int mix_ok;
/* While set, the mix goes on past OPS; it ends with a few more after. */
static atomic_bool mix_hold;

/* A name in d or e made, removed or moved. */
static int name_op(struct ns_store *s, unsigned *seed, uint64_t d, uint64_t e, uint64_t ino,
		   const char *n1, const char *n2)
{
	struct ns_attr a;
	int rc;

	switch (rand_r(seed) % 8) {
	case 0:
	case 1:
		return ns_create(s, d, n1, TEST_NEW, NS_GUARDED, NULL, NULL, NULL);
	case 2:
		rc = ns_mkdir(s, d, n1, TEST_NEWDIR, &a);
		if (!rc)
			atomic_store(&pool[rand_r(seed) % POOL], a.ino);
		return rc;
	case 3:
		return ns_unlink(s, d, n1);
	case 4:
		return ns_rmdir(s, d, n1);
	case 5:
		return ns_rename(s, d, n1, e, n2);
	case 6:
		return ino ? ns_link(s, ino, e, n2, NULL) : -ENOENT;
	}
	return ns_symlink(s, d, n1, "../target", TEST_NEW, NULL);
}

/* Inode ino (0: none) or directory d changed: attributes, data, intents,
 * marks, policies, maps and damage records. */
static int inode_op(struct ns_store *s, unsigned *seed, uint64_t d, uint64_t ino)
{
	struct ns_setattr sa = { .mask = NS_SET_MODE | NS_SET_MTIME_NOW, .mode = 0600 };
	uint64_t id;
	int rc;

	switch (rand_r(seed) % 6) {
	case 0:
		sa.mask |= rand_r(seed) % 2 ? NS_SET_SIZE : 0;
		sa.size = rand_r(seed) % 100;
		return ino ? ns_setattr(s, ino, &sa, NULL) : -ENOENT;
	case 1:
		return ino ? ns_write(s, ino, rand_r(seed) % 50, "journal", 7, false, NULL, NULL)
			   : -ENOENT;
	case 2:
		rc = ns_intent_add(s, d, "blob", 4, &id);
		return !rc && rand_r(seed) % 2 ? ns_intent_done(s, id) : rc;
	case 3:
		rc = ns_wlayout_add(s, d);
		if (!rc)
			rc = rand_r(seed) % 2 ? ns_wlayout_del(s, d) : ns_write_hole_add(s, d);
		return rc ? rc : ns_write_hole_del(s, d);
	case 4:
		return ns_policy_set(s, d, "policy", rand_r(seed) % 7);
	}
	rc = ino ? ns_map_set(s, ino, 0, "map", 3, NULL, 0, 0) : -ENOENT;
	return rc ? rc : ns_damage_add(s, ino, 7, -EIO, 0, rand_r(seed) % 2);
}

static void one_op(unsigned *seed)
{
	uint64_t d = atomic_load(&pool[rand_r(seed) % POOL]);
	uint64_t e = atomic_load(&pool[rand_r(seed) % POOL]);
	char n1[8], n2[8];
	uint64_t ino;
	int rc;

	snprintf(n1, sizeof(n1), "n%d", rand_r(seed) % 10);
	snprintf(n2, sizeof(n2), "n%d", rand_r(seed) % 10);
	ino = ino_of(mix_store, d, n1);
	if (rand_r(seed) % 2)
		rc = name_op(mix_store, seed, d, e, ino, n1, n2);
	else
		rc = inode_op(mix_store, seed, d, ino);
	if (!rc)
		atomic_fetch_add(&mix_ok, 1);
}

static void *mix_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < OPS || atomic_load(&mix_hold); i++)
		one_op(&seed);
	for (int i = 0; i < 100; i++)
		one_op(&seed);
	return NULL;
}

static void mix_start(struct ns_store *s, pthread_t *th, unsigned salt)
{
	mix_store = s;
	atomic_store(&mix_ok, 0);
	for (int i = 0; i < POOL; i++)
		atomic_store(&pool[i], NS_ROOT_INO);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, mix_thread, (void *)(uintptr_t)(salt * 10 + i + 1));
}

static void mix_join(pthread_t *th)
{
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* Most of the mix must have done something. */
	CHECK(atomic_load(&mix_ok) > THREADS * OPS / 3);
}

/* The captured batches are the store's, in its order, each right after the
 * one before, their headers filled in by RocksDB's write. */
static void check_order(struct fake *f)
{
	int bad = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct rec *r = &f->v[i];
		uint64_t first, last, term;

		bad += rec_first(r) + rec_count(r) - 1 != r->seq;
		bad += i > 0 && rec_first(r) != f->v[i - 1].seq + 1;
		bad += batch_check(r->data, r->len, &first, &last, &term) != 0 || last != r->seq;
	}
	CHECK_EQ(bad, 0);
}

/* ---- tests --------------------------------------------------------------- */

/* Each batch reaches the journal with its seq, RocksDB's header and the
 * applied seq set in its last record; the store's applied seq follows. */
static void test_batches(void)
{
	char path[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true);
	uint64_t before = rocksdb_get_latest_sequence_number(a->db), d, x;

	CHECK_EQ(ns_applied_seq(a, &x), -ENOENT); /* not journaled yet */
	d = mkdir_(a, NS_ROOT_INO, "d");
	mkfile(a, d, "f");
	CHECK_EQ(ns_rename(a, d, "f", NS_ROOT_INO, "g"), 0);
	CHECK_EQ(ns_intent_add(a, 1, "b", 1, &x), 0);
	CHECK_EQ(ns_intent_done(a, x), 0);
	CHECK_EQ(f.n, 5);
	if (f.n == 5) {
		CHECK_EQ(rec_first(&f.v[0]), before + 1);
		CHECK_EQ(f.v[4].seq, rocksdb_get_latest_sequence_number(a->db));
		CHECK_EQ(applied(a), f.v[4].seq);
		CHECK_EQ(rec_count(&f.v[4]), 2); /* the delete and the applied seq */
	}
	check_order(&f);
	CHECK_EQ(f.syncs, 0); /* nosync: appended, not synced */
	CHECK_EQ(ns_sync(a), 0);
	CHECK_EQ(f.syncs, 1);
	CHECK_EQ(f.synced, f.v[f.n - 1].seq);
	ns_close(a);
	fake_free(&f);
}

/* 4 threads of mixed operations on the active; a standby started from a
 * snapshot taken before them applies every batch after it and ends equal,
 * key for key, and stays so across a restart. */
static void test_replay(void)
{
	char path[128], bpath[160];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true), *b;
	struct ns_check_result r;
	pthread_t th[THREADS];
	uint64_t seq0 = 0;
	int n;

	snprintf(bpath, sizeof(bpath), "%s.standby", path);
	CHECK_EQ(ns_snapshot(a, bpath, &seq0), 0);
	mix_start(a, th, 1);
	mix_join(th);
	check_order(&f);
	check_clean(a);
	CHECK(has_types(a, "ACDFILMNPRWXY")); /* the mix left every kind of key */
	b = standby(bpath, true);
	CHECK_EQ(applied(b), seq0);
	n = apply_after(&f, b, seq0);
	CHECK(n > THREADS * OPS / 2);
	CHECK_EQ(applied(b), f.v[f.n - 1].seq);
	printf("replay: %d batches applied, %zu keys alike\n", n, same(a, b));
	check_clean(b);
	ns_close(b);

	b = standby(bpath, true);
	CHECK_EQ(applied(b), f.v[f.n - 1].seq);
	same(a, b);
	CHECK_EQ(ns_repair(b, NULL, NULL, &r), 0); /* the 'A' key is no stray */
	CHECK_EQ(r.problems, 0);
	CHECK_EQ(applied(b), f.v[f.n - 1].seq);
	ns_close(b);
	ns_close(a);
	fake_free(&f);
}

/* The quota a standby reads follows the batches it applies, though it
 * read (and cached) another before them. */
static void test_a_standby_reads_the_quota_it_applied(void)
{
	char path[128], bpath[160];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true), *b;
	struct ns_quota q = { 1, 1 };
	uint64_t seq0 = 0;

	snprintf(bpath, sizeof(bpath), "%s.standby", path);
	CHECK_EQ(ns_snapshot(a, bpath, &seq0), 0);
	b = standby(bpath, true);
	CHECK_EQ(ns_quota_get(b, &q), 0);
	CHECK(q.bytes == 0 && q.files == 0);
	CHECK_EQ(ns_quota_set(a, &(struct ns_quota){ 4096, 7 }), 0);
	CHECK_EQ(apply_after(&f, b, seq0), 1);
	CHECK_EQ(ns_quota_get(b, &q), 0);
	CHECK(q.bytes == 4096 && q.files == 7);
	seq0 = f.v[f.n - 1].seq;
	CHECK_EQ(ns_quota_set(a, &(struct ns_quota){ 0, 0 }), 0);
	CHECK_EQ(apply_after(&f, b, seq0), 1);
	CHECK_EQ(ns_quota_get(b, &q), 0);
	CHECK(q.bytes == 0 && q.files == 0);
	ns_close(b);
	ns_close(a);
	fake_free(&f);
}

/* Durable operations from 4 threads: each returns only once the journal
 * synced its batch. */
static struct fake *order_fake;
static struct ns_store *order_store;
static atomic_int order_early;

static void *order_thread(void *arg)
{
	char name[32];

	for (int i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "t%d-%d", (int)(uintptr_t)arg, i);
		CHECK_EQ(ns_create(order_store, NS_ROOT_INO, name, TEST_NEW, NS_GUARDED, NULL, NULL,
				   NULL),
			 0);
		pthread_mutex_lock(&order_fake->lock);
		if (order_fake->synced < my_seq)
			atomic_fetch_add(&order_early, 1);
		pthread_mutex_unlock(&order_fake->lock);
	}
	return NULL;
}

static void test_synced_threads(void)
{
	char path[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, false);
	pthread_t th[THREADS];

	order_fake = &f;
	order_store = a;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, order_thread, (void *)(uintptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(atomic_load(&order_early), 0);
	CHECK_EQ(f.n, THREADS * 50);
	check_order(&f);
	printf("synced: %zu creates, %d journal syncs\n", f.n, f.syncs);
	CHECK(f.syncs <= THREADS * 50);
	ns_close(a);
	fake_free(&f);
}

/* A reply waits for the journal's sync; one sync covers the operations
 * that piled up behind it. */
struct waiter {
	struct ns_store *s;
	char name[16];
	atomic_int done;
	int rc;
};

static void *waiter_run(void *arg)
{
	struct waiter *w = arg;

	w->rc = ns_create(w->s, NS_ROOT_INO, w->name, TEST_NEW, NS_GUARDED, NULL, NULL, NULL);
	atomic_store(&w->done, 1);
	return NULL;
}

static void test_sync_waits(void)
{
	char path[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, false);
	struct waiter w[4];
	pthread_t th[4];
	int syncs;

	f.hold = true;
	syncs = f.syncs;
	for (int i = 0; i < 4; i++) {
		w[i] = (struct waiter){ .s = a };
		snprintf(w[i].name, sizeof(w[i].name), "w%d", i);
		pthread_create(&th[i], NULL, waiter_run, &w[i]);
		if (i == 0) /* the first holds the sync the others queue behind */
			fake_wait_sync(&f);
	}
	fake_wait_count(&f, 4);
	usleep(100000);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(atomic_load(&w[i].done), 0);
	pthread_mutex_lock(&f.lock);
	f.hold = false;
	pthread_cond_broadcast(&f.cond);
	pthread_mutex_unlock(&f.lock);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(w[i].rc, 0);
	}
	CHECK_EQ(f.syncs - syncs, 2);
	CHECK_EQ(f.synced, f.v[3].seq);
	ns_close(a);
	fake_free(&f);
}

/* A failed append or sync fails the operation with its error, then the
 * store: nothing more is written or reaches the journal, reads go on. */
static void test_failures(bool in_sync)
{
	char path[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, false);
	struct ns_attr at;
	uint64_t seq;
	size_t n;

	mkdir_(a, NS_ROOT_INO, "before");
	if (in_sync)
		f.sync_rc = -ETIMEDOUT;
	else
		f.append_rc = -EDQUOT;
	CHECK_EQ(ns_mkdir(a, NS_ROOT_INO, "d", TEST_NEWDIR, NULL), in_sync ? -ETIMEDOUT : -EDQUOT);
	CHECK(ns_failed(a));
	f.sync_rc = f.append_rc = 0;
	n = f.n;
	CHECK_EQ(ns_mkdir(a, NS_ROOT_INO, "e", TEST_NEWDIR, NULL), -EIO);
	CHECK_EQ(ns_intent_done(a, 5), -EIO);
	CHECK_EQ(ns_sync(a), -EIO);
	CHECK_EQ(f.n, n);
	CHECK_EQ(ns_getattr(a, NS_ROOT_INO, &at), 0);
	CHECK(ino_of(a, NS_ROOT_INO, "before") != 0);
	CHECK_EQ(ns_snapshot(a, "/nonexistent/pando-snap", &seq), -EIO);
	ns_close(a);
	fake_free(&f);
}

/* A journal whose manager is no longer sure that it leads refuses with
 * -ESHUTDOWN: that change and every later one are the next active's to
 * take, and say so (the FSAL answers them with DELAY, not EIO). */
static void test_a_journal_shut_down_leaves_every_later_change_to_the_next_active(void)
{
	char path[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, false);

	mkdir_(a, NS_ROOT_INO, "before");
	f.sync_rc = -ESHUTDOWN;
	CHECK_EQ(ns_mkdir(a, NS_ROOT_INO, "d", TEST_NEWDIR, NULL), -ESHUTDOWN);
	f.sync_rc = 0;
	CHECK_EQ(ns_mkdir(a, NS_ROOT_INO, "e", TEST_NEWDIR, NULL), -ESHUTDOWN);
	CHECK_EQ(ns_intent_done(a, 5), -ESHUTDOWN);
	CHECK_EQ(ns_sync(a), -ESHUTDOWN);
	ns_close(a);
	fake_free(&f);
}

/* Without sync, the journal still gets every batch; ns_sync syncs it. */
static void test_nosync(void)
{
	char path[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true);

	f.hold = true; /* a sync would hang the test */
	mkdir_(a, NS_ROOT_INO, "d");
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.syncs, 0);
	f.hold = false;
	CHECK_EQ(ns_sync(a), 0);
	CHECK_EQ(f.syncs, 1);
	CHECK_EQ(f.synced, f.v[0].seq);
	ns_close(a);
	fake_free(&f);
}

/* A batch's bytes made by hand: header (seq, count), then records. */
struct hand {
	uint8_t b[256];
	size_t len;
	uint32_t count;
};

static void hand_str(struct hand *h, const void *s, size_t len)
{
	h->b[h->len++] = (uint8_t)len; /* short strings: a one-byte varint */
	memcpy(h->b + h->len, s, len);
	h->len += len;
}

static void hand_rec(struct hand *h, uint8_t tag, const void *k, size_t kl, const void *v,
		     size_t vl)
{
	h->b[h->len++] = tag;
	hand_str(h, k, kl);
	if (v)
		hand_str(h, v, vl);
	h->count++;
}

/* Ends with the applied seq and fills the header for a batch at first. */
/* Ends the batch with the applied seq in a value of vlen bytes (8: the
 * seq; 16: the seq and term 7). */
static void hand_end_value(struct hand *h, uint64_t first, size_t vlen)
{
	uint8_t k = K_APPLIED, v[16];
	uint64_t last = first + h->count;

	put_be64(v, last);
	put_be64(v + 8, 7);
	hand_rec(h, 0x1, &k, 1, v, vlen);
	for (int i = 0; i < 8; i++)
		h->b[i] = (uint8_t)(first >> (8 * i));
	for (int i = 0; i < 4; i++)
		h->b[8 + i] = (uint8_t)(h->count >> (8 * i));
}

static void hand_end(struct hand *h, uint64_t first)
{
	hand_end_value(h, first, 8);
}

static void hand_start(struct hand *h)
{
	memset(h, 0, sizeof(*h));
	h->len = 12;
}

/* Hand-made batches of kinds the store never writes. */
static void malformed_by_hand(struct ns_store *b, uint64_t next)
{
	uint8_t ik[9] = { K_INODE, 0, 0, 0, 0, 0, 0, 0, 9 }, ck[2] = { K_COUNTER, C_INODES };
	struct hand h;
	uint64_t term = 1;

	hand_start(&h); /* a well-formed one, to show the others fail for their fault */
	hand_rec(&h, 0x1, ik, 9, "x", 1);
	hand_end(&h, next);
	CHECK_EQ(batch_check(h.b, h.len, &(uint64_t){ 0 }, &(uint64_t){ 0 }, &term), 0);
	CHECK_EQ(term, 0);
	hand_start(&h); /* with a term */
	hand_rec(&h, 0x1, ik, 9, "x", 1);
	hand_end_value(&h, next, 16);
	CHECK_EQ(batch_check(h.b, h.len, &(uint64_t){ 0 }, &(uint64_t){ 0 }, &term), 0);
	CHECK_EQ(term, 7);
	hand_start(&h); /* an applied value neither a seq nor a seq and a term */
	hand_rec(&h, 0x1, ik, 9, "x", 1);
	hand_end_value(&h, next, 12);
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);

	hand_start(&h); /* no applied seq at the end */
	hand_rec(&h, 0x1, ik, 9, "x", 1);
	hand_end(&h, next);
	h.b[h.len - 1] ^= 1;
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);
	hand_start(&h); /* a merge into an inode */
	hand_rec(&h, 0x2, ik, 9, "12345678", 8);
	hand_end(&h, next);
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);
	hand_start(&h); /* a counter put that is not 8 bytes */
	hand_rec(&h, 0x1, ck, 2, "1234", 4);
	hand_end(&h, next);
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);
	hand_start(&h); /* an inverted range */
	hand_rec(&h, 0xf, "b", 1, "a", 1);
	hand_end(&h, next);
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);
	hand_start(&h); /* a kind the store never writes (single delete) */
	hand_rec(&h, 0x7, ik, 9, NULL, 0);
	hand_end(&h, next);
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);
	hand_start(&h); /* an empty key */
	hand_rec(&h, 0x0, ik, 0, NULL, 0);
	hand_end(&h, next);
	CHECK_EQ(ns_apply(b, h.b, h.len), -EINVAL);
}

static void malformed_headers(struct ns_store *b, const struct rec *x)
{
	uint8_t buf[4096];

	CHECK_EQ(ns_apply(b, NULL, 0), -EINVAL);
	for (size_t len = 0; len < x->len; len++)
		CHECK_EQ(ns_apply(b, x->data, len), -EINVAL);
	memcpy(buf, x->data, x->len);
	buf[x->len] = 0;
	CHECK_EQ(ns_apply(b, buf, x->len + 1), -EINVAL); /* a byte after */
	for (int delta = -1; delta <= 1; delta += 2) {
		memcpy(buf, x->data, x->len);
		buf[8] = (uint8_t)(buf[8] + delta);
		CHECK_EQ(ns_apply(b, buf, x->len), -EINVAL); /* count */
	}
	memcpy(buf, x->data, x->len);
	memset(buf + 8, 0, 4);
	CHECK_EQ(ns_apply(b, buf, x->len), -EINVAL); /* count 0 */
	memcpy(buf, x->data, x->len);
	memset(buf, 0, 8);
	CHECK_EQ(ns_apply(b, buf, x->len), -EINVAL); /* seq 0 */
	memcpy(buf, x->data, x->len);
	buf[12] = 0x55;
	CHECK_EQ(ns_apply(b, buf, x->len), -EINVAL); /* tag */
}

/* Random bytes, alone or behind the header of the next batch. */
static void malformed_random(struct ns_store *b, const struct rec *x)
{
	unsigned seed = 24;
	uint8_t buf[600];
	int bad = 0;

	for (int i = 0; i < 4000; i++) {
		size_t len = (size_t)rand_r(&seed) % sizeof(buf);

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)rand_r(&seed);
		if (i % 2 && len >= 12) {
			memcpy(buf, x->data, 8);
			buf[8] = (uint8_t)(1 + rand_r(&seed) % 4);
			memset(buf + 9, 0, 3);
		}
		bad += ns_apply(b, buf, len) != -EINVAL;
	}
	CHECK_EQ(bad, 0);
}

/* Every single bit flipped: refused, or (a flip inside a key or value)
 * well-formed, and then RocksDB takes it too. */
static void malformed_flips(struct ns_store *b, struct ns_store *scratch, const struct rec *x)
{
	int refused = 0, taken = 0;
	uint8_t buf[4096];

	for (size_t bit = 0; bit < x->len * 8; bit++) {
		rocksdb_writebatch_t *wb;
		uint64_t first, last, seq;
		int rc;

		memcpy(buf, x->data, x->len);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		rc = ns_apply(b, buf, x->len);
		CHECK(rc == -EINVAL || rc == -EALREADY || rc == -ERANGE || rc == 0);
		if (rc == -EINVAL) {
			refused++;
			continue;
		}
		CHECK_EQ(batch_check(buf, x->len, &first, &last, &(uint64_t){ 0 }), 0);
		wb = rocksdb_writebatch_create_from((const char *)buf, x->len);
		CHECK_EQ(db_write_local(scratch, wb, &seq), 0);
		rocksdb_writebatch_destroy(wb);
		taken++;
	}
	printf("bit flips: %d refused, %d well-formed (taken by RocksDB)\n", refused, taken);
	CHECK(refused > 0 && taken > 0);
}

static void test_malformed(void)
{
	char path[128], bpath[160], spath[128];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true), *b, *scratch;
	uint64_t seq0, sum;
	const struct rec *x;

	snprintf(bpath, sizeof(bpath), "%s.standby", path);
	CHECK_EQ(ns_snapshot(a, bpath, &seq0), 0);
	CHECK_EQ(ns_setattr(a, mkfile(a, NS_ROOT_INO, "f"),
			    &(struct ns_setattr){ .mask = NS_SET_SIZE, .size = 1 }, NULL),
		 0);
	x = &f.v[1]; /* the create: several records */
	CHECK_EQ(x->seq > seq0 && rec_count(x) > 3, 1);
	b = standby(bpath, true);
	sum = digest(b);
	malformed_headers(b, x);
	malformed_by_hand(b, seq0 + 1);
	malformed_random(b, x);
	CHECK_EQ(digest(b), sum);
	CHECK_EQ(applied(b), seq0);
	CHECK(!ns_failed(b));
	scratch = test_store(spath, sizeof(spath), NULL);
	malformed_flips(b, scratch, x);
	CHECK(!ns_failed(b) && !ns_failed(scratch));
	ns_close(scratch);
	ns_close(b);
	/* RocksDB opens both: it never saw a batch it could not take. */
	b = standby(bpath, true);
	scratch = standby(spath, true);
	ns_close(scratch);
	ns_close(b);
	ns_close(a);
	fake_free(&f);
}

/* A journal with a term: every batch ends by setting the applied seq and
 * that term, so the active, and a standby applying its batches, say which
 * term wrote the last batch they hold, across a reopen. */
static void test_each_batch_carries_the_journals_term(void)
{
	char path[128], bpath[160];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a, *b;
	uint64_t seq0 = 0, seq = 0, term = 0;
	const struct rec *x;

	j.term = 9;
	a = active(path, sizeof(path), &j, true);
	snprintf(bpath, sizeof(bpath), "%s.standby", path);
	CHECK_EQ(ns_snapshot(a, bpath, &seq0), 0);
	mkfile(a, NS_ROOT_INO, "f");
	CHECK_EQ(ns_applied(a, &seq, &term), 0);
	CHECK_EQ(term, 9);
	x = &f.v[f.n - 1];
	CHECK_EQ(seq, x->seq);
	CHECK_EQ(get_be64(x->data + x->len - 8), 9); /* the applied value's end */
	b = standby(bpath, true);
	CHECK_EQ(ns_applied(b, &seq, &term), 0);
	CHECK_EQ(term, 9); /* the snapshot's own batch */
	CHECK(apply_after(&f, b, seq0) > 0);
	ns_close(b);
	b = standby(bpath, true);
	CHECK_EQ(ns_applied(b, &seq, &term), 0);
	CHECK_EQ(seq, x->seq);
	CHECK_EQ(term, 9);
	ns_close(b);
	ns_close(a);
	fake_free(&f);
}

/* Snapshots taken while 4 threads change the active: each holds exactly
 * the batches up to its seq, so the batches after it make it equal. */
static void test_snapshot_midstream(void)
{
	char path[128], bpath[160], cpath[160];
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true), *b, *c;
	pthread_t th[THREADS];
	uint64_t seq = 0, cseq = 0, x;
	size_t k;

	atomic_store(&mix_hold, true); /* batches before and after the snapshot */
	mix_start(a, th, 2);
	fake_wait_count(&f, 1000);
	snprintf(bpath, sizeof(bpath), "%s.standby", path);
	CHECK_EQ(ns_snapshot(a, bpath, &seq), 0);
	atomic_store(&mix_hold, false);
	CHECK_EQ(ns_snapshot(a, bpath, &x), -EEXIST);
	mix_join(th);
	CHECK(seq > f.v[0].seq && seq < f.v[f.n - 1].seq);

	b = standby(bpath, true);
	CHECK_EQ(applied(b), seq);
	for (k = 0; k < f.n && f.v[k].seq <= seq; k++)
		;
	CHECK_EQ(ns_apply(b, f.v[k - 1].data, f.v[k - 1].len), -EALREADY);
	CHECK_EQ(ns_apply(b, f.v[k + 1].data, f.v[k + 1].len), -ERANGE);
	CHECK_EQ(ns_apply(a, f.v[k].data, f.v[k].len), -EPERM);
	printf("snapshot at %llu: %d batches after it applied\n", (unsigned long long)seq,
	       apply_after(&f, b, seq));
	same(a, b);
	check_clean(b);
	CHECK_EQ(ns_mkdir(b, NS_ROOT_INO, "x", TEST_NEWDIR, NULL), -EROFS);

	/* A standby's snapshot, for another standby. */
	snprintf(cpath, sizeof(cpath), "%s.standby2", path);
	CHECK_EQ(ns_snapshot(b, cpath, &cseq), 0);
	CHECK_EQ(cseq, f.v[f.n - 1].seq);
	c = standby(cpath, false);
	same(b, c);
	ns_close(c);
	ns_close(b);
	ns_close(a);
	fake_free(&f);
}

/* A repair with the journal reaches the standby; one without it (as
 * pando-fsck's) makes the standby refuse the next batch. */
static void test_repair(void)
{
	char path[128], bpath[160];
	uint8_t k[ID_KEY_LEN];
	struct ns_check_result r;
	struct ns_options o = { .nosync = true };
	struct fake f;
	struct ns_journal j = fake_journal(&f);
	struct ns_store *a = active(path, sizeof(path), &j, true), *b;
	uint64_t seq0;
	size_t n;

	snprintf(bpath, sizeof(bpath), "%s.standby", path);
	CHECK_EQ(ns_snapshot(a, bpath, &seq0), 0);
	mkdir_(a, NS_ROOT_INO, "d");
	CHECK_EQ(db_put(a, k, key_id(k, K_DATA, 999999), "stray", 5), 0); /* a bug's write */
	CHECK_EQ(ns_repair(a, NULL, NULL, &r), 0);
	CHECK_EQ(r.stray_keys, 1);
	b = standby(bpath, false);
	apply_after(&f, b, seq0);
	same(a, b);
	check_clean(b);

	ns_close(a);
	CHECK_EQ(ns_open(path, &o, &a), 0); /* pando-fsck: no journal */
	CHECK_EQ(db_put(a, k, key_id(k, K_DATA, 999998), "stray", 5), 0);
	CHECK_EQ(ns_repair(a, NULL, NULL, &r), 0);
	CHECK_EQ(r.stray_keys, 1);
	ns_close(a);
	o.journal = &j;
	CHECK_EQ(ns_open(path, &o, &a), 0);
	n = f.n;
	mkdir_(a, NS_ROOT_INO, "e");
	CHECK_EQ(f.n, n + 1);
	CHECK_EQ(ns_apply(b, f.v[n].data, f.v[n].len), -ERANGE);
	ns_close(b);
	ns_close(a);
	fake_free(&f);
}

/* A store that never had a journal is no standby and gives no snapshot. */
static void test_no_journal(void)
{
	char path[128], spath[160];
	struct ns_store *s = test_store(path, sizeof(path), NULL);
	struct hand h;
	uint64_t seq;

	snprintf(spath, sizeof(spath), "%s.snap", path);
	CHECK_EQ(ns_applied_seq(s, &seq), -ENOENT);
	CHECK_EQ(ns_snapshot(s, spath, &seq), -ENOENT);
	CHECK(access(spath, F_OK) != 0);
	hand_start(&h);
	hand_rec(&h, 0x1, "I", 1, "x", 1);
	hand_end(&h, rocksdb_get_latest_sequence_number(s->db) + 1);
	CHECK_EQ(ns_apply(s, h.b, h.len), -ENOENT);
	mkdir_(s, NS_ROOT_INO, "still writable");
	ns_close(s);
}

int main(void)
{
	test_dir_init("journal");
	test_batches();
	test_replay();
	test_a_standby_reads_the_quota_it_applied();
	test_synced_threads();
	test_sync_waits();
	test_failures(false);
	test_failures(true);
	test_a_journal_shut_down_leaves_every_later_change_to_the_next_active();
	test_nosync();
	test_malformed();
	test_each_batch_carries_the_journals_term();
	test_snapshot_midstream();
	test_repair();
	test_no_journal();
	test_dir_done();
	CHECK_DONE();
}
