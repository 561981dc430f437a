/* Repair passes 0 and 1: the next id, raised above every id in use before
 * anything gets a new one; then the inode records (with their symlink
 * target or inline data), the intents and the root.  A record that cannot
 * be decoded goes; what it leaves behind the later passes clean up. */
#include "ns_repair.h"

#include <time.h>

#include "byteorder.h"

/* ---- 0. the next id ---------------------------------------------------- */

static int visit_max_id(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			size_t vlen)
{
	if (klen == ID_KEY_LEN && get_be64(k + 1) > r->max_id)
		r->max_id = get_be64(k + 1);
	return 0;
}

/* Before anything is made (lost+found, intents): a new id must not be one
 * in use. */
int repair_next_id(struct repairer *r)
{
	uint8_t k = K_NEXT;
	uint64_t stored;
	int rc = repair_walk(r, K_INODE, visit_max_id);

	if (!rc)
		rc = repair_walk(r, K_INTENT, visit_max_id);
	if (!rc)
		rc = db_get_u64(r->s, &k, 1, &stored);
	if (rc || stored > r->max_id)
		return rc;
	repaired(r, &r->res->bad_counters, "next id %llu, but id %llu is in use: raised",
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
	int rc = repair_value_len(r, K_SYMLINK, rec->ino, &len, &found);

	if (rc || (found && len == rec->size))
		return rc;
	if (!found || !len) {
		repaired(r, &r->res->bad_records, "symlink %llu: no target: deleted", ino);
		return repair_del_inode(r, rec->ino);
	}
	repaired(r, &r->res->bad_records, "symlink %llu: size %llu, target %zu bytes: size set",
		 ino, (unsigned long long)rec->size, len);
	rec->size = len;
	return repair_put_inode(r, rec);
}

/* Inline bytes past the size can never be read: keep what can. */
static int cut_data(struct repairer *r, uint64_t ino, size_t keep)
{
	uint8_t k[ID_KEY_LEN];
	size_t klen = key_id(k, K_DATA, ino), vlen;
	char *v;
	int rc;

	if (!keep)
		return repair_del_key(r, k, klen);
	rc = db_get(r->s, k, klen, &v, &vlen);
	if (!rc && v)
		rc = repair_put_key(r, k, klen, v, keep);
	rocksdb_free(v);
	return rc;
}

/* An object-backed file needs its map: without it the objects cannot be
 * found (the OSD check reports them), and the file reads as zeros. */
static int fix_objects_flag(struct repairer *r, struct ns_inode *rec, bool *changed)
{
	size_t len;
	bool found;
	int rc = repair_value_len(r, K_MAP, rec->ino, &len, &found);

	if (rc || found)
		return rc;
	repaired(r, &r->res->bad_records,
		 "file %llu: object-backed without a map: "
		 "now inline, reading as zeros",
		 (unsigned long long)rec->ino);
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
	rc = repair_value_len(r, K_DATA, rec->ino, &flen, &found);
	if (rc)
		return rc;
	keep = flen < rec->size ? flen : (size_t)rec->size;
	if (keep != flen)
		rc = cut_data(r, rec->ino, keep);
	if (!rc && (keep != flen || keep != rec->inline_len)) {
		repaired(r, &r->res->bad_records,
			 "file %llu: %u inline bytes recorded, %zu "
			 "stored, size %llu: %zu kept",
			 (unsigned long long)rec->ino, rec->inline_len, flen,
			 (unsigned long long)rec->size, keep);
		rec->inline_len = (uint32_t)keep;
		changed = true;
	}
	return !rc && changed ? repair_put_inode(r, rec) : rc;
}

/* A junction flag without its blob sends clients nowhere: the directory
 * becomes a plain (empty) one again. */
static int fix_junction(struct repairer *r, struct ns_inode *rec)
{
	size_t len;
	bool found;
	int rc = repair_value_len(r, K_JUNCTION, rec->ino, &len, &found);

	if (rc || found)
		return rc;
	repaired(r, &r->res->bad_records,
		 "dir %llu: a junction without its target: now a plain directory",
		 (unsigned long long)rec->ino);
	rec->flags &= ~IF_JUNCTION;
	return repair_put_inode(r, rec);
}

static int visit_inode(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	unsigned long long ino = klen >= ID_KEY_LEN ? get_be64(k + 1) : 0;
	struct ns_inode rec;

	if (klen != ID_KEY_LEN || inode_decode(ino, v, vlen, &rec) ||
	    (ino == NS_ROOT_INO && rec.type != NS_DIR)) {
		repaired(r, &r->res->bad_records, "inode %llu: malformed record: deleted", ino);
		return repair_del_key(r, k, klen);
	}
	r->res->inodes++;
	if (rec.type == NS_LNK)
		return fix_target(r, &rec);
	if (rec.type == NS_REG)
		return fix_file(r, &rec);
	if (rec.type == NS_DIR && (rec.flags & IF_JUNCTION))
		return fix_junction(r, &rec);
	return 0;
}

static int fix_root(struct repairer *r)
{
	struct ns_inode root = {
		.ino = NS_ROOT_INO,
		.type = NS_DIR,
		.mode = 0755,
		.nlink = 2,
		.gen = 1,
		.change = 1,
		.parent = NS_ROOT_INO,
		.next_seq = NS_COOKIE_FIRST,
	};
	struct ns_inode have;
	int rc = inode_load(r->s, NS_ROOT_INO, &have);

	if (rc != -ESTALE)
		return rc;
	repaired(r, &r->res->bad_records, "no root directory: made an empty one");
	clock_gettime(CLOCK_REALTIME, &root.ctime);
	root.atime = root.mtime = root.btime = root.ctime;
	return repair_put_inode(r, &root);
}

/* An undecodable intent names nothing the repair can find: the objects it
 * meant are orphans the OSD check finds. */
static int visit_intent(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			size_t vlen)
{
	struct ns_intent in;

	if (klen == ID_KEY_LEN && !intent_decode(get_be64(k + 1), v, vlen, &in))
		return 0;
	repaired(r, &r->res->bad_records, "malformed intent: deleted");
	return repair_del_key(r, k, klen);
}

int repair_records(struct repairer *r)
{
	int rc = repair_walk(r, K_INODE, visit_inode);

	if (!rc)
		rc = fix_root(r);
	return rc ? rc : repair_walk(r, K_INTENT, visit_intent);
}
