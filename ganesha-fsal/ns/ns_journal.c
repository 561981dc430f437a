/* The journal, the active's side (ns_store.h says what it is for).
 *
 * Order: a batch's RocksDB write, the read of the sequence number it got
 * and its append all happen under commit_lock, so the journal receives
 * the batches in the order RocksDB committed them, each with its own
 * seq.  RocksDB serialises writes anyway (one WAL), so the lock costs
 * little: with a journal that only copies, pando-ns-bench creates about a
 * tenth fewer files a second when nothing waits for the disk (the lock
 * and the applied seq's record), and no difference shows beside the
 * noise when replies wait for it.  Without a journal it is not taken.
 *
 * Bytes: the batch's representation after the write, in which RocksDB
 * has filled the header with the first sequence number it assigned
 * (test_ns_journal checks that), and whose last record sets the 'A' key
 * to the batch's seq and the journal's term, so a standby reads where each batch goes from the
 * bytes themselves and records where it is by applying them.
 *
 * Failures: see struct ns_journal.  The store is marked failed under the
 * lock, before any later writer can reach RocksDB, so the journal never
 * holds a batch written after one it lost. */
#include "ns_internal.h"

#include <string.h>

static int journal_failed(struct ns_store *s, const char *what, int rc)
{
	int none = 0;

	if (rc > 0) /* not -errno: a broken journal all the same */
		rc = -EIO;
	/* Later changes get -EIO, but for a manager no longer sure that it
	 * leads: theirs are for the next active, so they get -ESHUTDOWN. */
	if (atomic_compare_exchange_strong(&s->failed, &none, rc == -ESHUTDOWN ? rc : -EIO))
		db_say(s,
		       "the journal failed to %s (%s): the store takes no more changes; its "
		       "RocksDB may hold batches the journal lacks, and the journal is what a "
		       "standby takes over",
		       what, strerror(-rc));
	return rc;
}

/* Under commit_lock.  Every batch of the journal ends with the 'A' key
 * set to its own seq, so a standby applying it verbatim records where it
 * is in the same write, and any store of the group says which batch it
 * holds last (ns_applied_seq).  With every writer under the lock, RocksDB
 * assigns the batch the sequence numbers right after the latest. */
static int journal_commit(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq)
{
	uint64_t last = rocksdb_get_latest_sequence_number(s->db) + rocksdb_writebatch_count(b) + 1;
	const char *rep;
	size_t len;
	int rc;

	applied_put(b, last, s->journal.term);
	rc = db_write_local(s, b, seq); /* checks the failed flag, under the lock */
	if (!rc && *seq != last)
		rc = journal_failed(s, "take a batch: a write bypassed the journal", -EIO);
	if (rc)
		return rc;
	rep = rocksdb_writebatch_data(b, &len);
	rc = s->journal.append(s->journal.arg, *seq, rep, len);
	if (rc)
		return journal_failed(s, "append a batch", rc);
	atomic_store(&s->journaled_seq, *seq);
	s->applied_seq = *seq;
	s->applied_term = s->journal.term;
	s->applied_known = true;
	return 0;
}

int journal_write(struct ns_store *s, rocksdb_writebatch_t *b, uint64_t *seq)
{
	int rc;

	if (rocksdb_writebatch_count(b) == 0) {
		/* Nothing changes: no need for the journal to hear of it. */
		*seq = atomic_load(&s->journaled_seq);
		return space_failed(s);
	}
	pthread_mutex_lock(&s->commit_lock);
	rc = journal_commit(s, b, seq);
	pthread_mutex_unlock(&s->commit_lock);
	return rc;
}

/* A batch of nothing but the 'A' key, so that the store holds one even
 * before its first change: ns_snapshot's. */
int journal_mark(struct ns_store *s, uint64_t *seq)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	int rc;

	if (atomic_load(&s->applying)) {
		rocksdb_writebatch_destroy(b);
		return -EROFS;
	}
	pthread_mutex_lock(&s->commit_lock);
	rc = journal_commit(s, b, seq);
	pthread_mutex_unlock(&s->commit_lock);
	rocksdb_writebatch_destroy(b);
	return rc;
}

int journal_sync(struct ns_store *s, uint64_t seq)
{
	int rc;

	if (!s->journal.append || !s->journal.sync)
		return 0;
	rc = s->journal.sync(s->journal.arg, seq);
	return rc ? journal_failed(s, "sync", rc) : 0;
}
