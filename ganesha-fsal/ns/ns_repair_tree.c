/* Repair pass 5: the tree.  A directory named twice keeps the name its
 * parent field agrees with; inodes no path from the root reaches go into
 * /lost+found as "#<ino>" (a cycle by moving one of its directories). */
#include "ns_repair.h"

#include <stdio.h>
#include <stdlib.h>

#define LOST_FOUND "lost+found"
/* "#<ino>.<n>" when "#<ino>" is taken: enough tries for any real case. */
#define NAME_TRIES 1000

/* Removes the name an edge stands for (pass 4 left each its index entry). */
static int drop_name(struct repairer *r, const struct edge *e)
{
	struct dirent_rec d = { .ino = e->child, .seq = e->seq };
	struct index_ent ie;
	bool found;
	int rc = repair_index_get(r, e->parent, e->seq, &ie, &found);

	if (rc || !found)
		return rc ? rc : -EIO;
	repaired(r, &r->res->bad_links,
		 "dir %llu: its name '%.*s' in dir %llu is one too many: "
		 "removed",
		 (unsigned long long)e->child, (int)ie.len, ie.name, (unsigned long long)e->parent);
	return repair_del_entry(r, e->parent, ie.name, ie.len, &d);
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
		const struct node *n = repair_node_find(r, child);
		size_t first, end = repair_names_of(r, child, &first);

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
	struct node *root = repair_node_find(r, NS_ROOT_INO);

	if (!queue)
		return -ENOMEM;
	if (root)
		root->reached = true;
	queue[tail++] = NS_ROOT_INO;
	while (head < tail) {
		uint64_t dir = queue[head++];

		for (size_t i = repair_edge_lower(r->by_parent, r->nedges, dir, false);
		     i < r->nedges && r->by_parent[i].parent == dir; i++) {
			struct node *n = repair_node_find(r, r->by_parent[i].child);

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
			repair_note(r, "created /" LOST_FOUND);
	}
	if (!rc && a.type != NS_DIR) {
		repair_note(r, "/" LOST_FOUND " is not a directory: move it away and run again");
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
		int w = n ? snprintf(name, cap, "#%llu.%u", (unsigned long long)ino, n)
			  : snprintf(name, cap, "#%llu", (unsigned long long)ino);

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
		rc = repair_index_get(r, old->parent, old->seq, &oname, &found);
	if (!rc && !found)
		rc = -EIO;
	if (rc)
		return rc;
	repaired(r, &r->res->orphans, "inode %llu: %s: linked into /" LOST_FOUND " as '%s'",
		 (unsigned long long)ino,
		 old ? "in a cycle no path from the root reaches" : "no name", name);
	return move_into(r, ino, old, &oname, name, len);
}

static int adopt_unnamed(struct repairer *r, bool *changed)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < r->nnodes; i++) {
		const struct node *n = &r->nodes[i];

		if (!n->reached && !repair_first_name(r, n->ino)) {
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
			const struct edge *e = repair_first_name(r, n->ino);

			n->mark = stamp;
			n = e ? repair_node_find(r, e->parent) : NULL;
		}
		if (n && !n->reached && n->mark == stamp) {
			rc = adopt(r, n->ino, repair_first_name(r, n->ino));
			*changed = true;
		}
	}
	return rc;
}

/* Loads the graph until a look at it finds nothing to change; it then
 * stays loaded for pass 6. */
int repair_tree(struct repairer *r)
{
	for (;;) {
		bool changed = false;
		int rc = repair_graph_load(r);

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
