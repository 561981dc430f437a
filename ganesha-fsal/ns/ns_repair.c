/* Repair: fixes what ns_check finds, for pando-fsck --repair.
 *
 * What the repair trusts, and what it rebuilds from it:
 *   - inode records ('I') say what exists: an undecodable one is deleted
 *     (its names then dangle), a missing root is made anew, empty;
 *   - directory entries ('D') say what is named: the readdir index ('R')
 *     is rebuilt from them, except that an index entry whose entry is gone
 *     gives the name back when it is free (it holds all the entry held);
 *   - link counts, entry counts, parents, next cookies, the statfs
 *     counters and the next id are derived, so they are recomputed.
 * Names of missing inodes go; a directory named twice keeps the name its
 * parent field agrees with; inodes no path from the root reaches go into
 * /lost+found as "#<ino>" (a cycle by moving one of its directories).
 * Data, targets and maps of inodes that should not have them are deleted,
 * a map by handing it to a removal intent, so its objects are removed
 * rather than leaked.
 *
 * Passes, each a walk over one or two key types, in an order where each
 * leaves the next a store it can rely on:
 *   0. the next id, above every id in use before anything gets a new one
 *   1. inode records with their target and inline data; intents; the root
 *   2. stray data, targets, maps and policies
 *   3. the readdir index against the entries
 *   4. the entries against their directory, inode and index entry
 *   5. names of directories, reachability, /lost+found
 *   6. link and entry counts, parents, the statfs counters
 * Each fix is written when found, unsynced, and all made durable at the
 * end: a crash in between leaves a store the next run repairs. */
#include "ns_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"

#define LOST_FOUND "lost+found"
/* "#<ino>.<n>" when "#<ino>" is taken: enough tries for any real case. */
#define NAME_TRIES 1000

/* The namespace as a graph, for pass 5 and 6: inodes sorted by id, names
 * sorted by directory (key order) and by inode. */
struct node {
	uint64_t ino;
	uint32_t mark;          /* which chain of parents the cycle search is on */
	uint8_t type;
	bool reached;
};

struct edge {
	uint64_t parent;
	uint64_t child;
	uint64_t seq;           /* the entry's cookie: its index key names it */
};

struct repairer {
	struct ns_store *s;
	ns_check_say_fn say;
	void *arg;
	struct ns_check_result *res;
	uint64_t max_id;        /* pass 0: the highest inode or intent id */
	/* pass 4: the directory whose entries are being read */
	uint64_t run_dir;
	bool run_ok;
	struct ns_inode run;
	/* passes 5 and 6 */
	struct node *nodes;
	size_t nnodes, nodes_cap;
	struct edge *by_parent, *by_child;
	size_t nedges, edges_cap;
	uint64_t lost_found;
	/* pass 6: the statfs counters, counted */
	uint64_t inodes, bytes, inline_bytes;
};

/* An index entry's value, decoded, its name copied out. */
struct index_ent {
	uint64_t ino;
	uint8_t type;
	size_t len;
	char name[NS_NAME_MAX + 1];
};

static void say(struct repairer *r, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void say(struct repairer *r, const char *fmt, va_list ap)
{
	char msg[512];

	if (!r->say)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	r->say(r->arg, msg);
}

static void fixed(struct repairer *r, uint64_t *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fixed(struct repairer *r, uint64_t *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	r->res->problems++;
	va_start(ap, fmt);
	say(r, fmt, ap);
	va_end(ap);
}

static void note(struct repairer *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct repairer *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, fmt, ap);
	va_end(ap);
}

/* ---- progress, and the walk every pass makes --------------------------- */

static const char *kind_of(uint8_t type)
{
	switch (type) {
	case K_INODE: return "inodes";
	case K_DIRENT: return "entries";
	case K_INDEX: return "index entries";
	case K_DATA: return "inline data";
	case K_SYMLINK: return "symlink targets";
	case K_MAP: return "maps";
	case K_INTENT: return "intents";
	default: return "keys";
	}
}

void walk_progress(struct ns_store *s, uint8_t type, uint64_t n)
{
	if (s->progress && n % NS_PROGRESS_EVERY == 0)
		s->progress(s->progress_arg, kind_of(type), n);
}

void ns_set_progress(struct ns_store *s, ns_progress_fn fn, void *arg)
{
	s->progress = fn;
	s->progress_arg = arg;
}

typedef int (*visit_fn)(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			size_t vlen);

/* The iterator reads one snapshot, so fixes written meanwhile (to the keys
 * it walks, too) never disturb it. */
static int walk(struct repairer *r, uint8_t type, visit_fn visit)
{
	struct db_iter i;
	uint64_t n = 0;
	int rc = 0;

	iter_open_prefix(r->s, &i, &type, 1);
	for (; !rc && iter_valid(&i); iter_next(&i)) {
		size_t klen, vlen;
		const uint8_t *k = iter_key(&i, &klen), *v = iter_value(&i, &vlen);

		walk_progress(r->s, type, ++n);
		rc = visit(r, k, klen, v, vlen);
	}
	return iter_close(r->s, &i) ? -EIO : rc;
}

/* ---- writes ------------------------------------------------------------ */

static int del_key(struct repairer *r, const uint8_t *k, size_t klen)
{
	char *err = NULL;

	rocksdb_delete(r->s->db, r->s->wopts, (const char *)k, klen, &err);
	return err ? db_err(r->s, "delete", err) : 0;
}

static int put_key(struct repairer *r, const uint8_t *k, size_t klen, const void *v,
		   size_t vlen)
{
	char *err = NULL;

	rocksdb_put(r->s->db, r->s->wopts, (const char *)k, klen, v, vlen, &err);
	return err ? db_err(r->s, "put", err) : 0;
}

static int put_inode(struct repairer *r, const struct ns_inode *rec)
{
	uint8_t k[ID_KEY_LEN], v[INODE_REC_LEN];

	inode_encode(rec, v);
	return put_key(r, k, key_id(k, K_INODE, rec->ino), v, sizeof(v));
}

static int del_inode(struct repairer *r, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];

	return del_key(r, k, key_id(k, K_INODE, ino));
}

/* A key's value length; *found false when it is absent. */
static int value_len(struct repairer *r, uint8_t type, uint64_t ino, size_t *len, bool *found)
{
	uint8_t k[ID_KEY_LEN];
	char *v;
	int rc = db_get(r->s, k, key_id(k, type, ino), &v, len);

	*found = v != NULL;
	if (!v)
		*len = 0;
	rocksdb_free(v);
	return rc;
}

static int index_get(struct repairer *r, uint64_t dir, uint64_t seq, struct index_ent *ie,
		     bool *found)
{
	uint8_t k[INDEX_KEY_LEN];
	const char *name;
	size_t vlen;
	char *v;
	int rc = db_get(r->s, k, key_index(k, dir, seq), &v, &vlen);

	*found = false;
	if (rc || !v)
		return rc;
	*found = !index_decode((const uint8_t *)v, vlen, &ie->ino, &ie->type, &name, &ie->len);
	if (*found)
		memcpy(ie->name, name, ie->len);
	rocksdb_free(v);
	return 0;
}

static bool index_names(const struct index_ent *ie, uint64_t ino, const char *name,
			size_t len)
{
	return ie->ino == ino && ie->len == len && memcmp(ie->name, name, len) == 0;
}

/* ---- 0. the next id ---------------------------------------------------- */

uint64_t ns_next_id(struct ns_store *s)
{
	return atomic_load(&s->next_id);
}

int ns_ids_raise(struct ns_store *s, uint64_t next)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint64_t cur = atomic_load(&s->next_id), seq;
	int rc;

	while (cur < next && !atomic_compare_exchange_weak(&s->next_id, &cur, next))
		;
	/* A max merge: ids handed out meanwhile keep it where they put it. */
	merge_next_id(b, cur > next ? cur : next);
	rc = db_write(s, b, &seq);
	rocksdb_writebatch_destroy(b);
	return rc ? rc : sync_upto(s, seq);
}

static int visit_max_id(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			size_t vlen)
{
	if (klen == ID_KEY_LEN && get_be64(k + 1) > r->max_id)
		r->max_id = get_be64(k + 1);
	return 0;
}

/* Before anything is made (lost+found, intents): a new id must not be one
 * in use. */
static int fix_next_id(struct repairer *r)
{
	uint8_t k = K_NEXT;
	uint64_t stored;
	int rc = walk(r, K_INODE, visit_max_id);

	if (!rc)
		rc = walk(r, K_INTENT, visit_max_id);
	if (!rc)
		rc = db_get_u64(r->s, &k, 1, &stored);
	if (rc || stored > r->max_id)
		return rc;
	fixed(r, &r->res->bad_counters, "next id %llu, but id %llu is in use: raised",
	      (unsigned long long)stored, (unsigned long long)r->max_id);
	return ns_ids_raise(r->s, r->max_id + 1);
}

/* ---- 1. records -------------------------------------------------------- */

/* A symlink's size is its target's length; without a target it is
 * nothing, and goes (its names with it, in pass 4). */
static int fix_target(struct repairer *r, struct ns_inode *rec)
{
	unsigned long long ino = rec->ino;
	size_t len;
	bool found;
	int rc = value_len(r, K_SYMLINK, rec->ino, &len, &found);

	if (rc || (found && len == rec->size))
		return rc;
	if (!found || !len) {
		fixed(r, &r->res->bad_records, "symlink %llu: no target: deleted", ino);
		return del_inode(r, rec->ino);
	}
	fixed(r, &r->res->bad_records, "symlink %llu: size %llu, target %zu bytes: size set",
	      ino, (unsigned long long)rec->size, len);
	rec->size = len;
	return put_inode(r, rec);
}

/* Inline bytes past the size can never be read: keep what can. */
static int cut_data(struct repairer *r, uint64_t ino, size_t keep)
{
	uint8_t k[ID_KEY_LEN];
	size_t klen = key_id(k, K_DATA, ino), vlen;
	char *v;
	int rc;

	if (!keep)
		return del_key(r, k, klen);
	rc = db_get(r->s, k, klen, &v, &vlen);
	if (!rc && v)
		rc = put_key(r, k, klen, v, keep);
	rocksdb_free(v);
	return rc;
}

/* An object-backed file needs its map: without it the objects cannot be
 * found (the OSD check reports them), and the file reads as zeros. */
static int fix_objects_flag(struct repairer *r, struct ns_inode *rec, bool *changed)
{
	size_t len;
	bool found;
	int rc = value_len(r, K_MAP, rec->ino, &len, &found);

	if (rc || found)
		return rc;
	fixed(r, &r->res->bad_records, "file %llu: object-backed without a map: "
	      "now inline, reading as zeros", (unsigned long long)rec->ino);
	rec->flags &= ~IF_OBJECTS;
	*changed = true;
	return 0;
}

/* An inline file's inline_len is its 'F' value's length, at most the size. */
static int fix_file(struct repairer *r, struct ns_inode *rec)
{
	bool changed = false, found;
	size_t flen, keep;
	int rc = 0;

	if (rec->flags & IF_OBJECTS)
		rc = fix_objects_flag(r, rec, &changed);
	if (rc || (rec->flags & IF_OBJECTS))
		return rc;
	rc = value_len(r, K_DATA, rec->ino, &flen, &found);
	if (rc)
		return rc;
	keep = flen < rec->size ? flen : (size_t)rec->size;
	if (keep != flen)
		rc = cut_data(r, rec->ino, keep);
	if (!rc && (keep != flen || keep != rec->inline_len)) {
		fixed(r, &r->res->bad_records, "file %llu: %u inline bytes recorded, %zu "
		      "stored, size %llu: %zu kept", (unsigned long long)rec->ino,
		      rec->inline_len, flen, (unsigned long long)rec->size, keep);
		rec->inline_len = (uint32_t)keep;
		changed = true;
	}
	return !rc && changed ? put_inode(r, rec) : rc;
}

static int visit_inode(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	unsigned long long ino = klen >= ID_KEY_LEN ? get_be64(k + 1) : 0;
	struct ns_inode rec;

	if (klen != ID_KEY_LEN || inode_decode(ino, v, vlen, &rec) ||
	    (ino == NS_ROOT_INO && rec.type != NS_DIR)) {
		fixed(r, &r->res->bad_records, "inode %llu: malformed record: deleted", ino);
		return del_key(r, k, klen);
	}
	r->res->inodes++;
	if (rec.type == NS_LNK)
		return fix_target(r, &rec);
	if (rec.type == NS_REG)
		return fix_file(r, &rec);
	return 0;
}

static int fix_root(struct repairer *r)
{
	struct ns_inode root = {
		.ino = NS_ROOT_INO, .type = NS_DIR, .mode = 0755, .nlink = 2,
		.gen = 1, .change = 1, .parent = NS_ROOT_INO, .next_seq = NS_COOKIE_FIRST,
	};
	struct ns_inode have;
	int rc = inode_load(r->s, NS_ROOT_INO, &have);

	if (rc != -ESTALE)
		return rc;
	fixed(r, &r->res->bad_records, "no root directory: made an empty one");
	clock_gettime(CLOCK_REALTIME, &root.ctime);
	root.atime = root.mtime = root.btime = root.ctime;
	return put_inode(r, &root);
}

/* An undecodable intent names nothing the repair can find: the objects it
 * meant are orphans the OSD check finds. */
static int visit_intent(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			size_t vlen)
{
	struct ns_intent in;

	if (klen == ID_KEY_LEN && !intent_decode(get_be64(k + 1), v, vlen, &in))
		return 0;
	fixed(r, &r->res->bad_records, "malformed intent: deleted");
	return del_key(r, k, klen);
}

static int fix_records(struct repairer *r)
{
	int rc = walk(r, K_INODE, visit_inode);

	if (!rc)
		rc = fix_root(r);
	return rc ? rc : walk(r, K_INTENT, visit_intent);
}

/* ---- 2. stray data, targets and maps ----------------------------------- */

/* The map goes, its objects to a removal intent, in one batch. */
static int map_to_intent(struct repairer *r, uint64_t ino, const uint8_t *k, size_t klen,
			 const uint8_t *v, size_t vlen)
{
	struct txn t;
	uint64_t id;
	int rc;

	txn_begin(&t, r->s);
	rc = txn_intent(&t, ino, v, vlen, &id);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	rocksdb_writebatch_delete(t.b, (const char *)k, klen);
	return txn_commit(&t, false);
}

static int visit_owned(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	uint64_t ino = klen >= ID_KEY_LEN ? get_be64(k + 1) : 0;
	struct ns_inode rec;
	int rc;

	if (klen != ID_KEY_LEN) {
		fixed(r, &r->res->bad_records, "malformed '%c' key: deleted", k[0]);
		return del_key(r, k, klen);
	}
	rc = inode_load(r->s, ino, &rec);
	if (rc && rc != -ESTALE)
		return rc;
	if (!rc && inode_owns_key(&rec, k[0]))
		return 0;
	fixed(r, &r->res->stray_keys, "'%c' key of inode %llu, which %s: %s", k[0],
	      (unsigned long long)ino, rc ? "does not exist" : "should not have one",
	      k[0] == K_MAP ? "its objects handed to a removal intent" : "deleted");
	if (k[0] == K_MAP)
		return map_to_intent(r, ino, k, klen, v, vlen);
	return del_key(r, k, klen);
}

/* Damage records: malformed, or of a file that no longer has objects. */
static int visit_suspect(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			 size_t vlen)
{
	struct ns_suspect sp;
	struct ns_inode rec;
	int rc;

	if (suspect_decode(k, klen, v, vlen, &sp)) {
		fixed(r, &r->res->bad_records, "malformed damage record: deleted");
		return del_key(r, k, klen);
	}
	rc = inode_load(r->s, sp.ino, &rec);
	if (rc && rc != -ESTALE)
		return rc;
	if (!rc && inode_owns_key(&rec, K_SUSPECT))
		return 0;
	fixed(r, &r->res->stray_keys, "damage record of inode %llu, which %s: deleted",
	      (unsigned long long)sp.ino, rc ? "does not exist" : "has no objects");
	return del_key(r, k, klen);
}

static int fix_strays(struct repairer *r)
{
	int rc = walk(r, K_DATA, visit_owned);

	if (!rc)
		rc = walk(r, K_SUSPECT, visit_suspect);
	if (!rc)
		rc = walk(r, K_SYMLINK, visit_owned);
	if (!rc)
		rc = walk(r, K_POLICY, visit_owned);
	return rc ? rc : walk(r, K_MAP, visit_owned);
}

/* ---- 3. the readdir index ---------------------------------------------- */

static bool dir_exists(struct repairer *r, uint64_t ino)
{
	struct ns_inode rec;

	return !inode_load(r->s, ino, &rec) && rec.type == NS_DIR;
}

static bool inode_exists(struct repairer *r, uint64_t ino)
{
	struct ns_inode rec;

	return !inode_load(r->s, ino, &rec);
}

/* The index entry holds everything its lost entry held: name, inode, cookie. */
static bool restorable(struct repairer *r, uint64_t dir, uint64_t ino, const char *name,
		       size_t len)
{
	return !memchr(name, '/', len) && !memchr(name, '\0', len) &&
	       dir_exists(r, dir) && inode_exists(r, ino);
}

static int visit_index(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	unsigned long long dir = klen >= ID_KEY_LEN ? get_be64(k + 1) : 0, seq;
	uint8_t dk[KEY_MAX], dv[DIRENT_REC_LEN];
	struct dirent_rec d;
	const char *name;
	uint64_t ino;
	uint8_t type;
	size_t len;
	int rc;

	if (klen != INDEX_KEY_LEN || index_decode(v, vlen, &ino, &type, &name, &len)) {
		fixed(r, &r->res->bad_records, "dir %llu: malformed index entry: deleted", dir);
		return del_key(r, k, klen);
	}
	seq = get_be64(k + ID_KEY_LEN);
	rc = dirent_get(r->s, dir, name, len, &d);
	if (!rc && d.ino == ino && d.seq == seq)
		return 0;
	if (rc && rc != -ENOENT)
		return rc;
	if (rc == -ENOENT && restorable(r, dir, ino, name, len)) {
		fixed(r, &r->res->index_mismatches, "dir %llu: entry '%.*s' (cookie %llu) "
		      "restored from its index entry", dir, (int)len, name, seq);
		d = (struct dirent_rec){ .ino = ino, .seq = seq };
		dirent_encode(&d, dv);
		return put_key(r, dk, key_dirent(dk, dir, name, len), dv, sizeof(dv));
	}
	fixed(r, &r->res->index_mismatches, "dir %llu: index entry %llu ('%.*s') without "
	      "its entry: deleted", dir, seq, (int)len, name);
	return del_key(r, k, klen);
}

/* ---- 4. entries -------------------------------------------------------- */

/* The directory of a run of entries, loaded once per run. */
static int run_load(struct repairer *r, uint64_t dir)
{
	int rc;

	if (r->run_dir == dir)
		return 0;
	r->run_dir = dir;
	rc = inode_load(r->s, dir, &r->run);
	r->run_ok = !rc && r->run.type == NS_DIR;
	return rc == -ESTALE ? 0 : rc;
}

/* Deletes an entry, and its index entry if that still names it. */
static int del_entry(struct repairer *r, uint64_t dir, const char *name, size_t len,
		     const struct dirent_rec *d)
{
	uint8_t k[KEY_MAX];
	struct index_ent ie;
	bool found;
	int rc = index_get(r, dir, d->seq, &ie, &found);

	if (!rc && found && index_names(&ie, d->ino, name, len))
		rc = del_key(r, k, key_index(k, dir, d->seq));
	return rc ? rc : del_key(r, k, key_dirent(k, dir, name, len));
}

/* Writes the entry and its index entry in one batch. */
static int put_entry(struct repairer *r, uint64_t dir, const char *name, size_t len,
		     const struct dirent_rec *d, uint8_t type)
{
	struct txn t;

	txn_begin(&t, r->s);
	dirent_put(&t, dir, name, len, d, type);
	return txn_commit(&t, false);
}

/* The entry's cookie must be in [3, next_seq) and its index entry its own;
 * one taken by another entry or out of range gets a new one. */
static int fix_cookie(struct repairer *r, const char *name, size_t len,
		      struct dirent_rec *d, uint8_t type)
{
	struct ns_inode *dir = &r->run;
	unsigned long long ino = dir->ino, seq = d->seq;
	struct index_ent ie;
	bool found, other;
	int rc = index_get(r, dir->ino, d->seq, &ie, &found);

	if (rc)
		return rc;
	other = found && !index_names(&ie, d->ino, name, len);
	if (d->seq < NS_COOKIE_FIRST || d->seq == UINT64_MAX || other) {
		fixed(r, &r->res->index_mismatches, "dir %llu: entry '%.*s': cookie %llu %s: "
		      "now %llu", ino, (int)len, name, seq, other ? "is another entry's" :
		      "out of range", (unsigned long long)dir->next_seq);
		d->seq = dir->next_seq++;
		rc = put_inode(r, dir);
		return rc ? rc : put_entry(r, dir->ino, name, len, d, type);
	}
	if (d->seq >= dir->next_seq) {
		fixed(r, &r->res->index_mismatches, "dir %llu: entry '%.*s' has cookie %llu, "
		      "next cookie %llu: raised", ino, (int)len, name, seq,
		      (unsigned long long)dir->next_seq);
		dir->next_seq = d->seq + 1;
		rc = put_inode(r, dir);
	}
	if (!rc && (!found || ie.type != type)) {
		fixed(r, &r->res->index_mismatches, "dir %llu: entry '%.*s': index entry %s: "
		      "rewritten", ino, (int)len, name, found ? "of another type" : "missing");
		rc = put_entry(r, dir->ino, name, len, d, type);
	}
	return rc;
}

static int visit_entry(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	unsigned long long dir = klen >= ID_KEY_LEN ? get_be64(k + 1) : 0;
	const char *name = (const char *)k + ID_KEY_LEN;
	struct ns_inode child;
	struct dirent_rec d;
	int len, rc;

	if (klen <= ID_KEY_LEN || klen > ID_KEY_LEN + NS_NAME_MAX || dirent_decode(v, vlen, &d)) {
		fixed(r, &r->res->bad_records, "dir %llu: malformed entry: deleted", dir);
		return del_key(r, k, klen);
	}
	len = (int)(klen - ID_KEY_LEN);
	r->res->dirents++;
	rc = run_load(r, dir);
	if (!rc && r->run_ok)
		rc = inode_load(r->s, d.ino, &child);
	if (rc && rc != -ESTALE)
		return rc;
	if (!r->run_ok || rc) {
		fixed(r, &r->res->dangling_dirents, "dir %llu: entry '%.*s' %s %llu: removed",
		      dir, len, name, r->run_ok ? "names missing inode" : "in a missing or "
		      "non-directory inode, naming", (unsigned long long)d.ino);
		return del_entry(r, dir, name, (size_t)len, &d);
	}
	return fix_cookie(r, name, (size_t)len, &d, child.type);
}

/* ---- 5. the tree ------------------------------------------------------- */

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	p = realloc(*v, ncap * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

static int visit_node(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		      size_t vlen)
{
	struct ns_inode rec;
	int rc;

	/* Pass 1 left only good records. */
	if (klen != ID_KEY_LEN || inode_decode(get_be64(k + 1), v, vlen, &rec))
		return -EIO;
	rc = grow((void **)&r->nodes, &r->nodes_cap, r->nnodes, sizeof(*r->nodes));
	if (!rc)
		r->nodes[r->nnodes++] = (struct node){ .ino = rec.ino, .type = rec.type };
	return rc;
}

static int visit_edge(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		      size_t vlen)
{
	struct dirent_rec d;
	int rc;

	/* Pass 4 left only good entries. */
	if (klen <= ID_KEY_LEN || dirent_decode(v, vlen, &d))
		return -EIO;
	rc = grow((void **)&r->by_parent, &r->edges_cap, r->nedges, sizeof(*r->by_parent));
	if (!rc)
		r->by_parent[r->nedges++] = (struct edge){
			.parent = get_be64(k + 1), .child = d.ino, .seq = d.seq,
		};
	return rc;
}

static int cmp_child(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->child < y->child ? -1 : x->child > y->child;
}

static int graph_load(struct repairer *r)
{
	int rc;

	r->nnodes = r->nedges = 0;
	rc = walk(r, K_INODE, visit_node);
	if (!rc)
		rc = walk(r, K_DIRENT, visit_edge);
	if (rc)
		return rc;
	free(r->by_child);
	r->by_child = malloc((r->nedges ? r->nedges : 1) * sizeof(*r->by_child));
	if (!r->by_child)
		return -ENOMEM;
	memcpy(r->by_child, r->by_parent, r->nedges * sizeof(*r->by_child));
	qsort(r->by_child, r->nedges, sizeof(*r->by_child), cmp_child);
	return 0;
}

static void graph_free(struct repairer *r)
{
	free(r->nodes);
	free(r->by_parent);
	free(r->by_child);
}

/* The first edge whose parent (by_parent) or child (by_child) is >= id. */
static size_t edge_lower(const struct edge *v, size_t n, uint64_t id, bool by_child)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((by_child ? v[mid].child : v[mid].parent) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The names of ino: by_child[*first .. return). */
static size_t names_of(const struct repairer *r, uint64_t ino, size_t *first)
{
	size_t i = *first = edge_lower(r->by_child, r->nedges, ino, true);

	while (i < r->nedges && r->by_child[i].child == ino)
		i++;
	return i;
}

static struct node *node_find(struct repairer *r, uint64_t ino)
{
	size_t lo = 0, hi = r->nnodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->nodes[mid].ino == ino)
			return &r->nodes[mid];
		if (r->nodes[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Removes the name an edge stands for (pass 4 left each its index entry). */
static int drop_name(struct repairer *r, const struct edge *e)
{
	struct dirent_rec d = { .ino = e->child, .seq = e->seq };
	struct index_ent ie;
	bool found;
	int rc = index_get(r, e->parent, e->seq, &ie, &found);

	if (rc || !found)
		return rc ? rc : -EIO;
	fixed(r, &r->res->bad_links, "dir %llu: its name '%.*s' in dir %llu is one too many: "
	      "removed", (unsigned long long)e->child, (int)ie.len, ie.name,
	      (unsigned long long)e->parent);
	return del_entry(r, e->parent, ie.name, ie.len, &d);
}

/* A directory has one name (the root none): keep the one its parent field
 * agrees with, or the first. */
static int keep_one_name(struct repairer *r, uint64_t dir, size_t first, size_t end)
{
	struct ns_inode rec;
	size_t keep = first;
	int rc = inode_load(r->s, dir, &rec);

	if (dir == NS_ROOT_INO)
		keep = end;
	for (size_t i = first; !rc && dir != NS_ROOT_INO && i < end; i++) {
		if (r->by_child[i].parent == rec.parent) {
			keep = i;
			break;
		}
	}
	for (size_t i = first; !rc && i < end; i++) {
		if (i != keep)
			rc = drop_name(r, &r->by_child[i]);
	}
	return rc;
}

static int drop_extra_names(struct repairer *r, bool *changed)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < r->nedges;) {
		uint64_t child = r->by_child[i].child;
		const struct node *n = node_find(r, child);
		size_t first, end = names_of(r, child, &first);

		if (n && n->type == NS_DIR && (child == NS_ROOT_INO || end - first > 1)) {
			rc = keep_one_name(r, child, first, end);
			*changed = true;
		}
		i = end;
	}
	return rc;
}

static int graph_walk(struct repairer *r)
{
	uint64_t *queue = malloc((r->nnodes + 1) * sizeof(*queue));
	size_t head = 0, tail = 0;
	struct node *root = node_find(r, NS_ROOT_INO);

	if (!queue)
		return -ENOMEM;
	if (root)
		root->reached = true;
	queue[tail++] = NS_ROOT_INO;
	while (head < tail) {
		uint64_t dir = queue[head++];

		for (size_t i = edge_lower(r->by_parent, r->nedges, dir, false);
		     i < r->nedges && r->by_parent[i].parent == dir; i++) {
			struct node *n = node_find(r, r->by_parent[i].child);

			if (!n || n->reached)
				continue;
			n->reached = true;
			if (n->type == NS_DIR)
				queue[tail++] = n->ino;
		}
	}
	free(queue);
	return 0;
}

static int lost_found(struct repairer *r)
{
	static const struct ns_new mode = { .mode = 0700 };
	struct ns_attr a;
	int rc;

	if (r->lost_found)
		return 0;
	rc = ns_lookup(r->s, NS_ROOT_INO, LOST_FOUND, &a);
	if (rc == -ENOENT) {
		rc = ns_mkdir(r->s, NS_ROOT_INO, LOST_FOUND, &mode, &a);
		if (!rc)
			note(r, "created /" LOST_FOUND);
	}
	if (!rc && a.type != NS_DIR) {
		note(r, "/" LOST_FOUND " is not a directory: move it away and run again");
		rc = -ENOTDIR;
	}
	if (!rc)
		r->lost_found = a.ino;
	return rc;
}

static int free_name(struct repairer *r, uint64_t ino, char *name, size_t cap, size_t *len)
{
	int rc = -EEXIST;

	for (unsigned n = 0; rc == -EEXIST && n < NAME_TRIES; n++) {
		int w = n ? snprintf(name, cap, "#%llu.%u", (unsigned long long)ino, n) :
			    snprintf(name, cap, "#%llu", (unsigned long long)ino);

		*len = (size_t)w;
		rc = dirent_absent(r->s, r->lost_found, name, *len);
	}
	return rc;
}

/* A txn deletes what it leaves with no link: the counts are recomputed in
 * pass 6, here they only have to keep everything alive. */
static void keep_linked(struct ns_inode *x)
{
	uint32_t min = x->type == NS_DIR ? 2 : 1;

	if (x->nlink < min)
		x->nlink = min;
}

/* Links ino into /lost+found under name; old: the name it had (a cycle's
 * directory), which goes in the same batch. */
static int move_into(struct repairer *r, uint64_t ino, const struct edge *old,
		     const struct index_ent *oname, const char *name, size_t len)
{
	uint64_t inos[3] = { r->lost_found, ino, old ? old->parent : ino };
	struct ns_inode *lf, *x, *p = NULL;
	struct txn t;
	int rc;

	txn_begin(&t, r->s);
	txn_lock(&t, inos, 3);
	rc = txn_dir(&t, r->lost_found, &lf);
	if (!rc)
		rc = txn_inode(&t, ino, &x);
	if (!rc && old)
		rc = txn_dir(&t, old->parent, &p);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	if (p)
		dirent_del(&t, p, oname->name, oname->len,
			   &(struct dirent_rec){ .ino = ino, .seq = old->seq }, x->type);
	dirent_add(&t, lf, name, len, x);
	if (x->type == NS_DIR)
		x->parent = lf->ino;
	keep_linked(x);
	keep_linked(lf);
	if (p)
		keep_linked(p);
	return txn_commit(&t, false);
}

static int adopt(struct repairer *r, uint64_t ino, const struct edge *old)
{
	char name[48];
	struct index_ent oname;
	bool found = true;
	size_t len;
	int rc = lost_found(r);

	if (!rc)
		rc = free_name(r, ino, name, sizeof(name), &len);
	if (!rc && old)
		rc = index_get(r, old->parent, old->seq, &oname, &found);
	if (!rc && !found)
		rc = -EIO;
	if (rc)
		return rc;
	fixed(r, &r->res->orphans, "inode %llu: %s: linked into /" LOST_FOUND " as '%s'",
	      (unsigned long long)ino, old ? "in a cycle no path from the root reaches" :
	      "no name", name);
	return move_into(r, ino, old, &oname, name, len);
}

static const struct edge *first_name(struct repairer *r, uint64_t ino)
{
	size_t first, end = names_of(r, ino, &first);

	return first < end ? &r->by_child[first] : NULL;
}

static int adopt_unnamed(struct repairer *r, bool *changed)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < r->nnodes; i++) {
		const struct node *n = &r->nodes[i];

		if (!n->reached && !first_name(r, n->ino)) {
			rc = adopt(r, n->ino, NULL);
			*changed = true;
		}
	}
	return rc;
}

/* Every unreached inode left has a name in an unreached directory; going
 * up from one, names lead into a cycle: move the directory where the way
 * up first comes back to itself. */
static int break_cycles(struct repairer *r, bool *changed)
{
	uint32_t stamp = 0;
	int rc = 0;

	for (size_t i = 0; !rc && i < r->nnodes; i++) {
		struct node *n = &r->nodes[i];

		if (n->reached || n->mark)
			continue;
		stamp++;
		while (n && !n->reached && !n->mark) {
			const struct edge *e = first_name(r, n->ino);

			n->mark = stamp;
			n = e ? node_find(r, e->parent) : NULL;
		}
		if (n && !n->reached && n->mark == stamp) {
			rc = adopt(r, n->ino, first_name(r, n->ino));
			*changed = true;
		}
	}
	return rc;
}

/* Loads the graph until a look at it finds nothing to change; it then
 * stays loaded for pass 6. */
static int fix_tree(struct repairer *r)
{
	for (;;) {
		bool changed = false;
		int rc = graph_load(r);

		if (!rc)
			rc = drop_extra_names(r, &changed);
		if (!rc && !changed)
			rc = graph_walk(r);
		if (!rc && !changed)
			rc = adopt_unnamed(r, &changed);
		if (!rc && !changed)
			rc = break_cycles(r, &changed);
		if (rc || !changed)
			return rc;
	}
}

/* ---- 6. counts --------------------------------------------------------- */

static void count_dir(struct repairer *r, uint64_t dir, uint64_t *entries, uint64_t *subdirs)
{
	*entries = *subdirs = 0;
	for (size_t i = edge_lower(r->by_parent, r->nedges, dir, false);
	     i < r->nedges && r->by_parent[i].parent == dir; i++) {
		const struct node *n = node_find(r, r->by_parent[i].child);

		(*entries)++;
		*subdirs += n && n->type == NS_DIR;
	}
}

static bool fix_dir_links(struct repairer *r, struct ns_inode *rec)
{
	uint64_t entries, subdirs, parent = NS_ROOT_INO;
	const struct edge *e = first_name(r, rec->ino);

	count_dir(r, rec->ino, &entries, &subdirs);
	if (rec->ino != NS_ROOT_INO && e)
		parent = e->parent;
	if (rec->nlink == 2 + subdirs && rec->nentries == entries && rec->parent == parent)
		return false;
	fixed(r, &r->res->bad_links, "dir %llu: nlink %u, %llu entries, parent %llu: now "
	      "%llu, %llu, %llu", (unsigned long long)rec->ino, rec->nlink,
	      (unsigned long long)rec->nentries, (unsigned long long)rec->parent,
	      (unsigned long long)(2 + subdirs), (unsigned long long)entries,
	      (unsigned long long)parent);
	rec->nlink = (uint32_t)(2 + subdirs);
	rec->nentries = entries;
	rec->parent = parent;
	return true;
}

static bool fix_links(struct repairer *r, struct ns_inode *rec)
{
	size_t first, names;

	if (rec->type == NS_DIR)
		return fix_dir_links(r, rec);
	names = names_of(r, rec->ino, &first) - first;
	if (rec->nlink == names)
		return false;
	fixed(r, &r->res->bad_links, "inode %llu: nlink %u, %zu names: set",
	      (unsigned long long)rec->ino, rec->nlink, names);
	rec->nlink = (uint32_t)names;
	return true;
}

static int visit_count(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	struct ns_inode rec;

	if (klen != ID_KEY_LEN || inode_decode(get_be64(k + 1), v, vlen, &rec))
		return -EIO;
	r->inodes++;
	if (rec.type == NS_REG) {
		r->bytes += rec.size;
		r->inline_bytes += rec.inline_len;
	}
	return fix_links(r, &rec) ? put_inode(r, &rec) : 0;
}

/* Counters are merge operands on a base: a put sets the base. */
static int fix_counter(struct repairer *r, uint8_t which, uint64_t want, const char *what)
{
	uint8_t k[2], v[8];
	size_t klen = key_counter(k, which), vlen;
	bool ok;
	char *cur;
	int rc = db_get(r->s, k, klen, &cur, &vlen);

	if (rc)
		return rc;
	ok = cur ? vlen == 8 && get_be64((const uint8_t *)cur) == want : want == 0;
	rocksdb_free(cur);
	if (ok)
		return 0;
	fixed(r, &r->res->bad_counters, "%s counter set to %llu", what,
	      (unsigned long long)want);
	put_be64(v, want);
	return put_key(r, k, klen, v, sizeof(v));
}

static int fix_counts(struct repairer *r)
{
	int rc;

	rc = walk(r, K_INODE, visit_count);
	if (!rc)
		rc = fix_counter(r, C_INODES, r->inodes, "inode");
	if (!rc)
		rc = fix_counter(r, C_BYTES, r->bytes, "bytes");
	return rc ? rc : fix_counter(r, C_INLINE, r->inline_bytes, "inline bytes");
}

/* ---- the whole repair ---------------------------------------------------- */

int ns_repair(struct ns_store *s, ns_check_say_fn say_fn, void *arg,
	      struct ns_check_result *res)
{
	struct repairer r = { .s = s, .say = say_fn, .arg = arg, .res = res };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = fix_next_id(&r);
	if (!rc)
		rc = fix_records(&r);
	if (!rc)
		rc = fix_strays(&r);
	if (!rc)
		rc = walk(&r, K_INDEX, visit_index);
	if (!rc)
		rc = walk(&r, K_DIRENT, visit_entry);
	if (!rc)
		rc = fix_tree(&r);
	if (!rc)
		rc = fix_counts(&r);
	if (!rc)
		rc = ns_sync(s);
	graph_free(&r);
	return rc;
}
