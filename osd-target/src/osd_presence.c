/* The value pando-osd keeps in etcd under osd/<id> and the glue to
 * common/etcd's presence thread.  Built on that thread every
 * etcd_interval: a statfs (one fstatvfs) and a counter snapshot, both
 * lock-free for the data path. */
#include "osd_presence.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "etcd_client.h"
#include "log.h"

struct osd_presence {
	struct osd_ctx *ctx;
	const struct osd_config *cfg;
	char key[512];
	char nfs[256], ctl[256], advertise[256];
	char host[256];
	long long started_at;
	struct etcd_presence *etcd;
};

static double unix_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static json_t *statfs_json(struct osd_ctx *ctx)
{
	struct objstore_stat st = { 0 };

	/* A failed statfs (logged by the store) reads as zeros: the mgr then
	 * sees no capacity rather than no OSD. */
	objstore_statfs(ctx->store, &st);
	return json_pack("{s:I,s:I,s:I}", "bytes_total", (json_int_t)st.total_bytes, "bytes_free",
			 (json_int_t)st.free_bytes, "objects", (json_int_t)st.objects);
}

static json_t *counters_json(const struct osd_stats *stats)
{
	uint64_t v[OSD_STAT_COUNT];
	json_t *o = json_object();

	osd_stats_snapshot(stats, v);
	for (int i = 0; o && i < OSD_STAT_COUNT; i++)
		if (json_object_set_new(o, osd_stat_names[i], json_integer((json_int_t)v[i]))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

char *osd_presence_value(struct osd_presence *p)
{
	json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:I,s:s,s:I,s:f,s:o,s:o}", "id",
			      (json_int_t)p->cfg->osd_id, "ctl", p->ctl, "nfs", p->nfs, "advertise",
			      p->advertise, "domain", p->cfg->domain, "pool", p->cfg->pool, "pid",
			      (json_int_t)getpid(), "host", p->host, "started_at",
			      (json_int_t)p->started_at, "time", unix_now(), "statfs",
			      statfs_json(p->ctx), "counters", counters_json(p->ctx->stats));
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

static char *fill(void *arg)
{
	return osd_presence_value(arg);
}

static void say(void *arg, int level, const char *msg)
{
	if (level)
		log_warn("etcd: %s", msg);
	else
		log_info("etcd: %s", msg);
}

/* Why the presence cannot start, naming the settings at fault. */
static void start_failed(const struct osd_config *cfg, int rc)
{
	if (rc == -EPERM || rc == -EBADMSG)
		log_error("etcd_password_file %s: %s", cfg->etcd_password_file, etcd_strerror(rc));
	else if (rc == -EINVAL)
		log_error("etcd '%s': %s", cfg->etcd, etcd_strerror(rc));
	else if (rc == -ENOMEM)
		log_error("etcd: %s", strerror(-rc));
	else /* a file that cannot be opened */
		log_error("etcd_ca '%s', etcd_password_file '%s': %s", cfg->etcd_ca,
			  cfg->etcd_password_file, strerror(-rc));
}

int osd_presence_start(const struct osd_config *cfg, struct osd_ctx *ctx, const char *nfs,
		       const char *ctl, struct osd_presence **out)
{
	struct osd_presence *p;
	int rc;

	*out = NULL;
	if (!cfg->etcd[0])
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->cfg = cfg;
	p->started_at = (long long)unix_now();
	snprintf(p->key, sizeof(p->key), "%sosd/%u", cfg->etcd_prefix, cfg->osd_id);
	snprintf(p->nfs, sizeof(p->nfs), "%s", nfs);
	snprintf(p->ctl, sizeof(p->ctl), "%s", ctl);
	snprintf(p->advertise, sizeof(p->advertise), "%s",
		 cfg->advertise[0] ? cfg->advertise : nfs);
	if (!cfg->advertise[0] &&
	    (!strncmp(nfs, "0.0.0.0:", 8) || !strncmp(nfs, "[::]:", 5) || !strncmp(nfs, ":::", 3)))
		log_warn("etcd: nfs_listen %s is a wildcard and advertise is not set: "
			 "clients cannot reach that address",
			 nfs);
	if (gethostname(p->host, sizeof(p->host)) < 0)
		snprintf(p->host, sizeof(p->host), "unknown");
	struct etcd_options eo = { .endpoints = cfg->etcd,
				   .ca_file = cfg->etcd_ca,
				   .user = cfg->etcd_user,
				   .password_file = cfg->etcd_password_file };
	struct etcd_presence_options opt = {
		.etcd = &eo,
		.key = p->key,
		.ttl_s = (int)cfg->etcd_ttl,
		.interval_s = (int)cfg->etcd_interval,
		.fill = fill,
		.log = say,
		.arg = p,
	};
	rc = etcd_presence_start(&opt, &p->etcd);
	if (rc) {
		start_failed(cfg, rc);
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void osd_presence_stop(struct osd_presence *p)
{
	if (!p)
		return;
	etcd_presence_stop(p->etcd);
	free(p);
}
