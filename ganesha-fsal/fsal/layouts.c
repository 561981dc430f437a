/* Layout bookkeeping, recall and fencing (layouts.h). */
#include "layouts.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fridgethr.h"
#include "fsal_up.h"
#include "objio.h"

#define BUCKETS 1024

struct flayouts {
	uint64_t ino;
	uint32_t gen;
	uint32_t cap_version;           /* 0: not read from the OSDs yet */
	uint64_t epoch;                 /* moves on every recall */
	time_t deadline;                /* of the running recall, 0: none */
	uint64_t commits;               /* LAYOUTCOMMITs while it had layouts */
	bool wrecorded;                 /* its write-layout record is durable */
	bool keep_record;               /* a settle failed: the next start settles */
	uint32_t unsettled;             /* size checks queued, not done */
	/* Rebuild (rebuild.c): while watched, every write counts in writes;
	 * while frozen, no layout is granted and no gateway write starts. */
	uint32_t watched;
	uint32_t frozen;                /* freezes held (a rebuild, a scrub) */
	bool wanted;                    /* someone was refused while frozen */
	uint32_t gw_writers;            /* gateway writes running now */
	uint64_t writes;                /* write grants and gateway writes */
	struct pando_seg *segs;
	struct flayouts *next;
};

struct pando_layouts {
	struct pando_export *exp;
	uint32_t timeout_s;
	pthread_mutex_t lock;
	struct flayouts *bucket[BUCKETS];
	struct pando_layout_stats st;
	bool *osd_was_up;               /* per OSD in the pool, for the watcher */
	pthread_t watcher;
	pthread_cond_t cond;
	bool stop;
};

static struct flayouts **slot(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts **p = &l->bucket[ino % BUCKETS];

	while (*p && (*p)->ino != ino)
		p = &(*p)->next;
	return p;
}

static struct flayouts *file_get(struct pando_layouts *l, uint64_t ino, bool create)
{
	struct flayouts **p = slot(l, ino);

	if (!*p && create) {
		*p = gsh_calloc(1, sizeof(**p));
		(*p)->ino = ino;
		l->st.files++;
	}
	return *p;
}

static void file_put(struct pando_layouts *l, struct flayouts *f)
{
	struct flayouts **p;

	if (f->segs || f->deadline || f->wrecorded || f->unsettled || f->watched ||
	    f->gw_writers || f->frozen)
		return;
	p = slot(l, f->ino);
	*p = f->next;
	gsh_free(f);
	l->st.files--;
}

/* The caller's address as admins write it: IPv4 plainly, also when
 * Ganesha's socket shows it IPv4-mapped (::ffff:a.b.c.d). */
void pando_caller_address(char *buf, size_t cap)
{
	const struct sockaddr_storage *sa = (const void *)op_ctx->caller_addr;
	const struct sockaddr_in6 *s6 = (const void *)sa;

	buf[0] = 0;
	if (!sa)
		return;
	if (sa->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, cap);
	else if (sa->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, cap);
	else if (sa->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, cap);
}

static void client_name(char *buf, size_t cap)
{
	pando_caller_address(buf, cap);
}

/* Under l->lock, which it drops while the record is written: the file's
 * write-layout record is durable (restart.c reads it after a crash).
 * Returns the file's entry, found again. */
static int record_writer(struct pando_layouts *l, uint64_t ino, struct flayouts **f)
{
	int rc;

	if ((*f)->wrecorded)
		return 0;
	pthread_mutex_unlock(&l->lock);
	rc = ns_wlayout_add(l->exp->ns, ino);
	pthread_mutex_lock(&l->lock);
	*f = file_get(l, ino, true);
	if (rc) {
		LogMajor(COMPONENT_PNFS, "pando: inode %" PRIu64 ": write layout not recorded (%d)",
			 ino, rc);
		return rc;
	}
	(*f)->wrecorded = true;
	return 0;
}

static bool has_writers(const struct flayouts *f)
{
	for (const struct pando_seg *s = f->segs; s; s = s->next)
		if (s->write)
			return true;
	return false;
}

/* Under l->lock: once no write layout is out and no size check pending,
 * the record has served its purpose.  Deleted under the lock, so that a
 * grant cannot record the file in between and lose its record. */
static void forget_writer(struct pando_layouts *l, struct flayouts *f)
{
	int rc;

	if (!f->wrecorded || f->keep_record || f->unsettled || has_writers(f))
		return;
	rc = ns_wlayout_del(l->exp->ns, f->ino);
	if (rc)
		LogInfo(COMPONENT_PNFS,
			"pando: inode %" PRIu64 ": write-layout record left (%d): settled at next start",
			f->ino, rc);
	f->wrecorded = false;
}

int pando_layouts_grant(struct pando_layouts *l, uint64_t ino, uint32_t gen, bool write,
			uint32_t cap_version, struct pando_seg **out)
{
	struct pando_seg *seg;
	struct flayouts *f;
	int rc;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, true);
	f->wanted |= f->frozen > 0;
	rc = f->deadline || f->frozen ? -EAGAIN : write ? record_writer(l, ino, &f) : 0;
	if (!rc && (f->deadline || f->frozen))
		rc = -EAGAIN;   /* a recall began while the record was written */
	if (rc) {
		forget_writer(l, f);
		file_put(l, f);
		pthread_mutex_unlock(&l->lock);
		return rc;
	}
	seg = gsh_calloc(1, sizeof(*seg));
	seg->owner = l;
	seg->ino = ino;
	seg->clientid = op_ctx->clientid ? *op_ctx->clientid : 0;
	client_name(seg->client, sizeof(seg->client));
	seg->write = write;
	seg->epoch = f->epoch;
	seg->commits_at_grant = f->commits;
	f->writes += write;
	f->gen = gen;
	if (!f->cap_version)
		f->cap_version = cap_version;
	seg->next = f->segs;
	f->segs = seg;
	l->st.segments++;
	l->st.granted++;
	pthread_mutex_unlock(&l->lock);
	*out = seg;
	return 0;
}

static void unlink_seg(struct pando_layouts *l, struct pando_seg *seg)
{
	struct flayouts *f = file_get(l, seg->ino, false);
	struct pando_seg **p;

	if (!f)
		return;
	for (p = &f->segs; *p; p = &(*p)->next) {
		if (*p == seg) {
			*p = seg->next;
			l->st.segments--;
			break;
		}
	}
	forget_writer(l, f);
	file_put(l, f);
}

void pando_layouts_ungrant(struct pando_layouts *l, struct pando_seg *seg)
{
	pthread_mutex_lock(&l->lock);
	unlink_seg(l, seg);
	l->st.granted--;
	pthread_mutex_unlock(&l->lock);
	gsh_free(seg);
}

void pando_layouts_committed(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f)
		f->commits++;
	pthread_mutex_unlock(&l->lock);
}

/* Under l->lock: a write segment, neither fenced nor from before a
 * recall, that saw no LAYOUTCOMMIT of its file (settle.c says why that
 * matters). */
static bool ends_uncommitted(struct pando_layouts *l, const struct pando_seg *seg)
{
	struct flayouts *f = file_get(l, seg->ino, false);

	return seg->write && !seg->fenced && f && f->epoch == seg->epoch &&
	       f->commits == seg->commits_at_grant;
}

void pando_layouts_returned(struct pando_layouts *l, struct pando_seg *seg)
{
	uint64_t ino = seg->ino;
	struct flayouts *f;
	bool settle;

	pthread_mutex_lock(&l->lock);
	settle = ends_uncommitted(l, seg);
	f = file_get(l, ino, false);
	if (settle && f)
		f->unsettled++;     /* keeps the record until the check is done */
	unlink_seg(l, seg);
	l->st.returned++;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	gsh_free(seg);
	if (settle)
		pando_settle_size_async(l->exp, ino);
}

void pando_layouts_settled(struct pando_layouts *l, uint64_t ino, bool ok)
{
	struct flayouts *f;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f) {
		if (f->unsettled)
			f->unsettled--;
		f->keep_record |= !ok;
		forget_writer(l, f);
		file_put(l, f);
	}
	pthread_mutex_unlock(&l->lock);
}

bool pando_layouts_stale(struct pando_layouts *l, const struct pando_seg *seg)
{
	struct flayouts *f;
	bool stale;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, seg->ino, false);
	stale = seg->fenced || (f && f->epoch != seg->epoch);
	pthread_mutex_unlock(&l->lock);
	return stale;
}

int pando_layouts_cap_version(struct pando_layouts *l, uint64_t ino,
			      const struct pando_storage_map *map, bool fresh, uint32_t *ver)
{
	struct flayouts *f;
	uint32_t v = 0;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f)
		v = f->cap_version;
	pthread_mutex_unlock(&l->lock);
	if (!v) {
		if (fresh)
			v = OBJIO_CAP_VERSION_NEW;
		else
			rc = pando_objects_cap_version(l->exp, map, &v);
		if (rc)
			return rc;
		pthread_mutex_lock(&l->lock);
		f = file_get(l, ino, true);
		if (!f->cap_version)
			f->cap_version = v;
		v = f->cap_version;
		file_put(l, f);
		pthread_mutex_unlock(&l->lock);
	}
	*ver = v;
	return 0;
}

static void send_recall(struct pando_layouts *l, uint64_t ino, uint32_t gen,
			enum layoutrecall_howspec how, uint64_t client)
{
	struct pando_export *exp = l->exp;
	struct pnfs_segment whole = { .io_mode = LAYOUTIOMODE4_ANY, .offset = 0,
				      .length = NFS4_UINT64_MAX };
	struct layoutrecall_spec spec = { .how = how, .u.client = client };
	uint8_t key[PANDO_FH_LEN];
	struct gsh_buffdesc handle = { .addr = key, .len = PANDO_FH_LEN };
	fsal_status_t st;

	pando_fh_encode(exp, ino, gen, NS_REG, key);
	/* Asynchronous: the up-call takes state locks a caller may hold. */
	st = up_async_layoutrecall(general_fridge, exp->export.up_ops, &handle,
				   LAYOUT4_FLEX_FILES, true, &whole, NULL,
				   how == layoutrecall_not_specced ? NULL : &spec, NULL, NULL);
	if (FSAL_IS_ERROR(st))
		LogMajor(COMPONENT_PNFS, "pando: recall of inode %" PRIu64 " not sent: %s", ino,
			 msg_fsal_err(st.major));
}

/* Under l->lock: marks the segments a recall covers; true if any. */
static bool mark_recalled(struct pando_layouts *l, struct flayouts *f, uint64_t except,
			  bool writers_only, const char *client)
{
	bool any = false;

	for (struct pando_seg *s = f->segs; s; s = s->next) {
		if (s->fenced || (except && s->clientid == except) || (writers_only && !s->write))
			continue;
		if (client && strcmp(client, s->client) != 0)
			continue;
		s->recalled = true;
		any = true;
	}
	return any;
}

static bool recall_pending(const struct flayouts *f)
{
	for (const struct pando_seg *s = f->segs; s; s = s->next)
		if (s->recalled && !s->fenced)
			return true;
	return false;
}

int pando_layouts_recall_file(struct pando_layouts *l, uint64_t ino, uint64_t except,
			      bool writers_only, const char *why)
{
	struct flayouts *f;
	bool send = false;
	uint32_t gen = 0;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f && mark_recalled(l, f, except, writers_only, NULL)) {
		if (!f->deadline) {
			f->deadline = time(NULL) + l->timeout_s;
			f->epoch++;
			l->st.recalls++;
			send = true;
			gen = f->gen;
		}
		rc = -EBUSY;
	}
	pthread_mutex_unlock(&l->lock);
	if (send) {
		LogEvent(COMPONENT_PNFS, "pando: recalling the layouts of inode %" PRIu64 " (%s)",
			 ino, why);
		send_recall(l, ino, gen, except ? layoutrecall_howspec_complement
						: layoutrecall_not_specced, except);
	}
	return rc;
}

int pando_layouts_recall_and_wait(struct pando_layouts *l, uint64_t ino, uint64_t except,
				  bool writers_only, const char *why, uint32_t max_ms)
{
	struct timespec until;
	int rc = pando_layouts_recall_file(l, ino, except, writers_only, why);

	if (rc != -EBUSY)
		return rc;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += max_ms / 1000;
	until.tv_nsec += (long)(max_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&l->lock);
	for (;;) {
		struct flayouts *f = file_get(l, ino, false);

		if (!f || !recall_pending(f)) {
			rc = 0;
			break;
		}
		if (pthread_cond_timedwait(&l->cond, &l->lock, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

int pando_layouts_recall_client(struct pando_layouts *l, const char *client, const char *why)
{
	/* ganesha_mgr shows IPv4 clients IPv4-mapped; the records keep a.b.c.d. */
	if (!strncmp(client, "::ffff:", 7) && strchr(client, '.'))
		client += 7;
	uint64_t inos[64], ids[64];
	uint32_t gens[64];
	int n = 0;

	pthread_mutex_lock(&l->lock);
	for (int b = 0; b < BUCKETS && n < 64; b++) {
		for (struct flayouts *f = l->bucket[b]; f && n < 64; f = f->next) {
			if (!mark_recalled(l, f, 0, false, *client ? client : NULL))
				continue;
			if (!f->deadline) {
				f->deadline = time(NULL) + l->timeout_s;
				f->epoch++;
				l->st.recalls++;
			}
			inos[n] = f->ino;
			gens[n] = f->gen;
			ids[n] = 0;
			for (struct pando_seg *s = f->segs; s; s = s->next)
				if (s->recalled && !ids[n])
					ids[n] = s->clientid;
			n++;
		}
	}
	pthread_mutex_unlock(&l->lock);
	for (int i = 0; i < n; i++) {
		LogEvent(COMPONENT_PNFS, "pando: recalling inode %" PRIu64 " from %s (%s)", inos[i],
			 *client ? client : "every client", why);
		send_recall(l, inos[i], gens[i],
			    *client ? layoutrecall_howspec_exactly : layoutrecall_not_specced,
			    ids[i]);
	}
	return n;
}

static bool osd_answers(struct pando_export *exp, uint32_t id)
{
	return osd_conns_ping(exp->conns, id) == 0;
}

void pando_layouts_note_io_error(struct pando_layouts *l, uint64_t ino, uint32_t osd_id,
				 int32_t status, uint32_t opnum)
{
	/* A client that could not write a mirror left it behind, but its word
	 * alone does not make the mirror stale: a handle the OSD refused (a
	 * recall, a fence) says nothing of the mirror, and the client resends
	 * through the manager, which writes every mirror.  Stale only when
	 * the OSD does not answer the manager either. */
	bool refused = status == NFS4ERR_STALE || status == NFS4ERR_ACCESS ||
		       status == NFS4ERR_BADHANDLE || status == NFS4ERR_PERM ||
		       status == NFS4ERR_FHEXPIRED;
	bool answers = osd_answers(l->exp, osd_id);
	bool stale;
	int rc;

	pthread_mutex_lock(&l->lock);
	l->st.io_errors++;
	pthread_mutex_unlock(&l->lock);
	/* Linux reports a data server it could not use as NXIO, whether the
	 * OSD refused the handle or could not be reached: the manager asks. */
	if (refused || (status == NFS4ERR_NXIO && answers)) {
		LogInfo(COMPONENT_PNFS,
			"pando: OSD %u refused a client's handle for inode %" PRIu64
			" (nfsstat4 %d, op %u): a recalled or fenced layout, not damage",
			osd_id, ino, status, opnum);
		return;
	}
	stale = (opnum == NFS4_OP_WRITE || opnum == NFS4_OP_COMMIT) && !answers;
	rc = ns_suspect_add(l->exp->ns, ino, osd_id, status, opnum, stale);
	LogWarn(COMPONENT_PNFS,
		"pando: a client reported nfsstat4 %d (op %u) from OSD %u on inode %" PRIu64
		": component %s, %s", status, opnum, osd_id, ino, stale ? "stale" : "suspect",
		rc ? "NOT recorded" : "damage recorded");
}

/* Distinct holders of the layouts out now (a small sorted set). */
uint64_t pando_layouts_holders(struct pando_layouts *l)
{
	uint64_t ids[256];
	size_t n = 0;
	bool more = false;

	pthread_mutex_lock(&l->lock);
	for (int b = 0; b < BUCKETS; b++) {
		for (struct flayouts *f = l->bucket[b]; f; f = f->next) {
			for (struct pando_seg *s = f->segs; s; s = s->next) {
				size_t i = 0;

				while (i < n && ids[i] != s->clientid)
					i++;
				if (i < n)
					continue;
				if (n < 256)
					ids[n++] = s->clientid;
				else
					more = true;
			}
		}
	}
	pthread_mutex_unlock(&l->lock);
	/* Past 256 the count says "at least". */
	return n + (more ? 1 : 0);
}

void pando_layouts_stats(struct pando_layouts *l, struct pando_layout_stats *out)
{
	pthread_mutex_lock(&l->lock);
	*out = l->st;
	pthread_mutex_unlock(&l->lock);
}

int pando_layouts_write_begin(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, true);
	if (f->frozen) {
		rc = -EBUSY;
		f->wanted = true;
		file_put(l, f);
	} else {
		f->gw_writers++;
		f->writes++;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

void pando_layouts_write_end(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f && f->gw_writers) {
		f->gw_writers--;
		pthread_cond_broadcast(&l->cond);
		file_put(l, f);
	}
	pthread_mutex_unlock(&l->lock);
}

uint64_t pando_layouts_watch(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;
	uint64_t mark;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, true);
	f->watched++;
	/* A writer already at work may write at any moment: dirty at once. */
	mark = has_writers(f) || f->gw_writers ? UINT64_MAX : f->writes;
	pthread_mutex_unlock(&l->lock);
	return mark;
}

bool pando_layouts_written_since(struct pando_layouts *l, uint64_t ino, uint64_t mark)
{
	struct flayouts *f;
	bool written;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	written = mark == UINT64_MAX || !f || f->writes != mark;
	pthread_mutex_unlock(&l->lock);
	return written;
}

/* Under l->lock: no write layout left unfenced and no gateway write. */
static bool quiet(struct flayouts *f)
{
	for (const struct pando_seg *s = f->segs; s; s = s->next)
		if (s->write && !s->fenced)
			return false;
	return f->gw_writers == 0;
}

static int wait_quiet(struct pando_layouts *l, uint64_t ino, uint32_t max_s)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += max_s;
	pthread_mutex_lock(&l->lock);
	while (!quiet(file_get(l, ino, true)) && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&l->cond, &l->lock, &until);
	rc = quiet(file_get(l, ino, true)) ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&l->lock);
	return rc;
}

int pando_layouts_freeze(struct pando_layouts *l, uint64_t ino, const char *why)
{
	struct flayouts *f;
	int rc;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, true);
	if (!f->frozen++)
		f->wanted = false;
	pthread_mutex_unlock(&l->lock);
	pando_layouts_recall_file(l, ino, 0, true, why);
	/* Holders get the recall timeout, then the watcher fences them. */
	rc = wait_quiet(l, ino, l->timeout_s + 5);
	if (rc)
		pando_layouts_thaw(l, ino);
	return rc;
}

bool pando_layouts_wanted(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;
	bool wanted;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	wanted = f && f->wanted;
	pthread_mutex_unlock(&l->lock);
	return wanted;
}

/* Writers at work now: write layouts out, or gateway writes running. */
bool pando_layouts_busy(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;
	bool busy;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	busy = f && (has_writers(f) || f->gw_writers || f->deadline);
	pthread_mutex_unlock(&l->lock);
	return busy;
}

void pando_layouts_thaw(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f && f->frozen) {
		f->frozen--;
		pthread_cond_broadcast(&l->cond);
		file_put(l, f);
	}
	pthread_mutex_unlock(&l->lock);
}

void pando_layouts_unwatch(struct pando_layouts *l, uint64_t ino)
{
	struct flayouts *f;

	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f && f->watched) {
		f->watched--;
		file_put(l, f);
	}
	pthread_mutex_unlock(&l->lock);
}

/* Revokes the handles of every layout of the file: a new capability
 * version on each component object.  Components on unreachable OSDs
 * cannot be fenced; those OSDs serve nobody meanwhile. */
static void fence(struct pando_layouts *l, uint64_t ino, uint32_t cur)
{
	struct pando_storage_map *map;
	struct flayouts *f;
	uint32_t next, failed;

	if (pando_map_load(l->exp, ino, &map) != 0)
		return;
	pando_objects_fence(l->exp, map, cur, &next, &failed);
	pando_map_free(map);
	pthread_mutex_lock(&l->lock);
	f = file_get(l, ino, false);
	if (f) {
		f->cap_version = next;
		for (struct pando_seg *s = f->segs; s; s = s->next) {
			if (s->recalled && !s->fenced) {
				s->fenced = true;
				l->st.fenced++;
				LogWarn(COMPONENT_PNFS,
					"pando: %s did not return its layout of inode %" PRIu64
					" in time: fenced (capability version %u%s)",
					s->client, ino, next, failed ? ", some OSDs unreachable" : "");
			}
		}
		f->deadline = 0;
		file_put(l, f);
	}
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

/* Under l->lock: finished recalls end; overdue ones are collected. */
static int overdue(struct pando_layouts *l, time_t now, uint64_t *inos, uint32_t *vers, int max)
{
	int n = 0;

	for (int b = 0; b < BUCKETS; b++) {
		for (struct flayouts *f = l->bucket[b], *next; f; f = next) {
			next = f->next;
			if (!f->deadline)
				continue;
			if (!recall_pending(f)) {
				f->deadline = 0;
				file_put(l, f);
			} else if (now >= f->deadline && n < max) {
				inos[n] = f->ino;
				vers[n++] = f->cap_version;
			}
		}
	}
	return n;
}

/* Files whose layouts name an OSD that just became unreachable, or that
 * the cluster map took out. */
void pando_layouts_recall_osd(struct pando_layouts *l, uint32_t osd_id, const char *why)
{
	uint64_t inos[256];
	int n = 0;

	pthread_mutex_lock(&l->lock);
	for (int b = 0; b < BUCKETS && n < 256; b++)
		for (struct flayouts *f = l->bucket[b]; f && n < 256; f = f->next)
			if (f->segs)
				inos[n++] = f->ino;
	pthread_mutex_unlock(&l->lock);
	for (int i = 0; i < n; i++) {
		struct pando_storage_map *map;
		bool uses = false;

		if (pando_map_load(l->exp, inos[i], &map) != 0)
			continue;
		for (uint32_t c = 0; c < pando_map_width(map) * map->groups; c++)
			uses |= map->comp[c].osd_id == osd_id;
		pando_map_free(map);
		if (uses)
			pando_layouts_recall_file(l, inos[i], 0, false, why);
	}
}

/* A NULL call to each OSD: with pNFS the manager hardly talks to the
 * OSDs itself, so it asks, to notice a dead one within seconds. */
static void probe_osds(struct pando_layouts *l)
{
	for (size_t i = 0; i < osd_conns_count(l->exp->conns); i++) {
		struct osd_health h;

		osd_conns_health(l->exp->conns, i, &h);
		osd_conns_ping(l->exp->conns, h.id);
	}
}

static void watch_osds(struct pando_layouts *l)
{
	probe_osds(l);
	for (size_t i = 0; i < osd_conns_count(l->exp->conns); i++) {
		struct osd_health h;

		osd_conns_health(l->exp->conns, i, &h);
		if (l->osd_was_up[i] && !h.reachable) {
			LogWarn(COMPONENT_PNFS, "pando: OSD %u is unreachable (%d)", h.id,
				h.last_error);
			pando_layouts_recall_osd(l, h.id, "an OSD it uses is unreachable");
		}
		l->osd_was_up[i] = h.reachable;
	}
}

static void *watcher_main(void *arg)
{
	struct pando_layouts *l = arg;
	uint64_t inos[64];
	uint32_t vers[64];

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		struct timespec until;
		int n = overdue(l, time(NULL), inos, vers, 64);

		pthread_mutex_unlock(&l->lock);
		for (int i = 0; i < n; i++)
			fence(l, inos[i], vers[i]);
		watch_osds(l);
		pthread_mutex_lock(&l->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		if (!l->stop)
			pthread_cond_timedwait(&l->cond, &l->lock, &until);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int pando_layouts_new(struct pando_export *exp, uint32_t recall_timeout_s,
		      struct pando_layouts **out)
{
	struct pando_layouts *l = gsh_calloc(1, sizeof(*l));
	int rc;

	l->exp = exp;
	l->timeout_s = recall_timeout_s;
	/* Room for every OSD the pool may grow to (cluster maps). */
	l->osd_was_up = gsh_calloc(CLUSTER_DESC_MAX_OSDS, sizeof(bool));
	for (size_t i = 0; i < CLUSTER_DESC_MAX_OSDS; i++)
		l->osd_was_up[i] = true;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	rc = pthread_create(&l->watcher, NULL, watcher_main, l);
	if (rc) {
		pthread_mutex_destroy(&l->lock);
		pthread_cond_destroy(&l->cond);
		gsh_free(l->osd_was_up);
		gsh_free(l);
		return -rc;
	}
	*out = l;
	return 0;
}

void pando_layouts_free(struct pando_layouts *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->watcher, NULL);
	for (int b = 0; b < BUCKETS; b++) {
		for (struct flayouts *f = l->bucket[b], *next; f; f = next) {
			next = f->next;
			/* Ganesha still holds the segments and frees them
			 * when it disposes of them (mds.c). */
			for (struct pando_seg *s = f->segs; s; s = s->next)
				s->owner = NULL;
			gsh_free(f);
		}
	}
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	gsh_free(l->osd_was_up);
	gsh_free(l);
}
