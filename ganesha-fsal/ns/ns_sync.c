/* Group commit.  Batches are written unsynced while the operation holds its
 * inode locks (so a directory's creates do not queue behind each other's
 * fsync), and the operation waits for durability after unlocking.  The WAL
 * is one sequential log: a sync covers every batch written before it, so
 * one thread syncs for all the batches that piled up meanwhile.
 *
 * Other threads may read a batch before it is durable; a crash can then
 * take back something another client saw, but never anything a reply
 * acknowledged as stable: knfsd over a local file system behaves the same.
 *
 * With a journal, durable means in the journal too: the syncing thread
 * syncs the WAL, then the journal, up to the last batch appended (a batch
 * RocksDB already holds may not be in the journal yet: its writer is
 * about to append it, under the commit lock). */
#include "ns_internal.h"

static int sync_wal(struct ns_store *s)
{
	char *err = NULL;
	int rc = space_failed(s);

	if (rc)
		return rc;
	rocksdb_flush_wal(s->db, 1, &err);
	return err ? db_err(s, "sync wal", err) : 0;
}

uint64_t committed_seq(struct ns_store *s)
{
	if (s->journal.append)
		return atomic_load(&s->journaled_seq);
	return rocksdb_get_latest_sequence_number(s->db);
}

/* Returns once every batch up to sequence number seq is on disk. */
int sync_upto(struct ns_store *s, uint64_t seq)
{
	int rc = 0;

	pthread_mutex_lock(&s->sync_lock);
	while (!rc && s->synced_seq < seq) {
		uint64_t upto;

		if (s->syncing) {
			pthread_cond_wait(&s->sync_done, &s->sync_lock);
			continue;
		}
		/* Everything up to here is already in the log file. */
		upto = committed_seq(s);
		s->syncing = true;
		pthread_mutex_unlock(&s->sync_lock);
		rc = sync_wal(s);
		if (!rc)
			rc = journal_sync(s, upto);
		pthread_mutex_lock(&s->sync_lock);
		s->syncing = false;
		if (!rc && upto > s->synced_seq)
			s->synced_seq = upto;
		pthread_cond_broadcast(&s->sync_done);
	}
	pthread_mutex_unlock(&s->sync_lock);
	return rc;
}

int ns_sync(struct ns_store *s)
{
	/* A batch the journal refused is in RocksDB, never to be durable. */
	if (s->journal.append && space_failed(s))
		return space_failed(s);
	return sync_upto(s, committed_seq(s));
}
