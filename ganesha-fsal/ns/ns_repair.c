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
 * end: a crash in between leaves a store the next run repairs.
 *
 * This file runs the passes and holds what they share (ns_repair.h): the
 * report, the walk and raw reads and writes.  The passes are in
 * ns_repair_records.c (0, 1), ns_repair_strays.c (2), ns_repair_entries.c
 * (3, 4), ns_repair_tree.c with ns_repair_graph.c (5) and
 * ns_repair_counts.c (6). */
#include "ns_repair.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the report -------------------------------------------------------- */

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

void repaired(struct repairer *r, uint64_t *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	r->res->problems++;
	va_start(ap, fmt);
	say(r, fmt, ap);
	va_end(ap);
}

void repair_note(struct repairer *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, fmt, ap);
	va_end(ap);
}

/* ---- the walk every pass makes ----------------------------------------- */

/* The iterator reads one snapshot, so fixes written meanwhile (to the keys
 * it walks, too) never disturb it. */
int repair_walk(struct repairer *r, uint8_t type, repair_visit_fn visit)
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

/* Through db_write like every change, so a store repaired with its
 * journal hands the fixes to its standbys (repaired without it, as
 * pando-fsck does on a stopped manager, its standbys refuse the next
 * batch with -ERANGE and need a new snapshot). */
int repair_del_key(struct repairer *r, const uint8_t *k, size_t klen)
{
	return db_delete(r->s, k, klen);
}

int repair_put_key(struct repairer *r, const uint8_t *k, size_t klen, const void *v, size_t vlen)
{
	return db_put(r->s, k, klen, v, vlen);
}

int repair_put_inode(struct repairer *r, const struct ns_inode *rec)
{
	uint8_t k[ID_KEY_LEN], v[INODE_REC_LEN];

	inode_encode(rec, v);
	return repair_put_key(r, k, key_id(k, K_INODE, rec->ino), v, sizeof(v));
}

int repair_del_inode(struct repairer *r, uint64_t ino)
{
	uint8_t k[ID_KEY_LEN];

	return repair_del_key(r, k, key_id(k, K_INODE, ino));
}

int repair_value_len(struct repairer *r, uint8_t type, uint64_t ino, size_t *len, bool *found)
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

int repair_index_get(struct repairer *r, uint64_t dir, uint64_t seq, struct index_ent *ie,
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

bool repair_index_names(const struct index_ent *ie, uint64_t ino, const char *name, size_t len)
{
	return ie->ino == ino && ie->len == len && memcmp(ie->name, name, len) == 0;
}

/* ---- the whole repair -------------------------------------------------- */

int ns_repair(struct ns_store *s, ns_check_say_fn say_fn, void *arg, struct ns_check_result *res)
{
	struct repairer r = { .s = s, .say = say_fn, .arg = arg, .res = res };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = repair_next_id(&r);
	if (!rc)
		rc = repair_records(&r);
	if (!rc)
		rc = repair_strays(&r);
	if (!rc)
		rc = repair_index(&r);
	if (!rc)
		rc = repair_entries(&r);
	if (!rc)
		rc = repair_tree(&r);
	if (!rc)
		rc = repair_counts(&r);
	if (!rc)
		rc = ns_sync(s);
	repair_graph_free(&r);
	owner_sums_free(&r.owners);
	return rc;
}
