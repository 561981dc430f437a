/* readdir: cookies, paging, cookies that stay good while the directory
 * changes (also under a concurrent writer), and a 100,000-entry directory. */
#include "ns_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

static struct ns_store *s;

/* Collects entries; stops after max of them (0: never). */
struct page {
	size_t n, max;
	struct ns_dirent *v;
	size_t cap;
};

static int collect(void *arg, const struct ns_dirent *de)
{
	struct page *p = arg;

	if (p->n < p->cap)
		p->v[p->n] = *de;
	p->n++;
	return p->max && p->n >= p->max;
}

static struct page page_new(size_t cap, size_t max)
{
	struct page p = { .max = max, .cap = cap, .v = calloc(cap ? cap : 1, sizeof(*p.v)) };

	return p;
}

static void test_basic(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "basic"), f = mkfile(s, d, "file"), cookie = 0;
	struct page p = page_new(16, 0);
	bool eof = false;

	mkdir_(s, d, "sub");
	CHECK_EQ(ns_symlink(s, d, "link", "file", TEST_NEW, NULL), 0);
	CHECK_EQ(ns_readdir(s, d, 0, collect, &p, &eof), 0);
	CHECK(eof);
	CHECK_EQ(p.n, 3);
	CHECK(strcmp(p.v[0].name, "file") == 0);
	CHECK_EQ(p.v[0].namelen, 4);
	CHECK_EQ(p.v[0].ino, f);
	CHECK_EQ(p.v[0].type, NS_REG);
	CHECK_EQ(p.v[0].cookie, NS_COOKIE_FIRST);
	CHECK_EQ(p.v[1].type, NS_DIR);
	CHECK_EQ(p.v[2].type, NS_LNK);
	CHECK(p.v[1].cookie > p.v[0].cookie && p.v[2].cookie > p.v[1].cookie);
	CHECK_EQ(ns_lookup_cookie(s, d, "sub", &cookie), 0);
	CHECK_EQ(cookie, p.v[1].cookie);
	/* 1 and 2 are NFS's; they read from the start like 0. */
	p.n = 0;
	CHECK_EQ(ns_readdir(s, d, 2, collect, &p, &eof), 0);
	CHECK_EQ(p.n, 3);
	p.n = 0;
	CHECK_EQ(ns_readdir(s, d, UINT64_MAX, collect, &p, &eof), 0);
	CHECK_EQ(p.n, 0);
	CHECK(eof);
	/* Stopping on the last entry still says eof. */
	p = (struct page){ .max = 3, .cap = 16, .v = p.v };
	CHECK_EQ(ns_readdir(s, d, 0, collect, &p, &eof), 0);
	CHECK(eof);
	p = (struct page){ .max = 2, .cap = 16, .v = p.v };
	CHECK_EQ(ns_readdir(s, d, 0, collect, &p, &eof), 0);
	CHECK(!eof);
	CHECK_EQ(ns_readdir(s, f, 0, collect, &p, &eof), -ENOTDIR);
	CHECK_EQ(ns_readdir(s, 31337, 0, collect, &p, &eof), -ESTALE);
	p.n = 0;
	CHECK_EQ(ns_readdir(s, mkdir_(s, d, "empty"), 0, collect, &p, &eof), 0);
	CHECK_EQ(p.n, 0);
	CHECK(eof);
	free(p.v);
}

/* The cookie of a removed entry continues after it; new entries come
 * after all the old ones; no entry moves. */
static void test_cookie_stability(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "stable");
	struct page p = page_new(32, 4);
	char name[16];
	bool eof;

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		mkfile(s, d, name);
	}
	CHECK_EQ(ns_readdir(s, d, 0, collect, &p, &eof), 0);
	CHECK_EQ(p.n, 4);
	CHECK(strcmp(p.v[3].name, "e3") == 0);
	CHECK_EQ(ns_unlink(s, d, "e3"), 0);
	CHECK_EQ(ns_unlink(s, d, "e2"), 0);
	CHECK_EQ(ns_unlink(s, d, "e5"), 0);
	mkfile(s, d, "late");
	CHECK_EQ(ns_rename(s, d, "e4", d, "e4-renamed"), 0);
	p = (struct page){ .cap = 32, .v = p.v };
	CHECK_EQ(ns_readdir(s, d, p.v[3].cookie, collect, &p, &eof), 0);
	CHECK(eof);
	CHECK_EQ(p.n, 6);
	CHECK(strcmp(p.v[0].name, "e4-renamed") == 0);
	CHECK(strcmp(p.v[1].name, "e6") == 0);
	CHECK(strcmp(p.v[5].name, "late") == 0);
	free(p.v);
}

/* ---- under a concurrent writer --------------------------------------- */

#define STABLE 2000
#define PAGE 50

struct churn {
	uint64_t dir;
	atomic_bool stop;
	atomic_int rounds;
};

static void *churner(void *arg)
{
	struct churn *c = arg;
	char name[32];

	for (int i = 0; !atomic_load(&c->stop); i++) {
		snprintf(name, sizeof(name), "t%d", i);
		if (ns_create(s, c->dir, name, TEST_NEW, NS_GUARDED, NULL, NULL, NULL))
			break;
		if (i >= 20) {
			snprintf(name, sizeof(name), "t%d", i - 20);
			if (ns_unlink(s, c->dir, name))
				break;
		}
		atomic_fetch_add(&c->rounds, 1);
	}
	return NULL;
}

/* One pass in pages, resuming by cookie: every stable entry exactly once,
 * cookies strictly rising. */
static void one_pass(uint64_t dir, uint8_t *seen)
{
	struct page p = page_new(PAGE, PAGE);
	uint64_t cookie = 0;
	bool eof = false, rising = true;
	int dups = 0;

	memset(seen, 0, STABLE);
	while (!eof) {
		p.n = 0;
		CHECK_EQ(ns_readdir(s, dir, cookie, collect, &p, &eof), 0);
		for (size_t i = 0; i < p.n; i++) {
			int k;

			rising &= p.v[i].cookie > cookie;
			cookie = p.v[i].cookie;
			if (sscanf(p.v[i].name, "s%d", &k) == 1 && k >= 0 && k < STABLE)
				dups += seen[k]++ > 0;
		}
	}
	CHECK(rising);
	CHECK_EQ(dups, 0);
	for (int k = 0; k < STABLE; k++)
		CHECK_EQ(seen[k], 1);
	free(p.v);
}

static void test_concurrent(void)
{
	struct churn c = { .dir = mkdir_(s, NS_ROOT_INO, "churn") };
	uint8_t *seen = malloc(STABLE);
	char name[32];
	pthread_t th;
	int passes;

	for (int i = 0; i < STABLE; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		mkfile(s, c.dir, name);
		/* Interleave, so the writer's entries fall between pages. */
		if (i % 100 == 0) {
			snprintf(name, sizeof(name), "s%d-gone", i);
			mkfile(s, c.dir, name);
			CHECK_EQ(ns_unlink(s, c.dir, name), 0);
		}
	}
	pthread_create(&th, NULL, churner, &c);
	/* Until the writer has done enough to matter. */
	for (passes = 0; passes < 5 || (atomic_load(&c.rounds) < 2000 && passes < 1000); passes++)
		one_pass(c.dir, seen);
	atomic_store(&c.stop, true);
	pthread_join(th, NULL);
	printf("readdir under churn: %d passes over %d entries during %d creates+unlinks\n", passes,
	       STABLE, atomic_load(&c.rounds));
	CHECK(atomic_load(&c.rounds) > 0);
	free(seen);
}

/* ---- a big directory ------------------------------------------------- */

#define BIG 100000

static void test_big(void)
{
	uint64_t d = mkdir_(s, NS_ROOT_INO, "big"), cookie = 0;
	struct page p = page_new(1000, 1000);
	size_t total = 0, pages = 0;
	double t0 = now_s(), t1, t2, t3;
	struct ns_attr a;
	char name[32];
	bool eof = false;

	for (int i = 0; i < BIG; i++) {
		snprintf(name, sizeof(name), "file-%06d", i);
		if (ns_create(s, d, name, TEST_NEW, NS_GUARDED, NULL, NULL, NULL))
			CHECK(0);
	}
	t1 = now_s();
	while (!eof) {
		p.n = 0;
		CHECK_EQ(ns_readdir(s, d, cookie, collect, &p, &eof), 0);
		if (p.n)
			cookie = p.v[p.n - 1].cookie;
		total += p.n;
		pages++;
	}
	t2 = now_s();
	CHECK_EQ(total, BIG);
	CHECK_EQ(attr_of(s, d).size, BIG);
	for (int i = 0; i < BIG; i += 7) {
		snprintf(name, sizeof(name), "file-%06d", (i * 7919) % BIG);
		CHECK_EQ(ns_lookup(s, d, name, &a), 0);
	}
	t3 = now_s();
	printf("%d entries (no sync): create %.2f s (%.0f/s), readdir %.3f s in %zu pages, "
	       "%d lookups %.3f s\n",
	       BIG, t1 - t0, BIG / (t1 - t0), t2 - t1, pages, BIG / 7 + 1, t3 - t2);
	free(p.v);
}

int main(void)
{
	char path[128];

	test_dir_init("readdir");
	s = test_store(path, sizeof(path), NULL);
	test_basic();
	test_cookie_stability();
	test_concurrent();
	test_big();
	check_clean(s);
	ns_close(s);
	test_dir_done();
	CHECK_DONE();
}
