/* A store journaled to the OSDs, and a standby made from its snapshot
 * that applies the journal: after creates, directories, renames, links,
 * removes and inline writes on the active, the standby holds the same
 * names, attributes and bytes, checks clean, and knows the active's last
 * seq; a second term (the active reopened with a new journal) goes on
 * where the first stopped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "etcd_fixture.h"
#include "journal.h"
#include "mds_fixture.h"
#include "ns_store.h"

static struct etcd_fixture etcd;

static void tune(struct pando_mds_config *cfg)
{
	cfg->etcd = etcd.url;
}

static int apply_one(void *arg, const struct journal_record *r)
{
	int rc = ns_apply(arg, r->payload, r->len);

	return rc == -EALREADY ? 0 : rc;
}

static const struct ns_new file_mode = { .mode = 0644, .uid = 7, .gid = 7 };
static const struct ns_new dir_mode = { .mode = 0755 };

/* Work for the active: 40 files in 4 directories, some renamed, linked,
 * removed and written. */
static void work(struct ns_store *s, int round)
{
	struct ns_attr d[4], a;
	char name[32];

	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "d%d.%d", round, i);
		CHECK_EQ(ns_mkdir(s, NS_ROOT_INO, name, &dir_mode, &d[i]), 0);
	}
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(ns_create(s, d[i % 4].ino, name, &file_mode, NS_UNCHECKED, NULL, &a, NULL),
			 0);
		if (i % 5 == 0)
			CHECK_EQ(ns_write(s, a.ino, 0, name, strlen(name), true, NULL, NULL), 0);
		if (i % 7 == 0)
			CHECK_EQ(ns_rename(s, d[i % 4].ino, name, d[(i + 1) % 4].ino, "moved"), 0);
		else if (i % 11 == 0) {
			snprintf(name, sizeof(name), "link%d.%d", round, i);
			CHECK_EQ(ns_link(s, a.ino, NS_ROOT_INO, name, &a), 0);
		} else if (i % 13 == 0)
			CHECK_EQ(ns_unlink(s, d[i % 4].ino, name), 0);
	}
}

struct walk {
	struct ns_store *s;
	char *text;
	size_t len;
	uint64_t dirs[64];
	size_t ndirs;
	uint64_t cookie; /* of the last entry seen */
};

static void add(struct walk *w, const char *line)
{
	size_t n = strlen(line);

	w->text = realloc(w->text, w->len + n + 1);
	memcpy(w->text + w->len, line, n + 1);
	w->len += n;
}

/* One line an entry: name, inode, type, mode, size, links, owner and the
 * inline bytes; directories are queued for a walk of their own. */
static int entry(void *arg, const struct ns_dirent *de)
{
	struct walk *w = arg;
	char data[32] = "", line[NS_NAME_MAX + 160];
	struct ns_attr a;
	size_t n = 0;
	bool eof;

	w->cookie = de->cookie;
	if (ns_getattr(w->s, de->ino, &a))
		return -EIO;
	if (a.type == NS_REG && a.size)
		ns_read(w->s, a.ino, 0, sizeof(data) - 1, data, &n, &eof);
	snprintf(line, sizeof(line), "%s %llu %d %o %llu %u %u [%.*s]\n", de->name,
		 (unsigned long long)de->ino, (int)a.type, a.mode, (unsigned long long)a.size,
		 a.nlink, a.uid, (int)n, data);
	add(w, line);
	if (a.type == NS_DIR && w->ndirs < 64)
		w->dirs[w->ndirs++] = de->ino;
	return 0;
}

/* The whole tree as text: the same for the same namespace. */
static char *tree_of(struct ns_store *s)
{
	struct walk w = { .s = s, .dirs = { NS_ROOT_INO }, .ndirs = 1 };

	for (size_t i = 0; i < w.ndirs; i++) {
		char line[64];
		bool eof = false;

		snprintf(line, sizeof(line), "dir %llu\n", (unsigned long long)w.dirs[i]);
		add(&w, line);
		for (w.cookie = 0; !eof;)
			if (ns_readdir(s, w.dirs[i], w.cookie, entry, &w, &eof) != 0)
				return w.text;
	}
	return w.text;
}

struct world {
	struct mds_fixture f;
	char active[160], standby[160];
	struct pando_journal *j;
	struct ns_store *a, *b;
	uint64_t seq; /* the snapshot's */
};

/* The active's store, journaled in term: opened on the OSDs' journal. */
static int open_active(struct world *w, uint64_t term)
{
	const struct pando_journal_options jo = { .group = "g1",
						  .term = term,
						  .segment_bytes = 256 << 10 };
	struct ns_options o = { 0 };
	int rc = pando_journal_open(&w->f.mds, &jo, &w->j);

	o.journal = rc ? NULL : pando_journal_ns(w->j);
	return rc ? rc : ns_open(w->active, &o, &w->a);
}

static void close_active(struct world *w)
{
	ns_close(w->a);
	pando_journal_close(w->j);
	w->a = NULL;
	w->j = NULL;
}

static size_t catch_up(struct world *w, struct pando_journal_reader *r)
{
	size_t applied = 0;

	CHECK_EQ(pando_journal_read(r, apply_one, w->b, &applied), 0);
	return applied;
}

static void check_same(struct world *w)
{
	char *ta = tree_of(w->a), *tb = tree_of(w->b);
	struct ns_check_result res;
	uint64_t sa = 0, sb = 0;

	CHECK(ta && tb && !strcmp(ta, tb));
	CHECK(ta && strlen(ta) > 1000);
	CHECK_EQ(ns_check(w->b, NULL, NULL, &res), 0);
	CHECK_EQ(res.problems, 0);
	CHECK_EQ(ns_applied_seq(w->a, &sa), 0);
	CHECK_EQ(ns_applied_seq(w->b, &sb), 0);
	CHECK_EQ(sa, sb);
	free(ta);
	free(tb);
}

static void test_a_standby_from_a_snapshot_follows_the_journal_across_terms(struct world *w)
{
	struct ns_options standby = { .nosync = true };
	struct pando_journal_reader *r = NULL;

	CHECK_EQ(ns_format(w->active, NULL), 0);
	CHECK_EQ(open_active(w, 1), 0);
	if (!w->a)
		return;
	work(w->a, 0);
	CHECK_EQ(ns_snapshot(w->a, w->standby, &w->seq), 0);
	CHECK_EQ(ns_open(w->standby, &standby, &w->b), 0);
	CHECK_EQ(pando_journal_reader_new(&w->f.mds, "g1", w->seq, &r), 0);
	if (!w->b || !r)
		return;
	work(w->a, 1);
	CHECK(catch_up(w, r) > 40);
	check_same(w);
	/* A new term: the active reopened with a journal of its own. */
	close_active(w);
	CHECK_EQ(open_active(w, 2), 0);
	if (!w->a)
		return;
	work(w->a, 2);
	CHECK(catch_up(w, r) > 40);
	check_same(w);
	pando_journal_reader_free(r);
}

int main(void)
{
	struct world w = { 0 };

	if (!etcd_fixture_available()) {
		fprintf(stderr, "no etcd binary: the journal needs one\n");
		return 1;
	}
	CHECK_EQ(etcd_fixture_start(&etcd), 0);
	if (mds_fixture_start(&w.f, JOURNAL_COPIES, tune) == 0) {
		snprintf(w.active, sizeof(w.active), "%s/active", w.f.osds.root);
		snprintf(w.standby, sizeof(w.standby), "%s/standby", w.f.osds.root);
		test_a_standby_from_a_snapshot_follows_the_journal_across_terms(&w);
	} else {
		CHECK(!"the engine starts");
	}
	if (w.b)
		ns_close(w.b);
	if (w.a)
		close_active(&w);
	mds_fixture_finish(&w.f, check_failures);
	CHECK_EQ(etcd_fixture_stop(&etcd, check_failures), 0);
	CHECK_DONE();
}
