/* The journal's reader (journal.h): a standby's position in the
 * segments, and the records after it applied in order. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_client.h"
#include "journal.h"
#include "journal_segment.h"
#include "mds.h"
#include "objio.h"

#define READ_CHUNK (1u << 20)

struct pando_journal_reader {
	struct pando_mds *mds;
	struct etcd_client *etcd;
	char prefix[256];
	uint64_t seq;  /* the last record applied */
	uint64_t term; /* the term that wrote it (0: not known) */
	struct journal_segment cur;
	bool have; /* cur is the segment being read */
	uint64_t off;
	uint8_t *buf;
	size_t cap;
};

/* The segment to read after cur, or for a reader with none yet, the
 * last segment whose records start at or before seq + 1, moved into
 * *next.  1 when one was found, 0 when there is none yet, -ESTALE when
 * the records right after seq are no longer listed. */
static int find_next(struct pando_journal_reader *r, struct journal_segment *next)
{
	struct journal_segment *segs = NULL;
	size_t n = 0, pick = SIZE_MAX;
	int rc = journal_segments_list(r->etcd, r->prefix, &segs, &n);

	for (size_t i = 0; !rc && i < n; i++) {
		if (r->have && segs[i].index > r->cur.index) {
			pick = i;
			break;
		}
		if (!r->have && segs[i].first_seq <= r->seq + 1)
			pick = i;
	}
	if (!rc && !r->have && pick == SIZE_MAX && n)
		rc = -ESTALE;
	if (!rc && pick != SIZE_MAX) {
		*next = segs[pick];
		segs[pick].map = NULL;
		rc = 1;
	}
	journal_segments_free(segs, n);
	return rc;
}

/* Whether the reader holds records at or past next's start that next's
 * term never had.  A writer lists a segment only once every record
 * before it is on every copy, and a new leader starts after the last
 * record it found, so records the reader holds at or past the first of
 * a later term's segment are ones the next writer never saw: read from
 * an old leader's write that landed late, or never journaled at all by
 * a store that was the active of that ended term.  In the same term,
 * such records are the ones a write that failed on a copy left in cur
 * (journal.c, end_segment), which next starts with again, the same:
 * they are skipped there. */
static bool diverged(const struct pando_journal_reader *r, const struct journal_segment *next)
{
	uint64_t held = r->have ? r->cur.term : r->term;

	return (r->have || held) && next->first_seq <= r->seq && next->term != held;
}

/* Makes next the segment being read, unless the reader diverged from it
 * (-ESTALE). */
static int enter(struct pando_journal_reader *r, struct journal_segment *next)
{
	if (diverged(r, next)) {
		mds_log(MDS_LOG_WARN, __func__,
			"pando: journal %s: holds up to seq %" PRIu64 " of term %" PRIu64
			", past the start of segment %" PRIu64 " (term %" PRIu64
			", from seq %" PRIu64
			"): records of an ended term the next did not have; a new snapshot is needed",
			r->prefix, r->seq, r->have ? r->cur.term : r->term, next->index, next->term,
			next->first_seq);
		pando_map_free(next->map);
		return -ESTALE;
	}
	pando_map_free(r->cur.map);
	r->cur = *next;
	r->have = true;
	r->off = 0;
	return 0;
}

/* Applies the records in buf[n] after the reader's seq; *used gets the
 * bytes of whole records.  The decoder's end: -ENODATA, -EAGAIN or
 * -EINVAL where the records stop, or what apply returned. */
static int apply_records(struct pando_journal_reader *r, size_t n, pando_journal_apply_fn apply,
			 void *arg, size_t *used, size_t *applied)
{
	struct journal_record rec;
	size_t one;
	int rc;

	*used = 0;
	while ((rc = journal_record_decode(r->buf + *used, n - *used, &rec, &one)) == 0) {
		if (rec.seq > r->seq) {
			rc = apply(arg, &rec);
			if (rc)
				return rc;
			r->seq = rec.seq;
			++*applied;
		}
		*used += one;
	}
	return rc;
}

/* Reads on in cur from off: 0 at the end of what it holds now. */
static int read_segment(struct pando_journal_reader *r, pando_journal_apply_fn apply, void *arg,
			size_t *applied)
{
	struct objio io = { .conns = r->mds->conns, .owner = JOURNAL_OBJECT_BIT | r->cur.index };
	size_t n = 0, used;
	int rc;

	for (;;) {
		rc = objio_read(&io, r->cur.map, r->off + r->cap, r->off, r->buf, r->cap, &n);
		if (rc)
			return rc;
		rc = apply_records(r, n, apply, arg, &used, applied);
		r->off += used;
		if (rc != -ENODATA && rc != -EAGAIN && rc != -EINVAL)
			return rc;
		if (rc == -EAGAIN && used == 0 && n == r->cap && r->cap < 2 * JOURNAL_RECORD_MAX) {
			r->cap *= 2;
			r->buf = mds_realloc(r->buf, r->cap);
			continue;
		}
		if (used == 0)
			return 0;
	}
}

int pando_journal_read(struct pando_journal_reader *r, pando_journal_apply_fn apply, void *arg,
		       size_t *applied)
{
	int rc;

	*applied = 0;
	for (;;) {
		struct journal_segment next = { 0 };

		if (r->have) {
			rc = read_segment(r, apply, arg, applied);
			if (rc)
				return rc;
		}
		rc = find_next(r, &next);
		if (rc <= 0)
			return rc;
		/* Records may have reached cur between its end and the listing
		 * of next: read it once more, to the end it has for good. */
		rc = r->have ? read_segment(r, apply, arg, applied) : 0;
		if (!rc)
			rc = enter(r, &next);
		else
			pando_map_free(next.map);
		if (rc)
			return rc;
	}
}

uint64_t pando_journal_reader_seq(const struct pando_journal_reader *r)
{
	return r->seq;
}

int pando_journal_reader_new(struct pando_mds *mds, const char *group, uint64_t after,
			     uint64_t term, struct pando_journal_reader **out)
{
	struct pando_journal_reader *r = mds_calloc(1, sizeof(*r));
	int rc = journal_segment_prefix(mds->cfg.etcd_prefix, group, r->prefix, sizeof(r->prefix));

	r->mds = mds;
	r->seq = after;
	r->term = term;
	r->cap = READ_CHUNK;
	r->buf = mds_malloc(r->cap);
	if (!rc)
		rc = pando_etcd_client_new(mds, 2000, "the journal reader's etcd client", &r->etcd);
	if (rc) {
		pando_journal_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void pando_journal_reader_free(struct pando_journal_reader *r)
{
	if (!r)
		return;
	pando_map_free(r->cur.map);
	if (r->etcd)
		etcd_client_free(r->etcd);
	free(r->buf);
	free(r);
}
