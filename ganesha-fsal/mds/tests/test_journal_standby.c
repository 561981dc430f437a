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
#include "snapshot_pack.h"

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
	CHECK_EQ(pando_journal_reader_new(&w->f.mds, "g1", w->seq, 0, &r), 0);
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

/* The journal hook of a store as an active's, that can be told to lose
 * the batches it is given: the store's RocksDB holds them, the journal
 * never will, as when an active dies between the two. */
struct losing {
	const struct ns_journal *real;
	bool lose;
	struct ns_journal hook;
};

static int losing_append(void *arg, uint64_t seq, const void *batch, size_t len)
{
	struct losing *l = arg;

	return l->lose ? 0 : l->real->append(l->real->arg, seq, batch, len);
}

static int losing_sync(void *arg, uint64_t seq)
{
	struct losing *l = arg;

	return l->lose ? -EIO : l->real->sync(l->real->arg, seq);
}

static void create_in(struct ns_store *s, const char *prefix, int n)
{
	struct ns_attr a;
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		CHECK_EQ(ns_create(s, NS_ROOT_INO, name, &file_mode, NS_UNCHECKED, NULL, &a, NULL),
			 0);
	}
}

/* An active killed with a create in its RocksDB that never reached the
 * journal; the standby takes over and creates on; the old active's store
 * comes back as a standby.  It holds a batch of the ended term at seqs
 * the new term wrote other batches to: it must not follow on as if it
 * held those. */
static void
test_a_store_with_a_batch_the_next_term_never_had_is_told_to_start_again(struct world *w)
{
	const struct pando_journal_options jo = { .group = "g1", .term = 3 };
	struct losing l = { 0 };
	struct ns_options o = { 0 };
	struct pando_journal_reader *r = NULL;
	struct ns_attr a;
	uint64_t seq = 0, from = 0, term = 0;
	size_t applied = 0;
	char old[160];
	int rc;

	close_active(w);
	ns_close(w->b);
	w->b = NULL;
	/* The active of term 3 on the store left by term 2. */
	CHECK_EQ(pando_journal_open(&w->f.mds, &jo, &w->j), 0);
	l.real = pando_journal_ns(w->j);
	l.hook = (struct ns_journal){
		.append = losing_append, .sync = losing_sync, .arg = &l, .term = l.real->term
	};
	o.journal = &l.hook;
	CHECK_EQ(ns_open(w->active, &o, &w->a), 0);
	if (!w->a)
		return;
	create_in(w->a, "t3.", 3);
	CHECK_EQ(ns_applied_seq(w->a, &from), 0);
	snapshot_dir_remove(w->standby);
	CHECK_EQ(ns_snapshot(w->a, w->standby, &seq), 0);
	l.lose = true;
	rc = ns_create(w->a, NS_ROOT_INO, "never-acknowledged", &file_mode, NS_UNCHECKED, NULL, &a,
		       NULL);
	CHECK(rc != 0);
	close_active(w);
	/* The standby leads in term 4 and creates on: the two stores swap. */
	snprintf(old, sizeof(old), "%s", w->active);
	snprintf(w->active, sizeof(w->active), "%s", w->standby);
	snprintf(w->standby, sizeof(w->standby), "%s", old);
	CHECK_EQ(open_active(w, 4), 0);
	if (!w->a)
		return;
	create_in(w->a, "t4.", 5);
	/* The old active's store, as a standby from its own last batch. */
	CHECK_EQ(ns_open(w->standby, &(struct ns_options){ .nosync = true }, &w->b), 0);
	if (!w->b)
		return;
	CHECK_EQ(ns_applied(w->b, &seq, &term), 0);
	CHECK(seq > from);
	CHECK_EQ(term, 3);
	CHECK_EQ(pando_journal_reader_new(&w->f.mds, "g1", seq, term, &r), 0);
	if (!r)
		return;
	CHECK_EQ(pando_journal_read(r, apply_one, w->b, &applied), -ESTALE);
	CHECK_EQ(applied, 0);
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
		test_a_store_with_a_batch_the_next_term_never_had_is_told_to_start_again(&w);
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
