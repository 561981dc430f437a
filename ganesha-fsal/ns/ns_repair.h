/* What the passes of ns_repair share: the repair's state, its report, the
 * walk over one key type, raw writes, and the namespace as a graph.  The
 * passes themselves, and what each trusts, are described in ns_repair.c.
 * Private to the ns_repair*.c files. */
#ifndef PANDO_NS_REPAIR_H
#define PANDO_NS_REPAIR_H

#include "ns_internal.h"

/* The namespace as a graph, for passes 5 and 6: inodes sorted by id, names
 * sorted by directory (key order) and by inode. */
struct node {
	uint64_t ino;
	uint32_t mark; /* which chain of parents the cycle search is on */
	uint8_t type;
	bool reached;
};

struct edge {
	uint64_t parent;
	uint64_t child;
	uint64_t seq; /* the entry's cookie: its index key names it */
};

struct repairer {
	struct ns_store *s;
	ns_check_say_fn say;
	void *arg;
	struct ns_check_result *res;
	uint64_t max_id; /* pass 0: the highest inode or intent id */
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
	/* pass 6: the statfs counters and each owner's, counted */
	uint64_t inodes, bytes, inline_bytes;
	struct owner_sums owners;
};

/* An index entry's value, decoded, its name copied out. */
struct index_ent {
	uint64_t ino;
	uint8_t type;
	size_t len;
	char name[NS_NAME_MAX + 1];
};

/* ns_repair.c: the report, the walk, raw writes and reads */

/* Counts one fix in *counter and the total, and says it. */
void repaired(struct repairer *r, uint64_t *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Says something that is not a fix. */
void repair_note(struct repairer *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef int (*repair_visit_fn)(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			       size_t vlen);
/* Visits every key of one type, in key order, until a visit fails. */
int repair_walk(struct repairer *r, uint8_t type, repair_visit_fn visit);

int repair_del_key(struct repairer *r, const uint8_t *k, size_t klen);
int repair_put_key(struct repairer *r, const uint8_t *k, size_t klen, const void *v, size_t vlen);
int repair_put_inode(struct repairer *r, const struct ns_inode *rec);
int repair_del_inode(struct repairer *r, uint64_t ino);
/* A key's value length; *found false when it is absent. */
int repair_value_len(struct repairer *r, uint8_t type, uint64_t ino, size_t *len, bool *found);
int repair_index_get(struct repairer *r, uint64_t dir, uint64_t seq, struct index_ent *ie,
		     bool *found);
/* Whether the index entry names ino under name. */
bool repair_index_names(const struct index_ent *ie, uint64_t ino, const char *name, size_t len);

/* ns_repair_entries.c: entries with their index entries */

/* Deletes an entry, and its index entry if that still names it. */
int repair_del_entry(struct repairer *r, uint64_t dir, const char *name, size_t len,
		     const struct dirent_rec *d);

/* ns_repair_graph.c: the graph of passes 5 and 6 */

int repair_graph_load(struct repairer *r);
void repair_graph_free(struct repairer *r);
/* The first edge whose parent (by_parent) or child (by_child) is >= id. */
size_t repair_edge_lower(const struct edge *v, size_t n, uint64_t id, bool by_child);
/* The names of ino: by_child[*first .. return). */
size_t repair_names_of(const struct repairer *r, uint64_t ino, size_t *first);
struct node *repair_node_find(struct repairer *r, uint64_t ino);
/* One of ino's names, NULL if it has none. */
const struct edge *repair_first_name(struct repairer *r, uint64_t ino);

/* The passes, in the order ns_repair runs them. */
int repair_next_id(struct repairer *r); /* 0, ns_repair_records.c */
int repair_records(struct repairer *r); /* 1, ns_repair_records.c */
int repair_strays(struct repairer *r);  /* 2, ns_repair_strays.c */
int repair_index(struct repairer *r);   /* 3, ns_repair_entries.c */
int repair_entries(struct repairer *r); /* 4, ns_repair_entries.c */
int repair_tree(struct repairer *r);    /* 5, ns_repair_tree.c */
int repair_counts(struct repairer *r);  /* 6, ns_repair_counts.c */

#endif
