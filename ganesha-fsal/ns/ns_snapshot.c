/* Snapshots: the copy of a store a new standby starts from (ns_store.h).
 *
 * A RocksDB checkpoint: hard links to the table files, a copy of the live
 * WAL, a database of its own that recovers to one point in the store's
 * history, with whole batches (point-in-time recovery).
 *
 * Which point: the checkpoint is made under commit_lock, which every
 * writer of a store with a journal holds from its RocksDB write to its
 * append (and ns_apply for its write), so no batch is half done: the copy
 * holds exactly the batches journaled (or applied) so far, the last of
 * which set the 'A' key to its seq; an active journals one first, so that
 * it has one.  The copy is then opened to check it: its 'A' key must be
 * the seq the lock saw, and RocksDB's last sequence number there the
 * same (nothing in it after its last journaled batch).  Without a journal
 * writers take no lock: a store that applies none either (a standby not
 * applying now) is copied as it is, and the same check says whether
 * something changed it outside the journal.
 *
 * The memtable is flushed first, outside the lock, so that what the
 * checkpoint copies under it, rather than links, is a short WAL.  Last,
 * every batch in the copy is made durable in the journal (and the WAL),
 * so a standby never starts from a batch a crash of the active can take
 * back. */
#include "ns_internal.h"

#include <sys/stat.h>
#include <unistd.h>

static int flush_memtable(struct ns_store *s)
{
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	char *err = NULL;

	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush(s->db, fo, &err);
	rocksdb_flushoptions_destroy(fo);
	return err ? db_err(s, "flush", err) : 0;
}

struct point {
	uint64_t local; /* this store's own sequence number then */
	uint64_t seq;   /* the last journaled batch; 0: unknown */
};

static int checkpoint(struct ns_store *s, const char *dir, struct point *pt)
{
	rocksdb_checkpoint_t *cp;
	char *err = NULL;
	int rc = 0;

	cp = rocksdb_checkpoint_object_create(s->db, &err);
	if (err)
		return db_err(s, "checkpoint", err);
	pthread_mutex_lock(&s->commit_lock);
	pt->local = rocksdb_get_latest_sequence_number(s->db);
	pt->seq = 0;
	if (s->journal.append || atomic_load(&s->applying))
		pt->seq = s->applied_seq;
	/* Failed, RocksDB may hold a batch the journal lacks.  UINT64_MAX:
	 * no flush under the lock. */
	if (space_failed(s))
		rc = -EIO;
	else
		rocksdb_checkpoint_create(cp, dir, UINT64_MAX, &err);
	pthread_mutex_unlock(&s->commit_lock);
	rocksdb_checkpoint_object_destroy(cp);
	return err ? db_err(s, "checkpoint", err) : rc;
}

/* The seq the copy holds, as it says itself. */
static int copy_seq(struct ns_store *s, const char *dir, const struct point *pt, uint64_t *seq)
{
	struct ns_options o = { .log = s->log, .log_arg = s->log_arg };
	uint64_t last;
	struct ns_store *c;
	int rc = ns_open(dir, &o, &c);

	if (rc)
		return rc;
	last = rocksdb_get_latest_sequence_number(c->db);
	rc = ns_applied_seq(c, seq);
	ns_close(c);
	if (rc == -ENOENT || (!rc && (*seq != last || (pt->seq && *seq != pt->seq)))) {
		db_say(s,
		       "snapshot %s: last journaled batch %llu, last batch %llu, wanted %llu: "
		       "not used",
		       dir, (unsigned long long)(rc ? 0 : *seq), (unsigned long long)last,
		       (unsigned long long)pt->seq);
		rc = -EIO;
	}
	return rc;
}

int ns_snapshot(struct ns_store *s, const char *dir, uint64_t *seq)
{
	struct point pt = { 0 };
	uint64_t mark;
	int rc = 0;

	if (access(dir, F_OK) == 0)
		return -EEXIST;
	if (space_failed(s))
		return -EIO;
	if (s->journal.append)
		rc = journal_mark(s, &mark);
	else if (ns_applied_seq(s, &mark))
		return -ENOENT; /* never journaled: nothing a standby could follow */
	if (!rc)
		rc = flush_memtable(s);
	if (!rc)
		rc = checkpoint(s, dir, &pt);
	if (!rc && chmod(dir, 0700) < 0) /* as private as the store (RocksDB made it 0755) */
		rc = -errno;
	if (!rc)
		rc = copy_seq(s, dir, &pt, seq);
	return rc ? rc : sync_upto(s, pt.local);
}
