/* Repair passes 3 and 4: the readdir index ('R') against the directory
 * entries ('D'), then each entry against its directory, its inode and its
 * index entry.  The entries are what is named; the index is rebuilt from
 * them, except that an index entry whose entry is gone gives the name back
 * when it is free (it holds all the entry held). */
#include "ns_repair.h"

#include <string.h>

#include "byteorder.h"

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
static bool restorable(struct repairer *r, uint64_t dir, uint64_t ino, const char *name, size_t len)
{
	return !memchr(name, '/', len) && !memchr(name, '\0', len) && dir_exists(r, dir) &&
	       inode_exists(r, ino);
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
		repaired(r, &r->res->bad_records, "dir %llu: malformed index entry: deleted", dir);
		return repair_del_key(r, k, klen);
	}
	seq = get_be64(k + ID_KEY_LEN);
	rc = dirent_get(r->s, dir, name, len, &d);
	if (!rc && d.ino == ino && d.seq == seq)
		return 0;
	if (rc && rc != -ENOENT)
		return rc;
	if (rc == -ENOENT && restorable(r, dir, ino, name, len)) {
		repaired(r, &r->res->index_mismatches,
			 "dir %llu: entry '%.*s' (cookie %llu) "
			 "restored from its index entry",
			 dir, (int)len, name, seq);
		d = (struct dirent_rec){ .ino = ino, .seq = seq };
		dirent_encode(&d, dv);
		return repair_put_key(r, dk, key_dirent(dk, dir, name, len), dv, sizeof(dv));
	}
	repaired(r, &r->res->index_mismatches,
		 "dir %llu: index entry %llu ('%.*s') without "
		 "its entry: deleted",
		 dir, seq, (int)len, name);
	return repair_del_key(r, k, klen);
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

int repair_del_entry(struct repairer *r, uint64_t dir, const char *name, size_t len,
		     const struct dirent_rec *d)
{
	uint8_t k[KEY_MAX];
	struct index_ent ie;
	bool found;
	int rc = repair_index_get(r, dir, d->seq, &ie, &found);

	if (!rc && found && repair_index_names(&ie, d->ino, name, len))
		rc = repair_del_key(r, k, key_index(k, dir, d->seq));
	return rc ? rc : repair_del_key(r, k, key_dirent(k, dir, name, len));
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
static int fix_cookie(struct repairer *r, const char *name, size_t len, struct dirent_rec *d,
		      uint8_t type)
{
	struct ns_inode *dir = &r->run;
	unsigned long long ino = dir->ino, seq = d->seq;
	struct index_ent ie;
	bool found, other;
	int rc = repair_index_get(r, dir->ino, d->seq, &ie, &found);

	if (rc)
		return rc;
	other = found && !repair_index_names(&ie, d->ino, name, len);
	if (d->seq < NS_COOKIE_FIRST || d->seq == UINT64_MAX || other) {
		repaired(r, &r->res->index_mismatches,
			 "dir %llu: entry '%.*s': cookie %llu %s: "
			 "now %llu",
			 ino, (int)len, name, seq, other ? "is another entry's" : "out of range",
			 (unsigned long long)dir->next_seq);
		d->seq = dir->next_seq++;
		rc = repair_put_inode(r, dir);
		return rc ? rc : put_entry(r, dir->ino, name, len, d, type);
	}
	if (d->seq >= dir->next_seq) {
		repaired(r, &r->res->index_mismatches,
			 "dir %llu: entry '%.*s' has cookie %llu, "
			 "next cookie %llu: raised",
			 ino, (int)len, name, seq, (unsigned long long)dir->next_seq);
		dir->next_seq = d->seq + 1;
		rc = repair_put_inode(r, dir);
	}
	if (!rc && (!found || ie.type != type)) {
		repaired(r, &r->res->index_mismatches,
			 "dir %llu: entry '%.*s': index entry %s: "
			 "rewritten",
			 ino, (int)len, name, found ? "of another type" : "missing");
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
		repaired(r, &r->res->bad_records, "dir %llu: malformed entry: deleted", dir);
		return repair_del_key(r, k, klen);
	}
	len = (int)(klen - ID_KEY_LEN);
	r->res->dirents++;
	rc = run_load(r, dir);
	if (!rc && r->run_ok)
		rc = inode_load(r->s, d.ino, &child);
	if (rc && rc != -ESTALE)
		return rc;
	if (!r->run_ok || rc) {
		repaired(r, &r->res->dangling_dirents, "dir %llu: entry '%.*s' %s %llu: removed",
			 dir, len, name,
			 r->run_ok ? "names missing inode"
				   : "in a missing or "
				     "non-directory inode, naming",
			 (unsigned long long)d.ino);
		return repair_del_entry(r, dir, name, (size_t)len, &d);
	}
	return fix_cookie(r, name, (size_t)len, &d, child.type);
}

int repair_index(struct repairer *r)
{
	return repair_walk(r, K_INDEX, visit_index);
}

int repair_entries(struct repairer *r)
{
	return repair_walk(r, K_DIRENT, visit_entry);
}
