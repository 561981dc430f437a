/* Small files kept whole in one 'F' value (seed 001's small-file packing)
 * until they outgrow the inline threshold, and symlink targets.
 *
 * The 'F' value may be shorter than the file: bytes past it up to the size
 * read as zeros, so growing a file by truncate stores nothing.  A write
 * rewrites the whole value; at 64 KiB that costs less than the extra keys
 * and range reads that block-sized pieces would. */
#include "ns_internal.h"

#include <stdlib.h>
#include <string.h>

static int data_kind(const struct ns_inode *r)
{
	if (r->type == NS_DIR)
		return -EISDIR;
	if (r->type != NS_REG)
		return -EINVAL;
	return r->flags & IF_OBJECTS ? -EREMOTE : 0;
}

/* The current 'F' value, as long as the record says; *v NULL if empty. */
static int data_get(struct ns_store *s, const struct ns_inode *r, char **v)
{
	uint8_t k[ID_KEY_LEN];
	size_t vlen = 0;
	int rc;

	*v = NULL;
	if (!r->inline_len)
		return 0;
	rc = db_get(s, k, key_id(k, K_DATA, r->ino), v, &vlen);
	if (!rc && vlen != r->inline_len) {
		db_say(s, "inode %llu: inline data is %zu bytes, record says %u",
		       (unsigned long long)r->ino, vlen, r->inline_len);
		rocksdb_free(*v);
		*v = NULL;
		rc = -EIO;
	}
	return rc;
}

static void data_put(struct txn *t, struct ns_inode *r, const void *v, size_t len)
{
	uint8_t k[ID_KEY_LEN];
	size_t klen = key_id(k, K_DATA, r->ino);

	if (len)
		rocksdb_writebatch_put(t->b, (const char *)k, klen, v, len);
	else
		rocksdb_writebatch_delete(t->b, (const char *)k, klen);
	r->inline_len = (uint32_t)len;
}

/* The size change of setattr.  An object-backed file cut to nothing gives
 * its objects to a removal intent and starts over inline. */
int data_truncate(struct txn *t, struct ns_inode *r, uint64_t size)
{
	char *v;
	int rc = 0;

	if (r->flags & IF_OBJECTS) {
		if (size == 0)
			rc = inode_release_map(t, r);
	} else if (size > t->s->inline_max) {
		return -EFBIG;
	} else if (size < r->inline_len) {
		rc = data_get(t->s, r, &v);
		if (!rc)
			data_put(t, r, v, size);
		rocksdb_free(v);
	}
	if (!rc)
		r->size = size;
	return rc;
}

static int inline_write(struct txn *t, struct ns_inode *r, uint64_t off, const void *buf,
			size_t len)
{
	size_t end = off + len, newlen = end > r->inline_len ? end : r->inline_len;
	uint8_t *v = calloc(1, newlen);
	char *old;
	int rc;

	if (!v)
		return -ENOMEM;
	rc = data_get(t->s, r, &old);
	if (!rc) {
		if (old)
			memcpy(v, old, r->inline_len);
		memcpy(v + off, buf, len);
		data_put(t, r, v, newlen);
		if (end > r->size)
			r->size = end;
	}
	rocksdb_free(old);
	free(v);
	return rc;
}

int ns_write(struct ns_store *s, uint64_t ino, uint64_t off, const void *buf, size_t len,
	     bool stable, const struct ns_cred *writer, struct ns_attr *out)
{
	struct ns_inode *r;
	struct txn t;
	int rc;

	txn_begin(&t, s);
	txn_lock(&t, &ino, 1);
	rc = txn_inode(&t, ino, &r);
	if (!rc)
		rc = data_kind(r);
	if (!rc && (off > s->inline_max || len > s->inline_max - off))
		rc = -EFBIG;
	if (!rc && len)
		rc = space_for_growth(s);
	if (!rc && len)
		rc = inline_write(&t, r, off, buf, len);
	if (rc || !len) {
		if (!rc && out)
			inode_to_attr(r, out);
		txn_abort(&t);
		return rc;
	}
	/* In the batch that changes the data: no one sees the new bytes
	 * with the old privileges. */
	if (writer)
		inode_kill_setid(r, writer);
	txn_touch_data(&t, r);
	if (out)
		inode_to_attr(r, out);
	return txn_commit(&t, stable);
}

static void copy_out(const struct ns_inode *r, const char *data, uint64_t off, size_t n,
		     uint8_t *buf)
{
	size_t have = 0;

	if (off < r->inline_len) {
		have = r->inline_len - off < n ? r->inline_len - off : n;
		memcpy(buf, data + off, have);
	}
	memset(buf + have, 0, n - have);
}

int ns_read(struct ns_store *s, uint64_t ino, uint64_t off, size_t len, void *buf, size_t *n,
	    bool *eof)
{
	uint8_t ik[ID_KEY_LEN], dk[ID_KEY_LEN];
	const uint8_t *keys[2] = { ik, dk };
	size_t klens[2] = { key_id(ik, K_INODE, ino), key_id(dk, K_DATA, ino) }, vlens[2];
	char *vals[2];
	struct ns_inode r;
	int rc = db_multi_get(s, 2, keys, klens, vals, vlens);

	if (rc)
		return rc;
	rc = vals[0] ? inode_decode(ino, (const uint8_t *)vals[0], vlens[0], &r) : -ESTALE;
	if (!rc)
		rc = data_kind(&r);
	if (!rc && (vals[1] ? vlens[1] : 0) != r.inline_len)
		rc = -EIO;
	if (!rc) {
		*n = off >= r.size ? 0 : r.size - off < len ? r.size - off : len;
		copy_out(&r, vals[1], off, *n, buf);
		*eof = off + *n >= r.size;
	}
	rocksdb_free(vals[0]);
	rocksdb_free(vals[1]);
	return rc;
}

int ns_readlink(struct ns_store *s, uint64_t ino, char *buf, size_t cap, size_t *len)
{
	uint8_t k[ID_KEY_LEN];
	struct ns_inode r;
	size_t vlen;
	char *v;
	int rc = db_get(s, k, key_id(k, K_SYMLINK, ino), &v, &vlen);

	if (rc)
		return rc;
	if (!v) {
		rc = inode_load(s, ino, &r);
		return rc ? rc : -EINVAL;
	}
	if (vlen + 1 > cap) {
		rc = -ERANGE;
	} else {
		memcpy(buf, v, vlen);
		buf[vlen] = '\0';
		*len = vlen;
	}
	rocksdb_free(v);
	return rc;
}
