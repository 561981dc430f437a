/* The object side of pando-fsck (fsck_check.h): the report, the order of
 * the steps, and step 3, redundancy.  The steps: what the namespace names
 * (fsck_wants.c), what the OSDs hold (fsck_osds.c), which files are short
 * of copies (here), and the pending intents (fsck_intents.c). */
#include "fsck_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines are short: ids, an OSD address, an errno string. */
#define LINE_MAX_LEN 512

static const char *const kind_names[FSCK_NKINDS] = {
	"orphan objects",
	"missing objects",
	"shared objects",
	"unknown OSDs",
	"unreachable OSDs",
	"undecodable maps",
	"next id",
	"stale components",
	"components on out OSDs",
	"components outside their pool",
};

const char *fsck_kind_name(enum fsck_kind k)
{
	return k < FSCK_NKINDS ? kind_names[k] : "?";
}

/* ---- the report ------------------------------------------------------------ */

void fsck_problem(struct fsck *f, enum fsck_kind k, bool repaired, const char *fmt, ...)
{
	char line[LINE_MAX_LEN];
	va_list ap;

	f->res->t[k].found++;
	f->res->t[k].repaired += repaired;
	if (!f->h->problem)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	f->h->problem(f->h->arg, k, repaired, line);
}

static void say(void (*hook)(void *arg, const char *line), void *arg, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void say(void (*hook)(void *arg, const char *line), void *arg, const char *fmt, va_list ap)
{
	char line[LINE_MAX_LEN];

	if (!hook)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	hook(arg, line);
}

void fsck_detail(struct fsck *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(f->h->detail, f->h->arg, fmt, ap);
	va_end(ap);
}

void fsck_note(struct fsck *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(f->h->note, f->h->arg, fmt, ap);
	va_end(ap);
}

void fsck_phase(struct fsck *f, const char *name)
{
	if (f->h->phase)
		f->h->phase(f->h->arg, name);
}

const char *fsck_outcome(const struct fsck *f, int rc, const char *done, char *buf, size_t cap)
{
	if (!f->o->repair)
		return "";
	if (rc)
		snprintf(buf, cap, ": not repaired: %s", strerror(-rc));
	else
		snprintf(buf, cap, ": %s", done);
	return buf;
}

/* ---- 3. redundancy --------------------------------------------------------- */

static int stale_record(void *arg, const struct ns_damage *dr)
{
	struct fsck *f = arg;

	if (dr->stale)
		fsck_problem(f, FSCK_STALE_COMPONENT, false,
			     "file %llu: its component on osd %u "
			     "is stale (it missed writes): rebuild catches it up",
			     (unsigned long long)dr->ino, dr->osd_id);
	return 0;
}

/* Files short of the copies their scheme wants: a stale component, or one
 * on an OSD the cluster map took out (missing objects are counted above).
 * Reported only: the manager's rebuild restores them. */
static int check_redundancy(struct fsck *f)
{
	const struct fsck_tally *t = f->res->t;
	int rc;

	for (size_t i = 0; i < f->nwants; i++) {
		const struct want *w = &f->wants[i];

		if (!w->intent && fsck_osd_out(f, w->osd))
			fsck_problem(f, FSCK_OUT_COMPONENT, false,
				     "file %llu: object %llu "
				     "(component %u) is on osd %u, which is out: rebuild moves it",
				     (unsigned long long)w->ino, (unsigned long long)w->object,
				     w->component, w->osd);
	}
	rc = ns_damage_list(f->s, 0, stale_record, f);
	if (!rc && t[FSCK_MISSING_OBJECT].found + t[FSCK_STALE_COMPONENT].found +
				   t[FSCK_OUT_COMPONENT].found ==
			   0)
		fsck_note(f, "redundancy: every file has every copy its scheme wants");
	else if (!rc)
		fsck_note(f, "redundancy: some files are short of copies (above)");
	return rc;
}

/* ---- the whole check ------------------------------------------------------- */

int fsck_objects(struct ns_store *s, const struct cluster_map *cluster_map, struct osd_conns *conns,
		 const struct fsck_options *o, const struct fsck_hooks *h, struct fsck_result *res)
{
	static const struct fsck_hooks silent;
	struct fsck f = { .s = s,
			  .cluster_map = cluster_map,
			  .conns = conns,
			  .o = o,
			  .h = h ? h : &silent,
			  .res = res };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = fsck_collect_wants(&f);
	if (!rc)
		rc = fsck_list_osds(&f);
	if (!rc)
		rc = check_redundancy(&f);
	if (!rc)
		rc = fsck_intents(&f);
	free(f.wants);
	free(f.broken);
	free(f.down);
	return rc;
}
