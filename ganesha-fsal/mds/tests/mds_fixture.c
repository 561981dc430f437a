#include "mds_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grants.h"
#include "journal.h"
#include "objio.h"
#include "view.h"
#include "osd_conns.h"
#include "pando/osd_ctl_client.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_lines[MDS_FIXTURE_LOG_LINES][512];
static int nlog;

static void capture(enum mds_log_level level, const char *func, const char *msg)
{
	static const char *const names[] = { "CRIT", "MAJ", "WARN", "EVENT", "INFO", "DEBUG" };

	pthread_mutex_lock(&log_lock);
	snprintf(log_lines[nlog % MDS_FIXTURE_LOG_LINES], sizeof(log_lines[0]), "%s %s: %s",
		 names[level], func, msg);
	nlog++;
	pthread_mutex_unlock(&log_lock);
	if (getenv("MDS_FIXTURE_VERBOSE"))
		fprintf(stderr, "%s %s: %s\n", names[level], func, msg);
}

int mds_fixture_log_find(const char *needle)
{
	int found = 0;

	pthread_mutex_lock(&log_lock);
	for (int i = 0; i < nlog && i < MDS_FIXTURE_LOG_LINES; i++)
		found += strstr(log_lines[i], needle) != NULL;
	pthread_mutex_unlock(&log_lock);
	return found;
}

int mds_fixture_log_first(const char *needle)
{
	int at = -1;

	pthread_mutex_lock(&log_lock);
	for (int i = 0; at < 0 && i < nlog && i < MDS_FIXTURE_LOG_LINES; i++)
		if (strstr(log_lines[i], needle))
			at = i;
	pthread_mutex_unlock(&log_lock);
	return at;
}

void mds_fixture_log_clear(void)
{
	pthread_mutex_lock(&log_lock);
	nlog = 0;
	pthread_mutex_unlock(&log_lock);
}

static struct fake_host *host_of(struct pando_mds *mds)
{
	return &((struct mds_fixture *)((char *)mds - offsetof(struct mds_fixture, mds)))->host;
}

static void bump(struct fake_host *h, unsigned *counter)
{
	(*counter)++;
	pthread_cond_broadcast(&h->changed);
}

static void fake_recall(struct pando_mds *mds, const struct pando_recall *r)
{
	struct fake_host *h = host_of(mds);

	pthread_mutex_lock(&h->lock);
	h->last_recall_ino = r->ino;
	bump(h, &h->recalls);
	pthread_mutex_unlock(&h->lock);
}

struct job {
	struct fake_host *h;
	void (*fn)(void *job);
	void *arg;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	j->fn(j->arg);
	pthread_mutex_lock(&j->h->lock);
	bump(j->h, &j->h->jobs_run);
	pthread_mutex_unlock(&j->h->lock);
	free(j);
	return NULL;
}

/* A thread per job: the engine's jobs may wait on locks its caller holds,
 * as they would on Ganesha's fridge. */
static int fake_submit(struct pando_mds *mds, void (*fn)(void *job), void *job)
{
	struct fake_host *h = host_of(mds);
	struct job *j;
	pthread_t t;

	if (h->refuse_jobs)
		return -ESHUTDOWN;
	j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct job){ .h = h, .fn = fn, .arg = job };
	if (pthread_create(&t, NULL, run_job, j) != 0) {
		free(j);
		return -EAGAIN;
	}
	pthread_detach(t);
	return 0;
}

static void fake_invalidate(struct pando_mds *mds, uint64_t ino, uint32_t gen)
{
	struct fake_host *h = host_of(mds);

	pthread_mutex_lock(&h->lock);
	h->last_invalidated_ino = ino;
	bump(h, &h->invalidations);
	pthread_mutex_unlock(&h->lock);
}

static const struct pando_mds_host fake_host_ops = {
	.recall = fake_recall,
	.submit = fake_submit,
	.invalidate = fake_invalidate,
};

bool fake_host_wait(struct fake_host *h, const unsigned *what, unsigned n, int ms)
{
	struct timespec until;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&h->lock);
	while (*what < n && pthread_cond_timedwait(&h->changed, &h->lock, &until) == 0)
		;
	ok = *what >= n;
	pthread_mutex_unlock(&h->lock);
	return ok;
}

static int write_cluster_conf(struct mds_fixture *f)
{
	FILE *fp;

	snprintf(f->cluster_path, sizeof(f->cluster_path), "%s/cluster.conf", f->osds.root);
	fp = fopen(f->cluster_path, "w");
	if (!fp)
		return -1;
	fprintf(fp, "key_file = cluster.key\npartition = %llu\n",
		(unsigned long long)f->osds.partition);
	for (int i = 0; i < f->osds.n; i++)
		fprintf(fp, "osd %u ctl=%s nfs=127.0.0.1:2049\n", f->osds.osds[i].id,
			f->osds.osds[i].ctl);
	return fclose(fp) == 0 ? 0 : -1;
}

/* The export block's defaults (../../fsal/export.c). */
static void default_config(struct mds_fixture *f, struct pando_mds_config *c)
{
	*c = (struct pando_mds_config){
		.db_path = f->db_path,
		.cluster_path = f->cluster_path,
		.inline_max = NS_INLINE_MAX_DEFAULT,
		.mirrors = 2,
		.stripe_unit = 1u << 20,
		.osd_timeout_ms = 2000,
		.stripe_width = 1,
		.recall_timeout_s = 10,
		.capability_lifetime_s = 600,
		.striped_clients = f->empty,
		.object_pool = 0,
		.pnfs = true,
		.db_reserve_mb = 0,
		.etcd = f->empty,
		.etcd_ca = f->empty,
		.etcd_user = f->empty,
		.etcd_password_file = f->empty,
		.etcd_prefix = f->prefix,
		.mds_name = f->empty,
		.mds_group = f->empty,
		.rebuild_parallel = 4,
		.scrub_interval_h = 0,
		.scrub_bandwidth_mb = 0,
		.transcode_interval_s = 0,
	};
}

int mds_fixture_start(struct mds_fixture *f, int nosds, void (*tune)(struct pando_mds_config *cfg))
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->host.lock, NULL);
	pthread_cond_init(&f->host.changed, NULL);
	strcpy(f->prefix, "/pando/");
	mds_log_set_sink(capture);
	if (osd_fixture_start(&f->osds, nosds, 1) != 0 || write_cluster_conf(f) != 0) {
		fprintf(stderr, "mds_fixture: OSDs not started\n");
		return -1;
	}
	snprintf(f->db_path, sizeof(f->db_path), "%s/ns", f->osds.root);
	default_config(f, &f->mds.cfg);
	if (tune)
		tune(&f->mds.cfg);
	if (pando_mds_open(&f->mds, &fake_host_ops) != 0) {
		fprintf(stderr, "mds_fixture: the engine did not open\n");
		return -1;
	}
	return 0;
}

int mds_fixture_reopen(struct mds_fixture *f)
{
	struct pando_mds_config cfg = f->mds.cfg;

	pando_mds_close(&f->mds);
	memset(&f->mds, 0, sizeof(f->mds));
	f->mds.cfg = cfg;
	return pando_mds_open(&f->mds, &fake_host_ops);
}

void mds_fixture_finish(struct mds_fixture *f, int keep)
{
	pando_mds_close(&f->mds);
	osd_fixture_finish(&f->osds, keep);
	mds_log_set_sink(NULL);
}

int mds_fixture_create(struct mds_fixture *f, const char *name, struct ns_attr *out)
{
	struct ns_new in = { .mode = 0644 };
	bool existed;

	return ns_create(f->mds.ns, NS_ROOT_INO, name, &in, NS_UNCHECKED, NULL, out, &existed);
}

int mds_fixture_layout_get(struct mds_fixture *f, uint64_t ino, bool write,
			   struct pando_grant **seg)
{
	struct ns_attr a = { 0 };
	struct pando_grant_ask ask = {
		.write = write, .cap_version = 1, .clientid = 7, .client = "10.0.0.7"
	};
	int rc = ns_getattr(f->mds.ns, ino, &a);

	if (rc)
		return rc;
	ask.ino = ino;
	ask.gen = a.gen;
	return pando_grants_grant(f->mds.grants, &ask, seg);
}

void mds_fixture_layout_return(struct mds_fixture *f, struct pando_grant *seg)
{
	pando_grants_committed(f->mds.grants, seg->ino);
	pando_grant_end(seg);
}

struct count_call {
	uint64_t partition;
	long total;
};

static int count_journal_objects(struct osd_ctl_client *c, void *arg)
{
	struct count_call *a = arg;
	uint64_t ids[256], after = 0;
	size_t n = 0;
	bool eof = false;
	int rc = 0;

	while (!eof && (rc = osd_ctl_list(c, a->partition, after, ids, 256, &n, &eof)) == 0 && n) {
		for (size_t i = 0; i < n; i++)
			a->total += (ids[i] & JOURNAL_OBJECT_BIT) != 0;
		after = ids[n - 1];
	}
	return rc;
}

long mds_fixture_journal_objects(struct mds_fixture *f)
{
	struct count_call a = { .partition = f->mds.conf.map.partition };

	for (int o = 0; o < f->osds.n; o++)
		if (osd_conns_call(f->mds.conns, f->osds.osds[o].id, count_journal_objects, &a))
			return -1;
	return a.total;
}

int mds_fixture_mark_out(struct mds_fixture *f, uint64_t epoch, uint32_t out)
{
	const struct cluster_map *seed = &f->mds.conf.map;
	struct cluster_map m = { .epoch = epoch,
				 .partition = seed->partition,
				 .nosds = seed->nosds };
	int rc;

	m.osds = calloc(seed->nosds, sizeof(*m.osds));
	if (!m.osds)
		return -ENOMEM;
	for (size_t i = 0; i < seed->nosds; i++) {
		m.osds[i] = seed->osds[i];
		m.osds[i].in = m.osds[i].id != out;
	}
	rc = pando_view_apply(&f->mds, &m, "test");
	free(m.osds);
	return rc;
}

/* Copy c of map against copy 0: 1 the same, 0 not, -errno. */
static int same_as_first(struct objio *io, const struct pando_storage_map *map, int c)
{
	bool differs[OBJIO_DIFF_MAX];
	uint64_t len = 0, first_len = 0;
	size_t n = 0;
	int rc = objio_component_length(io, map->partition_id, &map->comp[c], &len);

	if (!rc)
		rc = objio_component_length(io, map->partition_id, &map->comp[0], &first_len);
	if (!rc && (len != first_len || !len))
		return 0;
	for (uint64_t e = 0; !rc && e * OSD_CTL_CSUM_EXTENT_BYTES < len; e += n) {
		rc = objio_component_diff(io, map->partition_id, &map->comp[0], &map->comp[c], e,
					  OBJIO_DIFF_MAX, differs, &n);
		for (size_t i = 0; !rc && i < n; i++)
			if (differs[i])
				return 0;
		if (!rc && !n)
			return 0;
	}
	return rc ? rc : 1;
}

int mds_fixture_copies_same(struct mds_fixture *f, const struct pando_storage_map *map)
{
	struct objio io = { .conns = f->mds.conns };
	int rc = 1;

	for (int c = 1; rc == 1 && c < JOURNAL_COPIES; c++)
		rc = same_as_first(&io, map, c);
	return rc;
}
