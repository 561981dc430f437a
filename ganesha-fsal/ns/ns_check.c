/* The consistency check: walks every key and reports what a crash or a bug
 * could have left wrong.  pando-fsck builds on it.
 *
 *   1. directory entries ('D'), each with its readdir index entry ('R'),
 *      its parent (a directory whose next_seq is above the entry's seq);
 *   2. index entries without their directory entry;
 *   3. reachability: a walk down from the root over the entries;
 *   4. inodes ('I'): link counts, entry counts, parents, the keys their
 *      flags promise, orphans (no name, or only names no walk reaches);
 *   5. names of inodes that do not exist;
 *   6. data, targets, maps and policies of inodes that should not have
 *      them, intents;
 *   7. the statfs counters and the next id.
 *
 * Entries are held in memory twice (by parent in key order, and sorted by
 * child), 32 bytes each: 100 million names fit in a few GiB. */
#include "ns_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "grow.h"

struct link {
	uint64_t child;
	uint64_t parent;
	uint8_t type; /* as the index says */
	bool matched; /* the child's inode exists */
	bool reached; /* the walk from the root came here */
};

struct links {
	struct link *v;
	size_t n, cap;
};

struct checker {
	struct ns_store *s;
	ns_check_say_fn say;
	void *arg;
	struct ns_check_result *res;
	struct links by_parent; /* key order: sorted by parent */
	struct links by_child;
	uint64_t max_id;
	uint64_t bytes;
	uint64_t inline_bytes;
	struct owner_sums owners;
	struct ns_inode parent; /* the directory whose entries are being read */
	bool parent_ok;
	bool saw_root;
};

/* Visits one key of a scanned prefix; a non-zero return stops the scan. */
typedef int (*visit_fn)(struct checker *c, uint8_t type, const uint8_t *k, size_t klen,
			const uint8_t *v, size_t vlen);

static int scan_prefix(struct checker *c, uint8_t type, visit_fn visit)
{
	struct db_iter i;
	uint64_t n = 0;
	int rc = 0;

	iter_open_prefix(c->s, &i, &type, 1);
	for (; !rc && iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		walk_progress(c->s, type, ++n);
		rc = visit(c, type, k, klen, v, vlen);
	}
	return iter_close(c->s, &i) ? -EIO : rc;
}

static void problem(struct checker *c, uint64_t *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct checker *c, uint64_t *counter, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	(*counter)++;
	c->res->problems++;
	if (!c->say)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->say(c->arg, msg);
}

static int links_push(struct links *l, const struct link *x)
{
	int rc = pando_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));

	if (!rc)
		l->v[l->n++] = *x;
	return rc;
}

/* The first link whose parent (by_parent) or child (by_child) is >= id. */
static size_t lower_bound(const struct links *l, uint64_t id, bool by_child)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = by_child ? l->v[mid].child : l->v[mid].parent;

		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_child(const void *a, const void *b)
{
	const struct link *x = a, *y = b;

	return x->child < y->child ? -1 : x->child > y->child;
}

/* 0, -ESTALE when absent, BAD when undecodable (scan_inodes reports
 * that once), or -EIO when RocksDB failed. */
#define BAD 1

static int load(struct checker *c, uint64_t ino, struct ns_inode *r)
{
	uint8_t k[ID_KEY_LEN];
	size_t vlen;
	char *v;
	int rc = db_get(c->s, k, key_id(k, K_INODE, ino), &v, &vlen);

	if (rc)
		return rc;
	if (!v)
		return -ESTALE;
	rc = inode_decode(ino, (const uint8_t *)v, vlen, r) ? BAD : 0;
	rocksdb_free(v);
	return rc;
}

static void note_id(struct checker *c, uint64_t id)
{
	if (id > c->max_id)
		c->max_id = id;
}

/* ---- 1. directory entries -------------------------------------------- */

/* The index entry an entry points to must name it back. */
static int check_index_of(struct checker *c, uint64_t dir, const uint8_t *name, size_t len,
			  const struct dirent_rec *d, struct link *l)
{
	uint8_t k[INDEX_KEY_LEN], type;
	const char *iname;
	size_t vlen, ilen;
	uint64_t ino;
	char *v;
	int rc = db_get(c->s, k, key_index(k, dir, d->seq), &v, &vlen);

	if (rc)
		return rc;
	if (!v || index_decode((const uint8_t *)v, vlen, &ino, &type, &iname, &ilen) ||
	    ino != d->ino || ilen != len || memcmp(iname, name, len) != 0)
		problem(c, &c->res->index_mismatches,
			"dir %llu: entry '%.*s' (cookie %llu): "
			"index entry missing or different",
			(unsigned long long)dir, (int)len, name, (unsigned long long)d->seq);
	else
		l->type = type;
	rocksdb_free(v);
	return 0;
}

/* With the index entry broken, the type comes from the inode (0: none). */
static int type_of(struct checker *c, uint64_t ino, uint8_t *type)
{
	struct ns_inode r;
	int rc = load(c, ino, &r);

	*type = rc ? 0 : r.type;
	return rc == -ESTALE || rc == BAD ? 0 : rc;
}

/* Loads the directory a run of entries belongs to; *ok false if none. */
static int entry_parent(struct checker *c, uint64_t dir, struct ns_inode *p, bool *ok)
{
	int rc = load(c, dir, p);

	*ok = !rc && p->type == NS_DIR;
	return rc == -ESTALE || rc == BAD ? 0 : rc;
}

static int check_entry(struct checker *c, uint8_t type, const uint8_t *k, size_t klen,
		       const uint8_t *v, size_t vlen)
{
	struct ns_inode *p = &c->parent;
	bool *p_ok = &c->parent_ok;
	uint64_t dir = get_be64(k + 1);
	struct link l = { .parent = dir };
	struct dirent_rec d;
	int rc = 0;

	c->res->dirents++;
	if (klen <= ID_KEY_LEN || klen > ID_KEY_LEN + NS_NAME_MAX || dirent_decode(v, vlen, &d)) {
		problem(c, &c->res->bad_records, "dir %llu: malformed entry",
			(unsigned long long)dir);
		return 0;
	}
	if (!c->by_parent.n || c->by_parent.v[c->by_parent.n - 1].parent != dir)
		rc = entry_parent(c, dir, p, p_ok);
	if (rc)
		return rc;
	if (!*p_ok)
		problem(c, &c->res->dangling_dirents,
			"dir %llu: entry '%.*s' in a missing "
			"or non-directory inode",
			(unsigned long long)dir, (int)(klen - ID_KEY_LEN), k + ID_KEY_LEN);
	else if (d.seq < NS_COOKIE_FIRST || d.seq >= p->next_seq)
		problem(c, &c->res->index_mismatches,
			"dir %llu: entry '%.*s' has cookie "
			"%llu outside [3, %llu)",
			(unsigned long long)dir, (int)(klen - ID_KEY_LEN), k + ID_KEY_LEN,
			(unsigned long long)d.seq, (unsigned long long)p->next_seq);
	l.child = d.ino;
	rc = check_index_of(c, dir, k + ID_KEY_LEN, klen - ID_KEY_LEN, &d, &l);
	if (!rc && !l.type)
		rc = type_of(c, d.ino, &l.type);
	return rc ? rc : links_push(&c->by_parent, &l);
}

/* ---- 2. index entries ------------------------------------------------ */

static int check_index(struct checker *c, uint8_t prefix, const uint8_t *k, size_t klen,
		       const uint8_t *v, size_t vlen)
{
	uint64_t dir = get_be64(k + 1), ino;
	struct dirent_rec d;
	const char *name;
	size_t len;
	uint8_t type;
	int rc;

	if (klen != INDEX_KEY_LEN || index_decode(v, vlen, &ino, &type, &name, &len)) {
		problem(c, &c->res->bad_records, "dir %llu: malformed index entry",
			(unsigned long long)dir);
		return 0;
	}
	rc = dirent_get(c->s, dir, name, len, &d);
	if (rc && rc != -ENOENT)
		return rc;
	if (rc || d.ino != ino || d.seq != get_be64(k + ID_KEY_LEN))
		problem(c, &c->res->index_mismatches,
			"dir %llu: index entry %llu ('%.*s') "
			"without its entry",
			(unsigned long long)dir, (unsigned long long)get_be64(k + ID_KEY_LEN),
			(int)len, name);
	return 0;
}

/* ---- 3. reachability ------------------------------------------------- */

static int walk_from_root(struct checker *c)
{
	uint64_t *queue = malloc((c->by_child.n + 1) * sizeof(*queue));
	size_t head = 0, tail = 0;

	if (!queue)
		return -ENOMEM;
	queue[tail++] = NS_ROOT_INO;
	while (head < tail) {
		uint64_t dir = queue[head++];

		for (size_t i = lower_bound(&c->by_parent, dir, false);
		     i < c->by_parent.n && c->by_parent.v[i].parent == dir; i++) {
			const struct link *l = &c->by_parent.v[i];
			size_t j = lower_bound(&c->by_child, l->child, true);

			if (j == c->by_child.n || c->by_child.v[j].reached)
				continue;
			c->by_child.v[j].reached = true;
			if (l->type == NS_DIR && l->child != NS_ROOT_INO)
				queue[tail++] = l->child;
		}
	}
	free(queue);
	return 0;
}

/* ---- 4. inodes ------------------------------------------------------- */

/* How many entries a directory has, and how many of them are directories. */
static size_t count_children(const struct checker *c, uint64_t dir, uint64_t *subdirs)
{
	size_t n = 0;

	*subdirs = 0;
	for (size_t i = lower_bound(&c->by_parent, dir, false);
	     i < c->by_parent.n && c->by_parent.v[i].parent == dir; i++, n++)
		*subdirs += c->by_parent.v[i].type == NS_DIR;
	return n;
}

static void check_dir_links(struct checker *c, const struct ns_inode *r, size_t first, size_t names)
{
	uint64_t subdirs, entries = count_children(c, r->ino, &subdirs);
	unsigned long long ino = r->ino;
	bool root = r->ino == NS_ROOT_INO;

	/* No name at all is an orphan, reported as such. */
	if (names > (root ? 0 : 1))
		problem(c, &c->res->bad_links, "dir %llu: %zu names", ino, names);
	else if (root && r->parent != NS_ROOT_INO)
		problem(c, &c->res->bad_links, "root: parent %llu", (unsigned long long)r->parent);
	else if (names && c->by_child.v[first].parent != r->parent)
		problem(c, &c->res->bad_links, "dir %llu: parent %llu, but named in %llu", ino,
			(unsigned long long)r->parent,
			(unsigned long long)c->by_child.v[first].parent);
	if (r->nlink != 2 + subdirs)
		problem(c, &c->res->bad_links, "dir %llu: nlink %u, %llu subdirectories", ino,
			r->nlink, (unsigned long long)subdirs);
	if (r->nentries != entries)
		problem(c, &c->res->bad_links, "dir %llu: %llu entries counted, %llu found", ino,
			(unsigned long long)r->nentries, (unsigned long long)entries);
}

/* 1 if the key is there with length want (any length if want < 0). */
static int has_key(struct checker *c, uint8_t type, uint64_t ino, long want)
{
	uint8_t k[ID_KEY_LEN];
	size_t vlen;
	char *v;
	int rc = db_get(c->s, k, key_id(k, type, ino), &v, &vlen);

	if (rc)
		return rc;
	rc = v && (want < 0 || vlen == (size_t)want);
	rocksdb_free(v);
	return rc;
}

/* The keys the record's type and flags promise. */
static int check_extras(struct checker *c, const struct ns_inode *r)
{
	unsigned long long ino = r->ino;
	int rc = 1;

	if (r->type == NS_LNK)
		rc = has_key(c, K_SYMLINK, r->ino, (long)r->size);
	else if (r->type == NS_REG && (r->flags & IF_OBJECTS))
		rc = has_key(c, K_MAP, r->ino, -1);
	else if (r->type == NS_REG && r->inline_len)
		rc = has_key(c, K_DATA, r->ino, r->inline_len);
	else if (r->type == NS_DIR && (r->flags & IF_JUNCTION))
		rc = has_key(c, K_JUNCTION, r->ino, -1);
	if (rc == 0)
		problem(c, &c->res->bad_records,
			"inode %llu: target, map, inline data or junction "
			"missing or of the wrong length",
			ino);
	if (r->type == NS_REG && r->inline_len > r->size)
		problem(c, &c->res->bad_records, "inode %llu: %u inline bytes, size %llu", ino,
			r->inline_len, (unsigned long long)r->size);
	return rc < 0 ? rc : 0;
}

static int check_inode(struct checker *c, const struct ns_inode *r)
{
	size_t first = lower_bound(&c->by_child, r->ino, true), names = 0;
	bool reached = false;

	for (size_t i = first; i < c->by_child.n && c->by_child.v[i].child == r->ino; i++) {
		c->by_child.v[i].matched = true;
		reached |= c->by_child.v[i].reached;
		if (c->by_child.v[i].type != r->type)
			problem(c, &c->res->index_mismatches,
				"inode %llu: index says type %u, "
				"inode %u",
				(unsigned long long)r->ino, c->by_child.v[i].type, r->type);
		names++;
	}
	if (r->ino != NS_ROOT_INO && !reached)
		problem(c, &c->res->orphans, "inode %llu: %s", (unsigned long long)r->ino,
			names ? "no path from the root reaches it" : "no name");
	if (r->type == NS_DIR)
		check_dir_links(c, r, first, names);
	else if (r->nlink != names)
		problem(c, &c->res->bad_links, "inode %llu: nlink %u, %zu names",
			(unsigned long long)r->ino, r->nlink, names);
	if (r->type == NS_REG) {
		c->bytes += r->size;
		c->inline_bytes += r->inline_len;
	}
	if (owner_sums_add(&c->owners, r))
		return -ENOMEM;
	return check_extras(c, r);
}

static int visit_inode(struct checker *c, uint8_t type, const uint8_t *k, size_t klen,
		       const uint8_t *v, size_t vlen)
{
	struct ns_inode r;

	if (klen != ID_KEY_LEN || inode_decode(get_be64(k + 1), v, vlen, &r)) {
		problem(c, &c->res->bad_records, "malformed inode record");
		return 0;
	}
	c->res->inodes++;
	note_id(c, r.ino);
	c->saw_root |= r.ino == NS_ROOT_INO && r.type == NS_DIR;
	return check_inode(c, &r);
}

static int scan_inodes(struct checker *c)
{
	int rc = scan_prefix(c, K_INODE, visit_inode);

	if (!rc && !c->saw_root)
		problem(c, &c->res->bad_records, "no root directory");
	return rc;
}

/* ---- 5. names of missing inodes -------------------------------------- */

static void check_dangling(struct checker *c)
{
	for (size_t i = 0; i < c->by_child.n; i++) {
		const struct link *l = &c->by_child.v[i];

		if (!l->matched)
			problem(c, &c->res->dangling_dirents,
				"dir %llu: entry for missing inode "
				"%llu",
				(unsigned long long)l->parent, (unsigned long long)l->child);
	}
}

/* ---- 6. per-inode keys and intents ----------------------------------- */

bool inode_owns_key(const struct ns_inode *r, uint8_t type)
{
	/* Any inode may have a policy; a missing inode's is an orphan. */
	if (type == K_POLICY)
		return true;
	if (type == K_JUNCTION)
		return r->type == NS_DIR && (r->flags & IF_JUNCTION);
	if (type == K_SYMLINK)
		return r->type == NS_LNK;
	if (type == K_MAP || type == K_DAMAGE)
		return r->type == NS_REG && (r->flags & IF_OBJECTS);
	return r->type == NS_REG && !(r->flags & IF_OBJECTS) && r->inline_len;
}

static int check_owned(struct checker *c, uint8_t type, uint64_t ino)
{
	struct ns_inode r;
	int rc = load(c, ino, &r);

	if (rc == BAD)
		return 0;
	if (rc && rc != -ESTALE)
		return rc;
	if (rc || !inode_owns_key(&r, type))
		problem(c, &c->res->stray_keys, "'%c' key of inode %llu, which %s", type,
			(unsigned long long)ino, rc ? "does not exist" : "should not have one");
	return 0;
}

static int visit_owned(struct checker *c, uint8_t type, const uint8_t *k, size_t klen,
		       const uint8_t *v, size_t vlen)
{
	if (klen != ID_KEY_LEN) {
		problem(c, &c->res->bad_records, "malformed '%c' key", type);
		return 0;
	}
	return check_owned(c, type, get_be64(k + 1));
}

static int visit_damage(struct checker *c, uint8_t type, const uint8_t *k, size_t klen,
			const uint8_t *v, size_t vlen)
{
	struct ns_damage dr;

	if (damage_decode(k, klen, v, vlen, &dr)) {
		problem(c, &c->res->bad_records, "malformed damage record");
		return 0;
	}
	return check_owned(c, type, dr.ino);
}

static int visit_intent(struct checker *c, uint8_t type, const uint8_t *k, size_t klen,
			const uint8_t *v, size_t vlen)
{
	struct ns_intent in;

	if (klen != ID_KEY_LEN || intent_decode(get_be64(k + 1), v, vlen, &in))
		problem(c, &c->res->bad_records, "malformed intent");
	else
		note_id(c, in.id);
	return 0;
}

/* ---- 7. counters ----------------------------------------------------- */

static int check_counter(struct checker *c, uint8_t which, uint64_t want, const char *what)
{
	uint8_t k[2];
	uint64_t have;
	int rc = db_get_u64(c->s, k, key_counter(k, which), &have);

	if (!rc && have != want)
		problem(c, &c->res->bad_counters, "%s counter %llu, counted %llu", what,
			(unsigned long long)have, (unsigned long long)want);
	return rc;
}

static void bad_owner(void *arg, const char *msg)
{
	struct checker *c = arg;

	problem(c, &c->res->bad_counters, "%s", msg);
}

static int check_counters(struct checker *c)
{
	uint8_t k = K_NEXT;
	uint64_t next, nbad;
	int rc = check_counter(c, C_INODES, c->res->inodes, "inode");

	if (!rc)
		rc = check_counter(c, C_BYTES, c->bytes, "bytes");
	if (!rc)
		rc = check_counter(c, C_INLINE, c->inline_bytes, "inline bytes");
	if (!rc)
		rc = db_get_u64(c->s, &k, 1, &next);
	if (!rc && next <= c->max_id)
		problem(c, &c->res->bad_counters, "next id %llu, but id %llu is in use",
			(unsigned long long)next, (unsigned long long)c->max_id);
	return rc ? rc : owner_sums_compare(c->s, &c->owners, bad_owner, c, &nbad);
}

/* ---- the whole check ------------------------------------------------- */

static int sort_by_child(struct checker *c)
{
	size_t n = c->by_parent.n;

	c->by_child.v = malloc((n ? n : 1) * sizeof(struct link));
	if (!c->by_child.v)
		return -ENOMEM;
	if (n) /* an empty store never allocated by_parent.v */
		memcpy(c->by_child.v, c->by_parent.v, n * sizeof(struct link));
	c->by_child.n = c->by_child.cap = n;
	qsort(c->by_child.v, n, sizeof(struct link), cmp_child);
	return 0;
}

int ns_check(struct ns_store *s, ns_check_say_fn say, void *arg, struct ns_check_result *res)
{
	struct checker c = { .s = s, .say = say, .arg = arg, .res = res };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = scan_prefix(&c, K_DIRENT, check_entry);
	if (!rc)
		rc = scan_prefix(&c, K_INDEX, check_index);
	if (!rc)
		rc = sort_by_child(&c);
	if (!rc)
		rc = walk_from_root(&c);
	if (!rc)
		rc = scan_inodes(&c);
	if (!rc)
		check_dangling(&c);
	if (!rc)
		rc = scan_prefix(&c, K_DATA, visit_owned);
	if (!rc)
		rc = scan_prefix(&c, K_MAP, visit_owned);
	if (!rc)
		rc = scan_prefix(&c, K_SYMLINK, visit_owned);
	if (!rc)
		rc = scan_prefix(&c, K_POLICY, visit_owned);
	if (!rc)
		rc = scan_prefix(&c, K_JUNCTION, visit_owned);
	if (!rc)
		rc = scan_prefix(&c, K_DAMAGE, visit_damage);
	if (!rc)
		rc = scan_prefix(&c, K_INTENT, visit_intent);
	if (!rc)
		rc = check_counters(&c);
	free(c.by_parent.v);
	free(c.by_child.v);
	owner_sums_free(&c.owners);
	return rc;
}
