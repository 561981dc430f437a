/* File contents and attributes: setattr (mode, owner, size, times), inline
 * data up to the threshold, the move to objects, storage maps, and the
 * removal intents that keep objects from leaking. */
#include "ns_test.h"

#include <errno.h>

#define INLINE_MAX 1024

static struct ns_store *s;
static char path[128];

static void test_setattr(void)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, "attrs"), d = mkdir_(s, NS_ROOT_INO, "adir");
	struct ns_setattr sa = { .mask = NS_SET_MODE, .mode = 0104755 };
	struct ns_attr a, before = attr_of(s, f);

	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.mode, 04755);
	CHECK(a.change > before.change);
	CHECK_EQ(a.mtime.tv_sec, before.mtime.tv_sec);
	CHECK_EQ(a.mtime.tv_nsec, before.mtime.tv_nsec);
	/* chown drops set-uid, and set-gid with group exec. */
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_MODE, .mode = 06755 }, NULL),
		 0);
	CHECK_EQ(ns_setattr(s, f,
			    &(struct ns_setattr){
				    .mask = NS_SET_UID | NS_SET_GID, .uid = 7, .gid = 8 },
			    &a),
		 0);
	CHECK_EQ(a.uid, 7);
	CHECK_EQ(a.gid, 8);
	CHECK_EQ(a.mode, 0755);
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_MODE, .mode = 02745 }, NULL),
		 0);
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_GID, .gid = 9 }, &a), 0);
	CHECK_EQ(a.mode, 02745);
	CHECK_EQ(ns_setattr(s, d, &(struct ns_setattr){ .mask = NS_SET_MODE, .mode = 02775 }, NULL),
		 0);
	CHECK_EQ(ns_setattr(s, d, &(struct ns_setattr){ .mask = NS_SET_UID, .uid = 3 }, &a), 0);
	CHECK_EQ(a.mode, 02775);

	sa = (struct ns_setattr){ .mask = NS_SET_ATIME | NS_SET_MTIME,
				  .atime = { -86400, 5 },
				  .mtime = { 4102444800, 999999999 } };
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	ns_close(s);
	CHECK_EQ(ns_open(path, &(struct ns_options){ .nosync = true, .inline_max = INLINE_MAX },
			 &s),
		 0);
	a = attr_of(s, f);
	CHECK_EQ(a.atime.tv_sec, -86400);
	CHECK_EQ(a.atime.tv_nsec, 5);
	CHECK_EQ(a.mtime.tv_sec, 4102444800);
	CHECK_EQ(a.mtime.tv_nsec, 999999999);
	sa.mask = NS_SET_ATIME_NOW | NS_SET_MTIME_NOW;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK(a.atime.tv_sec > 1600000000 && a.mtime.tv_sec < 4000000000);
	CHECK_EQ(a.mtime.tv_sec, a.ctime.tv_sec);

	sa.mask = NS_SET_ATIME | NS_SET_ATIME_NOW;
	CHECK_EQ(ns_setattr(s, f, &sa, NULL), -EINVAL);
	sa = (struct ns_setattr){ .mask = NS_SET_MTIME, .mtime = { 0, 1000000000 } };
	CHECK_EQ(ns_setattr(s, f, &sa, NULL), -EINVAL);
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = 1u << 20 }, NULL), -EINVAL);
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_SIZE_GROW }, NULL), -EINVAL);
	CHECK_EQ(ns_setattr(s, d, &(struct ns_setattr){ .mask = NS_SET_SIZE }, NULL), -EISDIR);
	CHECK_EQ(ns_setattr(s, 8888888, &(struct ns_setattr){ .mask = NS_SET_MODE }, NULL),
		 -ESTALE);
	before = attr_of(s, f);
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ 0 }, &a), 0);
	CHECK_EQ(a.change, before.change);
}

static void test_inline_read_write_holes_and_truncate(void)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, "data");
	uint8_t buf[INLINE_MAX + 16];
	struct ns_setattr sa = { .mask = NS_SET_SIZE };
	struct ns_attr a;
	size_t n = 0;
	bool eof = false;

	CHECK_EQ(ns_read(s, f, 0, sizeof(buf), buf, &n, &eof), 0);
	CHECK_EQ(n, 0);
	CHECK(eof);
	CHECK_EQ(ns_write(s, f, 0, "hello world", 11, true, NULL, &a), 0);
	CHECK_EQ(a.size, 11);
	CHECK_EQ(a.inline_len, 11);
	CHECK_EQ(ns_write(s, f, 6, "WORLD", 5, false, NULL, NULL), 0);
	CHECK_EQ(ns_sync(s), 0);
	CHECK_EQ(ns_read(s, f, 0, sizeof(buf), buf, &n, &eof), 0);
	CHECK_EQ(n, 11);
	CHECK(eof);
	CHECK(memcmp(buf, "hello WORLD", 11) == 0);
	CHECK_EQ(ns_read(s, f, 6, 3, buf, &n, &eof), 0);
	CHECK_EQ(n, 3);
	CHECK(!eof);
	CHECK_EQ(ns_read(s, f, 100, 3, buf, &n, &eof), 0);
	CHECK_EQ(n, 0);
	CHECK(eof);
	/* A hole reads as zeros, and growing by truncate stores nothing. */
	CHECK_EQ(ns_write(s, f, 20, "x", 1, true, NULL, &a), 0);
	CHECK_EQ(a.size, 21);
	CHECK_EQ(ns_read(s, f, 10, 11, buf, &n, &eof), 0);
	CHECK(memcmp(buf, "D\0\0\0\0\0\0\0\0\0x", 11) == 0);
	sa.size = 500;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.size, 500);
	CHECK_EQ(a.inline_len, 21);
	CHECK_EQ(ns_read(s, f, 490, 20, buf, &n, &eof), 0);
	CHECK_EQ(n, 10);
	CHECK(eof);
	CHECK(buf[0] == 0 && buf[9] == 0);
	sa.size = 5;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.inline_len, 5);
	sa.size = 8;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(ns_read(s, f, 0, sizeof(buf), buf, &n, &eof), 0);
	CHECK_EQ(n, 8);
	CHECK(memcmp(buf, "hello\0\0\0", 8) == 0);
	/* Empty again: the object tests count the store's bytes. */
	sa.size = 0;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
}

/* LAYOUTCOMMIT's sizes: grow only, lazy, guarded by the change attribute. */
static void test_inline_size_grow_lazy_and_guarded(void)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, "sizes");
	struct ns_setattr sa;
	struct ns_attr a;

	CHECK_EQ(ns_write(s, f, 0, "hello\0\0\0", 8, true, NULL, &a), 0);
	CHECK_EQ(a.size, 8);
	/* Only grow: LAYOUTCOMMIT's size. */
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE | NS_SET_SIZE_GROW, .size = 4 };
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.size, 8);
	sa.size = 12;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.size, 12);
	/* Lazy: applied at once, durable at the next ns_sync. */
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_LAZY,
				  .size = 16 };
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.size, 16);
	CHECK_EQ(ns_sync(s), 0);
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE, .size = 12 };
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	/* Guarded by the change attribute: a stale look at the file refuses. */
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE | NS_SET_SIZE_GROW | NS_SET_IF_CHANGE,
				  .size = 14,
				  .change = a.change - 1 };
	CHECK_EQ(ns_setattr(s, f, &sa, NULL), -EAGAIN);
	CHECK_EQ(attr_of(s, f).size, 12);
	sa.change = a.change;
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	CHECK_EQ(a.size, 14);
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE, .size = 12 };
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
	/* Empty again: the object tests count the store's bytes. */
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE, .size = 0 };
	CHECK_EQ(ns_setattr(s, f, &sa, &a), 0);
}

static void test_inline_threshold_and_bad_targets(void)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, "threshold");
	uint8_t buf[16], big[INLINE_MAX + 1];
	struct ns_setattr sa;
	struct ns_attr a;
	size_t n = 0;
	bool eof = false;

	/* The threshold: up to it inline, past it the caller must move on. */
	memset(big, 'b', sizeof(big));
	CHECK_EQ(ns_write(s, f, 0, big, INLINE_MAX, true, NULL, &a), 0);
	CHECK_EQ(a.size, INLINE_MAX);
	CHECK_EQ(ns_write(s, f, 0, big, INLINE_MAX + 1, true, NULL, NULL), -EFBIG);
	CHECK_EQ(ns_write(s, f, INLINE_MAX, "z", 1, true, NULL, NULL), -EFBIG);
	CHECK_EQ(ns_write(s, f, UINT64_MAX, "z", 1, true, NULL, NULL), -EFBIG);
	sa = (struct ns_setattr){ .mask = NS_SET_SIZE, .size = INLINE_MAX + 1 };
	CHECK_EQ(ns_setattr(s, f, &sa, NULL), -EFBIG);
	CHECK_EQ(attr_of(s, f).size, INLINE_MAX);
	CHECK_EQ(ns_write(s, f, 3, "", 0, true, NULL, &a), 0);
	CHECK_EQ(a.size, INLINE_MAX);

	CHECK_EQ(ns_write(s, NS_ROOT_INO, 0, "x", 1, true, NULL, NULL), -EISDIR);
	CHECK_EQ(ns_read(s, NS_ROOT_INO, 0, 1, buf, &n, &eof), -EISDIR);
	CHECK_EQ(ns_read(s, 7777777, 0, 1, buf, &n, &eof), -ESTALE);
	CHECK_EQ(ns_write(s, 7777777, 0, "x", 1, true, NULL, NULL), -ESTALE);
}

/* Intents, collected. */
struct intents {
	int n;
	struct ns_intent last;
	char blob[64];
};

static int collect_intent(void *arg, const struct ns_intent *in)
{
	struct intents *c = arg;

	c->n++;
	c->last = *in;
	memcpy(c->blob, in->blob, in->len < sizeof(c->blob) ? in->len : sizeof(c->blob));
	return 0;
}

static int first_intent(void *arg, const struct ns_intent *in)
{
	collect_intent(arg, in);
	return 1;
}

static struct intents intents_now(void)
{
	struct intents c = { 0 };

	CHECK_EQ(ns_intent_list(s, 0, collect_intent, &c), 0);
	return c;
}

static void drain_intents(void)
{
	struct intents c = intents_now();

	while (c.n) {
		CHECK_EQ(ns_intent_done(s, c.last.id), 0);
		c = intents_now();
	}
}

/* The FSAL's move of an inline file to objects, and back by truncate. */
static void test_objects(void)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, "big"), claim = 0;
	struct ns_attr a = attr_of(s, f);
	struct ns_statfs st;
	struct intents c;
	uint8_t buf[16];
	void *map = NULL;
	size_t len = 0, n;
	bool eof;

	CHECK_EQ(ns_map_get(s, f, &map, &len), -ENODATA);
	CHECK_EQ(ns_map_get(s, NS_ROOT_INO, &map, &len), -EINVAL);
	CHECK_EQ(ns_write(s, f, 0, "inline", 6, true, NULL, &a), 0);
	/* Objects are registered before they are made... */
	CHECK_EQ(ns_intent_add(s, f, "objs-1", 6, &claim), 0);
	c = intents_now();
	CHECK_EQ(c.n, 1);
	CHECK_EQ(c.last.id, claim);
	CHECK_EQ(c.last.ino, f);
	CHECK_EQ(c.last.kind, NS_INTENT_REMOVE);
	CHECK(memcmp(c.blob, "objs-1", 6) == 0);
	/* ...a write after the copy makes the switch fail... */
	CHECK_EQ(ns_write(s, f, 0, "I", 1, true, NULL, NULL), 0);
	CHECK_EQ(ns_map_set(s, f, a.change, "map-1", 5, NULL, 0, claim), -EAGAIN);
	a = attr_of(s, f);
	/* ...and the switch drops inline data and claims the objects. */
	CHECK_EQ(ns_map_set(s, f, a.change, "map-1", 5, NULL, 0, claim), 0);
	CHECK_EQ(intents_now().n, 0);
	a = attr_of(s, f);
	CHECK(a.objects);
	CHECK_EQ(a.inline_len, 0);
	CHECK_EQ(a.size, 6);
	CHECK_EQ(ns_map_get(s, f, &map, &len), 0);
	CHECK_EQ(len, 5);
	CHECK(memcmp(map, "map-1", 5) == 0);
	free(map);
	CHECK_EQ(ns_statfs(s, &st), 0);
	CHECK_EQ(st.bytes - st.inline_bytes, 6);
	CHECK_EQ(ns_read(s, f, 0, 4, buf, &n, &eof), -EREMOTE);
	CHECK_EQ(ns_write(s, f, 0, "x", 1, true, NULL, NULL), -EREMOTE);
	/* The size is the FSAL's to keep now; the objects hold the data. */
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_SIZE, .size = 1ull << 40 },
			    &a),
		 0);
	CHECK_EQ(a.size, 1ull << 40);
	CHECK(a.objects);
	/* A new map: the objects it no longer has become an intent. */
	CHECK_EQ(ns_map_set(s, f, 0, "map-2", 5, "old-part", 8, 0), 0);
	c = intents_now();
	CHECK_EQ(c.n, 1);
	CHECK(memcmp(c.blob, "old-part", 8) == 0);
	drain_intents();
	/* Truncate to nothing: every object goes, the file is inline again. */
	CHECK_EQ(ns_setattr(s, f, &(struct ns_setattr){ .mask = NS_SET_SIZE }, &a), 0);
	CHECK(!a.objects);
	CHECK_EQ(a.size, 0);
	CHECK_EQ(ns_map_get(s, f, &map, &len), -ENODATA);
	c = intents_now();
	CHECK_EQ(c.n, 1);
	CHECK_EQ(c.last.ino, f);
	CHECK(memcmp(c.blob, "map-2", 5) == 0);
	drain_intents();
	CHECK_EQ(ns_write(s, f, 0, "again", 5, true, NULL, NULL), 0);
	CHECK_EQ(ns_map_set(s, f, 0, NULL, 0, NULL, 0, 0), -EINVAL);
	CHECK_EQ(ns_map_set(s, NS_ROOT_INO, 0, "m", 1, NULL, 0, 0), -EISDIR);
}

/* The last name of an object-backed file goes: its map becomes an intent,
 * which outlives a restart until done. */
static void test_unlink_objects(void)
{
	uint64_t f = mkfile(s, NS_ROOT_INO, "doomed"), g = mkfile(s, NS_ROOT_INO, "linked");
	struct intents c;

	CHECK_EQ(ns_map_set(s, f, 0, "map-f", 5, NULL, 0, 0), 0);
	CHECK_EQ(ns_map_set(s, g, 0, "map-g", 5, NULL, 0, 0), 0);
	CHECK_EQ(ns_link(s, g, NS_ROOT_INO, "linked2", NULL), 0);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "linked"), 0);
	CHECK_EQ(intents_now().n, 0);
	CHECK_EQ(ns_unlink(s, NS_ROOT_INO, "doomed"), 0);
	/* Renaming over the last name counts too. */
	mkfile(s, NS_ROOT_INO, "other");
	CHECK_EQ(ns_rename(s, NS_ROOT_INO, "other", NS_ROOT_INO, "linked2"), 0);
	ns_close(s);
	CHECK_EQ(ns_open(path, &(struct ns_options){ .nosync = true, .inline_max = INLINE_MAX },
			 &s),
		 0);
	c = intents_now();
	CHECK_EQ(c.n, 2);
	CHECK_EQ(c.last.ino, g);
	CHECK(memcmp(c.blob, "map-g", 5) == 0);
	c = (struct intents){ 0 };
	CHECK_EQ(ns_intent_list(s, 0, first_intent, &c), 0);
	CHECK_EQ(c.n, 1);
	CHECK_EQ(c.last.ino, f);
	CHECK(memcmp(c.blob, "map-f", 5) == 0);
	CHECK_EQ(ns_intent_list(s, c.last.id, collect_intent, &c), 0);
	CHECK_EQ(c.n, 2);
	CHECK_EQ(c.last.ino, g);
	CHECK_EQ(ns_intent_list(s, UINT64_MAX, collect_intent, &c), 0);
	CHECK_EQ(c.n, 2);
	drain_intents();
	CHECK_EQ(ns_intent_done(s, 12345), 0);
}

int main(void)
{
	test_dir_init("data");
	s = test_store(path, sizeof(path),
		       &(struct ns_options){ .nosync = true, .inline_max = INLINE_MAX });
	test_setattr();
	test_inline_read_write_holes_and_truncate();
	test_inline_size_grow_lazy_and_guarded();
	test_inline_threshold_and_bad_targets();
	test_objects();
	test_unlink_objects();
	check_clean(s);
	ns_close(s);
	test_dir_done();
	CHECK_DONE();
}
