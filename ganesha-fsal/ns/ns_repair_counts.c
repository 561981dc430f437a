/* Repair pass 6: what is derived is recomputed from the graph pass 5 left
 * loaded: link counts, entry counts and parents of every inode, then the
 * statfs counters (inodes, bytes, inline bytes) and the owners'. */
#include "ns_repair.h"

#include "byteorder.h"

static void count_dir(struct repairer *r, uint64_t dir, uint64_t *entries, uint64_t *subdirs)
{
	*entries = *subdirs = 0;
	for (size_t i = repair_edge_lower(r->by_parent, r->nedges, dir, false);
	     i < r->nedges && r->by_parent[i].parent == dir; i++) {
		const struct node *n = repair_node_find(r, r->by_parent[i].child);

		(*entries)++;
		*subdirs += n && n->type == NS_DIR;
	}
}

static bool fix_dir_links(struct repairer *r, struct ns_inode *rec)
{
	uint64_t entries, subdirs, parent = NS_ROOT_INO;
	const struct edge *e = repair_first_name(r, rec->ino);

	count_dir(r, rec->ino, &entries, &subdirs);
	if (rec->ino != NS_ROOT_INO && e)
		parent = e->parent;
	if (rec->nlink == 2 + subdirs && rec->nentries == entries && rec->parent == parent)
		return false;
	repaired(r, &r->res->bad_links,
		 "dir %llu: nlink %u, %llu entries, parent %llu: now "
		 "%llu, %llu, %llu",
		 (unsigned long long)rec->ino, rec->nlink, (unsigned long long)rec->nentries,
		 (unsigned long long)rec->parent, (unsigned long long)(2 + subdirs),
		 (unsigned long long)entries, (unsigned long long)parent);
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
	names = repair_names_of(r, rec->ino, &first) - first;
	if (rec->nlink == names)
		return false;
	repaired(r, &r->res->bad_links, "inode %llu: nlink %u, %zu names: set",
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
	if (owner_sums_add(&r->owners, &rec))
		return -ENOMEM;
	return fix_links(r, &rec) ? repair_put_inode(r, &rec) : 0;
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
	repaired(r, &r->res->bad_counters, "%s counter set to %llu", what,
		 (unsigned long long)want);
	put_be64(v, want);
	return repair_put_key(r, k, klen, v, sizeof(v));
}

static void owner_wrong(void *arg, const char *msg)
{
	repair_note(arg, "%s", msg);
}

/* One batch rewrites them all: the counters of owners no inode names
 * go with the wrong ones. */
static int fix_owners(struct repairer *r)
{
	uint64_t nbad;
	int rc = owner_sums_compare(r->s, &r->owners, owner_wrong, r, &nbad);

	if (rc || !nbad)
		return rc;
	repaired(r, &r->res->bad_counters,
		 "owner counters: %llu wrong, set for %zu users and groups",
		 (unsigned long long)nbad, r->owners.n);
	return owner_sums_write(r->s, &r->owners);
}

int repair_counts(struct repairer *r)
{
	int rc;

	rc = repair_walk(r, K_INODE, visit_count);
	if (!rc)
		rc = fix_counter(r, C_INODES, r->inodes, "inode");
	if (!rc)
		rc = fix_counter(r, C_BYTES, r->bytes, "bytes");
	if (!rc)
		rc = fix_counter(r, C_INLINE, r->inline_bytes, "inline bytes");
	return rc ? rc : fix_owners(r);
}
