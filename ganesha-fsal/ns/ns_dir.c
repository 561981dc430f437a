/* Directory entries: names, lookup, readdir, and the helpers that add and
 * remove an entry inside a transaction.
 *
 * An entry is two keys written and deleted together: 'D' (dir, name) for
 * lookup, and 'R' (dir, seq) for readdir, seq taken from the directory's
 * next_seq when the entry is made.  A readdir cookie is a seq: entries keep
 * theirs while others come and go, and resuming after a cookie whose entry
 * is gone just seeks to the next seq above it. */
#include "ns_internal.h"

#include <string.h>

#include "byteorder.h"

static bool is_dot_or_dotdot(const char *name, size_t len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

/* Names are any bytes but '/' and NUL, 1 to NS_NAME_MAX of them. */
static int name_syntax(const char *name, size_t *len)
{
	size_t n = strnlen(name, NS_NAME_MAX + 1);

	if (n == 0 || memchr(name, '/', n))
		return -EINVAL;
	if (n > NS_NAME_MAX)
		return -ENAMETOOLONG;
	*len = n;
	return 0;
}

/* A name that can be made, removed or renamed: not "." or "..". */
int name_check(const char *name, size_t *len)
{
	int rc = name_syntax(name, len);

	return !rc && is_dot_or_dotdot(name, *len) ? -EINVAL : rc;
}

static int dir_load(struct ns_store *s, uint64_t dir, struct ns_inode *r)
{
	int rc = inode_load(s, dir, r);

	return !rc && r->type != NS_DIR ? -ENOTDIR : rc;
}

/* -ENOENT when the directory has no such name. */
int dirent_get(struct ns_store *s, uint64_t dir, const char *name, size_t len, struct dirent_rec *d)
{
	uint8_t k[KEY_MAX];
	size_t vlen;
	char *v;
	int rc = db_get(s, k, key_dirent(k, dir, name, len), &v, &vlen);

	if (rc)
		return rc;
	if (!v)
		return -ENOENT;
	rc = dirent_decode((const uint8_t *)v, vlen, d);
	rocksdb_free(v);
	return rc;
}

/* 0 if the name is free, -EEXIST if taken. */
int dirent_absent(struct ns_store *s, uint64_t dir, const char *name, size_t len)
{
	struct dirent_rec d;
	int rc = dirent_get(s, dir, name, len, &d);

	if (rc == -ENOENT)
		return 0;
	return rc ? rc : -EEXIST;
}

/* As dirent_get, for a directory not loaded yet: a miss says why. */
int dirent_find(struct ns_store *s, uint64_t dir, const char *name, size_t len,
		struct dirent_rec *d)
{
	struct ns_inode r;
	int rc = dirent_get(s, dir, name, len, d);

	if (rc == -ENOENT) {
		int why = dir_load(s, dir, &r);

		rc = why ? why : rc;
	}
	return rc;
}

/* ---- changes, inside a transaction ----------------------------------- */

void dirent_put(struct txn *t, uint64_t dir, const char *name, size_t len,
		const struct dirent_rec *d, uint8_t child_type)
{
	uint8_t k[KEY_MAX], dv[DIRENT_REC_LEN], iv[INDEX_REC_HDR + NS_NAME_MAX];

	dirent_encode(d, dv);
	rocksdb_writebatch_put(t->b, (const char *)k, key_dirent(k, dir, name, len),
			       (const char *)dv, sizeof(dv));
	rocksdb_writebatch_put(t->b, (const char *)k, key_index(k, dir, d->seq), (const char *)iv,
			       index_encode(d->ino, child_type, name, len, iv));
}

void dirent_add(struct txn *t, struct ns_inode *dir, const char *name, size_t len,
		const struct ns_inode *child)
{
	struct dirent_rec d = { .ino = child->ino, .seq = dir->next_seq++ };

	dirent_put(t, dir->ino, name, len, &d, child->type);
	dir->nentries++;
	if (child->type == NS_DIR)
		dir->nlink++;
	txn_touch_data(t, dir);
}

void dirent_del(struct txn *t, struct ns_inode *dir, const char *name, size_t len,
		const struct dirent_rec *d, uint8_t child_type)
{
	uint8_t k[KEY_MAX];

	rocksdb_writebatch_delete(t->b, (const char *)k, key_dirent(k, dir->ino, name, len));
	rocksdb_writebatch_delete(t->b, (const char *)k, key_index(k, dir->ino, d->seq));
	dir->nentries--;
	if (child_type == NS_DIR)
		dir->nlink--;
	txn_touch_data(t, dir);
}

/* ---- lookup ---------------------------------------------------------- */

static int lookup_dots(struct ns_store *s, uint64_t dir, size_t len, struct ns_attr *out)
{
	struct ns_inode r;
	int rc = dir_load(s, dir, &r);

	if (!rc && len == 2)
		rc = inode_load(s, r.parent, &r);
	if (!rc)
		inode_to_attr(&r, out);
	return rc;
}

int ns_lookup(struct ns_store *s, uint64_t dir, const char *name, struct ns_attr *out)
{
	struct dirent_rec d;
	struct ns_inode r;
	size_t len;
	int rc = name_syntax(name, &len);

	if (rc)
		return rc;
	if (is_dot_or_dotdot(name, len))
		return lookup_dots(s, dir, len, out);
	rc = dirent_find(s, dir, name, len, &d);
	if (rc)
		return rc;
	rc = inode_load(s, d.ino, &r);
	/* Unlinked between the two reads. */
	if (rc == -ESTALE)
		return -ENOENT;
	if (!rc)
		inode_to_attr(&r, out);
	return rc;
}

int ns_lookup_cookie(struct ns_store *s, uint64_t dir, const char *name, uint64_t *cookie)
{
	struct dirent_rec d;
	size_t len;
	int rc = name_check(name, &len);

	if (!rc)
		rc = dirent_find(s, dir, name, len, &d);
	if (!rc)
		*cookie = d.seq;
	return rc;
}

/* ---- readdir --------------------------------------------------------- */

static int entry_decode(struct db_iter *i, struct ns_dirent *de)
{
	size_t klen, vlen, len;
	const uint8_t *k = iter_key(i, &klen), *v = iter_value(i, &vlen);
	const char *name;
	uint8_t type;

	if (klen != INDEX_KEY_LEN || index_decode(v, vlen, &de->ino, &type, &name, &len))
		return -EIO;
	de->cookie = get_be64(k + ID_KEY_LEN);
	de->type = type;
	de->namelen = len;
	memcpy(de->name, name, len);
	de->name[len] = '\0';
	return 0;
}

int ns_readdir(struct ns_store *s, uint64_t dir, uint64_t cookie, ns_readdir_fn fn, void *arg,
	       bool *eof)
{
	uint8_t start[INDEX_KEY_LEN], end[ID_KEY_LEN];
	struct ns_dirent de;
	struct ns_inode r;
	struct db_iter i;
	int rc = dir_load(s, dir, &r);

	*eof = true;
	if (rc || cookie == UINT64_MAX)
		return rc;
	key_index(start, dir, cookie < NS_COOKIE_FIRST ? NS_COOKIE_FIRST : cookie + 1);
	key_id(end, K_INDEX, dir);
	prefix_end(end, ID_KEY_LEN);
	/* The iterator reads one snapshot: a page never mixes two states. */
	for (iter_open(s, &i, start, sizeof(start), end, sizeof(end)); iter_valid(&i);
	     iter_next(&i)) {
		rc = entry_decode(&i, &de);
		if (rc)
			break;
		if (fn(arg, &de)) {
			iter_next(&i);
			*eof = !iter_valid(&i);
			break;
		}
	}
	if (rc)
		db_say(s, "directory %llu: bad readdir index entry", (unsigned long long)dir);
	if (iter_close(s, &i))
		rc = -EIO;
	return rc;
}
