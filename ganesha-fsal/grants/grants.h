/* pando_grants: the layouts handed out, their recalls, recall counts and fences,
 * as a state machine with no Ganesha, ntirpc or store types in it.
 *
 * Every segment granted is recorded against its file.  A change another
 * client must not race (a truncate, a gateway write, a map change, an
 * admin request, an OSD going down) recalls the file's segments: the file
 * gets a deadline and its recall count moves, and new grants are refused (-EAGAIN)
 * until every recalled segment is returned.  A holder that has not
 * returned its segments by the deadline is fenced (pando_grants_tick):
 * the file's objects get a new capability version, and fenced segments
 * no longer count.  A client's last write segment of a file to come back
 * takes its write handles with it: the file's objects get a new version
 * for writers (pando_grant_end), which leaves every read handle good.
 * Rebuild, scrub and transcoding freeze a file: no new grant or gateway
 * write, its writers recalled, then fenced.
 *
 * What it needs from outside comes through struct pando_grants_ops,
 * given at creation.  One mutex guards all of it; callbacks are called
 * with it dropped unless their comment says otherwise. */
#ifndef PANDO_GRANTS_H
#define PANDO_GRANTS_H

#include <stdbool.h>
#include <stdint.h>

struct pando_grants;

/* One segment handed out.  The holder of the pointer (Ganesha keeps it
 * as the segment's fsal_seg_data) gives it back with pando_grant_end. */
struct pando_grant {
	struct pando_grants *owner; /* NULL once the grants were freed */
	uint64_t ino;
	uint64_t clientid;
	char client[64];           /* the holder's address, for admins */
	bool write;                /* iomode RW */
	bool recalled;             /* a recall covers it */
	bool fenced;               /* its handles were revoked */
	uint32_t cap_version;      /* the version its handles carry */
	uint64_t recalls;          /* the file's recall count when granted */
	uint64_t commits_at_grant; /* the file's LAYOUTCOMMIT count then */
	struct pando_grant *next;  /* in the file's list */
};

struct pando_layout_stats {
	uint64_t files;    /* files with layouts out now */
	uint64_t segments; /* segments out now */
	uint64_t granted;
	uint64_t returned;
	uint64_t recalls;
	uint64_t fenced;
	uint64_t io_errors; /* reported in LAYOUTRETURN bodies */
};

/* Whom a recall up-call names. */
enum pando_recall_scope {
	PANDO_RECALL_ALL,     /* every holder of the file */
	PANDO_RECALL_ALL_BUT, /* every holder but clientid */
	PANDO_RECALL_ONLY,    /* clientid alone */
};

struct pando_recall {
	uint64_t ino;
	uint32_t gen; /* the file's generation at its last grant */
	enum pando_recall_scope scope;
	uint64_t clientid;
	const char *client; /* the address asked for, NULL: a file recall */
	const char *why;    /* for the log */
};

enum pando_grants_level {
	PANDO_GRANTS_INFO,
	PANDO_GRANTS_EVENT,
	PANDO_GRANTS_WARN,
	PANDO_GRANTS_MAJOR
};

struct pando_grants_ops {
	void *arg;
	/* Monotonic seconds (deadlines); under the lock. */
	uint64_t (*now)(void *arg);
	/* Sends the recall up-call: asynchronous, the holders answer later. */
	void (*recall)(void *arg, const struct pando_recall *r);
	/* Moves the capability version of the file's objects past cur: *next
	 * is the new one, *failed the components that could not be reached.
	 * -errno when nothing was tried (the fence is retried next tick). */
	int (*fence)(void *arg, uint64_t ino, uint32_t cur, uint32_t *next, uint32_t *failed);
	/* Moves the version of the file's objects past cur for write handles
	 * only, read handles stay good: *next is the new one.  -errno when
	 * the holder's write handles may still work somewhere (the file is
	 * then fenced at the next tick). */
	int (*revoke_writers)(void *arg, uint64_t ino, uint32_t cur, uint32_t *next);
	/* The file's write-layout record (a crash leaves it to be settled):
	 * written durably before a file's first write grant, deleted (under
	 * the lock, so no grant records the file in between) once nothing
	 * needs it. */
	int (*mark_writer)(void *arg, uint64_t ino);
	int (*unmark_writer)(void *arg, uint64_t ino);
	/* A write segment ended with no LAYOUTCOMMIT of its file since its
	 * grant: check the size, then call pando_grants_settled. */
	void (*settle)(void *arg, uint64_t ino);
	/* True if the file's map names the OSD. */
	bool (*uses_osd)(void *arg, uint64_t ino, uint32_t osd_id);
	/* A line for the log; may be under the lock. */
	void (*log)(void *arg, enum pando_grants_level level, const char *msg);
};

int pando_grants_new(const struct pando_grants_ops *ops, uint32_t recall_timeout_s,
		     struct pando_grants **out);
/* Segments still held are left to their holders, owner NULL. */
void pando_grants_free(struct pando_grants *g);

/* The capability version the file's handles carry, or 0 while it is not
 * known (no layouts out): the caller reads it from the OSDs and _set's
 * it, which returns the version that stands (one set meanwhile, or the
 * first grant's, wins).  Kept while the file has layouts out. */
uint32_t pando_grants_cap_version(struct pando_grants *g, uint64_t ino);
int pando_grants_set_cap_version(struct pando_grants *g, uint64_t ino, uint32_t ver,
				 uint32_t *stands);

struct pando_grant_ask {
	uint64_t ino;
	uint32_t gen;
	bool write;
	uint32_t cap_version;
	uint64_t clientid;
	const char *client;
};

/* Records a granted segment; -EAGAIN while the file is being recalled or
 * is frozen (LAYOUTTRYLATER), or the mark_writer error. */
int pando_grants_grant(struct pando_grants *g, const struct pando_grant_ask *ask,
		       struct pando_grant **out);
/* Takes back a grant the caller did not hand out after all. */
void pando_grants_ungrant(struct pando_grants *g, struct pando_grant *seg);
/* The segment is returned (or disposed of); frees it, also when its
 * grants are gone.  If it was its holder's last write segment of the
 * file, the holder's write handles are revoked first (revoke_writers,
 * called with the lock dropped; write grants of the file wait meanwhile
 * with -EAGAIN), so that once a recall sees it back nothing the holder
 * still sends lands.  A revocation takes every holder's write handles:
 * one given back unasked while other holders write leaves it to the
 * last writer's return. */
void pando_grant_end(struct pando_grant *seg);
/* The segment was taken from its holder, not given back: Ganesha
 * revoked it (a recall it could not deliver or that went unanswered, a
 * client whose lease expired).  Ends it as pando_grant_end does; for a
 * write segment the file is fenced at the next tick, since the holder
 * may still write with the handles it has, and no grant is made until
 * then. */
void pando_grant_revoked(struct pando_grant *seg);
/* The size check a return asked for is done (ok: the size is right, or
 * the file changed or went meanwhile; not ok: the record is kept for
 * the next start). */
void pando_grants_settled(struct pando_grants *g, uint64_t ino, bool ok);
/* A LAYOUTCOMMIT of the file went through. */
void pando_grants_committed(struct pando_grants *g, uint64_t ino);
/* True if fenced or granted before the file's last recall: its
 * LAYOUTCOMMIT must not grow a file someone truncated since. */
bool pando_grants_stale(struct pando_grants *g, const struct pando_grant *seg);

/* Recalls the file's segments (write segments only, with writers_only)
 * held by clients other than `except` (0: none excepted).  -EBUSY while
 * such segments are out and not fenced or a revoked segment's fence is
 * due, 0 when there are none. */
int pando_grants_recall_file(struct pando_grants *g, uint64_t ino, uint64_t except,
			     bool writers_only, const char *why);
/* The same, then waits up to max_ms for them to come back. */
int pando_grants_recall_and_wait(struct pando_grants *g, uint64_t ino, uint64_t except,
				 bool writers_only, const char *why, uint32_t max_ms);
/* Recalls every segment of the holder with this address ("": all);
 * returns the number of files (at most 64 per call). */
int pando_grants_recall_client(struct pando_grants *g, const char *client, const char *why);
/* Recalls every file with segments out whose map names the OSD. */
void pando_grants_recall_osd(struct pando_grants *g, uint32_t osd_id, const char *why);
/* Recalls that ended are closed; holders past their deadline are
 * fenced.  Called every second. */
void pando_grants_tick(struct pando_grants *g);

void pando_grants_count_io_error(struct pando_grants *g);
void pando_grants_stats(struct pando_grants *g, struct pando_layout_stats *out);
/* Distinct clients holding segments now (past 256: at least 257). */
uint64_t pando_grants_holders(struct pando_grants *g);

/* Gateway writes to a file's objects run between write_begin and
 * write_end; write_begin is -EBUSY while the file is frozen. */
int pando_grants_write_begin(struct pando_grants *g, uint64_t ino);
void pando_grants_write_end(struct pando_grants *g, uint64_t ino);
/* Starts counting the file's writes (write grants, gateway writes) and
 * returns a mark; written_since(mark) is true once one happened after it
 * (at once if a writer was already at work).  Ends with unwatch. */
uint64_t pando_grants_watch(struct pando_grants *g, uint64_t ino);
bool pando_grants_written_since(struct pando_grants *g, uint64_t ino, uint64_t mark);
void pando_grants_unwatch(struct pando_grants *g, uint64_t ino);
/* No new grant and no new gateway write for the file; recalls its write
 * segments and waits until each is returned or fenced and every gateway
 * write has ended.  -ETIMEDOUT (nothing held) after the recall timeout
 * and a margin.  Freezes nest; each successful one ends with one thaw. */
int pando_grants_freeze(struct pando_grants *g, uint64_t ino, const char *why);
void pando_grants_thaw(struct pando_grants *g, uint64_t ino);
/* A grant or gateway write was refused since the freeze. */
bool pando_grants_wanted(struct pando_grants *g, uint64_t ino);
/* Write segments out, a gateway write running, or a recall under way. */
bool pando_grants_busy(struct pando_grants *g, uint64_t ino);

#endif
