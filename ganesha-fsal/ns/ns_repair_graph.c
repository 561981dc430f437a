/* The namespace as a graph, for repair passes 5 and 6: every inode (id and
 * type) and every name (directory, inode, cookie), read after pass 4 left
 * only good records and entries, sorted so that a directory's names, an
 * inode's names and an inode are each found by binary search. */
#include "ns_repair.h"

#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "grow.h"

static int visit_node(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		      size_t vlen)
{
	struct ns_inode rec;
	int rc;

	/* Pass 1 left only good records. */
	if (klen != ID_KEY_LEN || inode_decode(get_be64(k + 1), v, vlen, &rec))
		return -EIO;
	rc = pando_grow((void **)&r->nodes, &r->nodes_cap, r->nnodes + 1, sizeof(*r->nodes));
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
	rc = pando_grow((void **)&r->by_parent, &r->edges_cap, r->nedges + 1,
			sizeof(*r->by_parent));
	if (!rc)
		r->by_parent[r->nedges++] = (struct edge){
			.parent = get_be64(k + 1),
			.child = d.ino,
			.seq = d.seq,
		};
	return rc;
}

static int cmp_child(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->child < y->child ? -1 : x->child > y->child;
}

int repair_graph_load(struct repairer *r)
{
	int rc;

	r->nnodes = r->nedges = 0;
	rc = repair_walk(r, K_INODE, visit_node);
	if (!rc)
		rc = repair_walk(r, K_DIRENT, visit_edge);
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

void repair_graph_free(struct repairer *r)
{
	free(r->nodes);
	free(r->by_parent);
	free(r->by_child);
}

size_t repair_edge_lower(const struct edge *v, size_t n, uint64_t id, bool by_child)
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

size_t repair_names_of(const struct repairer *r, uint64_t ino, size_t *first)
{
	size_t i = *first = repair_edge_lower(r->by_child, r->nedges, ino, true);

	while (i < r->nedges && r->by_child[i].child == ino)
		i++;
	return i;
}

struct node *repair_node_find(struct repairer *r, uint64_t ino)
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

const struct edge *repair_first_name(struct repairer *r, uint64_t ino)
{
	size_t first, end = repair_names_of(r, ino, &first);

	return first < end ? &r->by_child[first] : NULL;
}
