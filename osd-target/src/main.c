/* pando-osd: one object storage target.  Loads its config and the cluster
 * key, opens the object store, serves the NFSv3 data-server and control
 * programs, keeps its presence in etcd (when configured), logs its I/O
 * counters now and then, and on SIGTERM/SIGINT revokes its presence,
 * drains requests and closes cleanly. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "osd.h"
#include "osd_config.h"
#include "osd_ctl.h"
#include "osd_presence.h"
#include "osd_throttle.h"

struct osd_daemon {
	struct osd_config cfg;
	struct cluster_key key; /* the key file as read at start */
	struct osd_keys keys;   /* those in use, from then on */
	struct osd_ctx ctx;
	struct osd_stats stats;
	struct osd_throttle throttle_read;
	struct osd_throttle throttle_write;
	struct rpc_server *nfs;
	struct rpc_server *ctl;
	struct osd_presence *presence;
	FILE *log;
	int format;
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "osd-id", required_argument, NULL, 'i' },
	{ "data-dir", required_argument, NULL, 'd' },
	{ "key-file", required_argument, NULL, 'k' },
	{ "nfs-listen", required_argument, NULL, 'n' },
	{ "ctl-listen", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "max-conns", required_argument, NULL, 'm' },
	{ "max-conns-per-source", required_argument, NULL, 'S' },
	{ "idle-timeout", required_argument, NULL, 'U' },
	{ "record-timeout", required_argument, NULL, 'r' },
	{ "send-timeout", required_argument, NULL, 'x' },
	{ "reply-budget", required_argument, NULL, 'B' },
	{ "stats-interval", required_argument, NULL, 's' },
	{ "log-level", required_argument, NULL, 'v' },
	{ "log-file", required_argument, NULL, 'o' },
	{ "etcd", required_argument, NULL, 'E' },
	{ "etcd-ca", required_argument, NULL, 'a' },
	{ "etcd-user", required_argument, NULL, 'u' },
	{ "etcd-password-file", required_argument, NULL, 'p' },
	{ "etcd-prefix", required_argument, NULL, 'P' },
	{ "etcd-ttl", required_argument, NULL, 'T' },
	{ "etcd-interval", required_argument, NULL, 'I' },
	{ "advertise", required_argument, NULL, 'A' },
	{ "domain", required_argument, NULL, 'D' },
	{ "pool", required_argument, NULL, 'O' },
	{ "read-bandwidth", required_argument, NULL, 'R' },
	{ "write-bandwidth", required_argument, NULL, 'W' },
	{ "format", no_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: pando-osd [--config FILE] [options]\n"
		     "  --config FILE       settings file (name = value lines)\n"
		     "  --osd-id N          this target's id (required)\n"
		     "  --data-dir DIR      formatted data directory (required)\n"
		     "  --key-file FILE     cluster key (required)\n"
		     "  --nfs-listen H:P    NFSv3 data server address [127.0.0.1:20491]\n"
		     "  --ctl-listen H:P    control protocol address [127.0.0.1:20591]\n"
		     "  --threads N         worker threads per program [8]\n"
		     "  --max-conns N       connections per program [256]\n"
		     "  --max-conns-per-source N  of them from one address [32]\n"
		     "  --idle-timeout S    close connections idle this long, 0 never [360]\n"
		     "  --record-timeout S  a record begun must arrive within this [30]\n"
		     "  --send-timeout S    close when replies are not read this long [30]\n"
		     "  --reply-budget B    queued reply bytes per connection before it\n"
		     "                      is read no more, e.g. 4M [4M]\n"
		     "  --stats-interval S  seconds between counter log lines [60]\n"
		     "  --log-level L       error, warn, info, debug [info]\n"
		     "  --log-file FILE     log here instead of stderr\n"
		     "  --etcd URLS         etcd endpoints for presence, https:// or http://\n"
		     "                      [none]\n"
		     "  --etcd-ca FILE      CA of etcd's certificates [the system's]\n"
		     "  --etcd-user NAME    etcd user to authenticate as [none]\n"
		     "  --etcd-password-file FILE  its password, one line; mode 0600 or\n"
		     "                      stricter, owned by this user\n"
		     "  --etcd-prefix P     key prefix in etcd [/pando/]\n"
		     "  --etcd-ttl S        presence lease TTL [5]\n"
		     "  --etcd-interval S   seconds between presence updates [2]\n"
		     "  --advertise H:P     NFS address clients are told [nfs_listen]\n"
		     "  --domain NAME       failure domain [none]\n"
		     "  --pool NAME         the pool it serves [none]\n"
		     "  --read-bandwidth B  cap on bytes read per second, e.g. 4M [unlimited]\n"
		     "  --write-bandwidth B cap on bytes written per second [unlimited]\n"
		     "  --format            format DATA_DIR first if it is empty\n");
}

/* Maps a long option back to its config name: --data-dir -> data_dir. */
static void option_config_name(const char *opt, char *name, size_t cap)
{
	size_t i;

	for (i = 0; opt[i] && i + 1 < cap; i++)
		name[i] = opt[i] == '-' ? '_' : opt[i];
	name[i] = 0;
}

static int parse_args(struct osd_daemon *d, int argc, char **argv)
{
	char err[512], name[64];
	int c, idx;

	osd_config_defaults(&d->cfg);
	/* First pass: the config file, so flags can override it. */
	for (int i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--config") &&
		    osd_config_load(&d->cfg, argv[i + 1], err, sizeof(err))) {
			fprintf(stderr, "pando-osd: %s\n", err);
			return -1;
		}
	}
	while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?') {
			usage(stderr);
			return -1;
		}
		if (c == 'c')
			continue;
		if (c == 'F') {
			d->format = 1;
			continue;
		}
		option_config_name(long_opts[idx].name, name, sizeof(name));
		if (osd_config_set(&d->cfg, name, optarg, err, sizeof(err))) {
			fprintf(stderr, "pando-osd: %s\n", err);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pando-osd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (osd_config_check(&d->cfg, err, sizeof(err))) {
		fprintf(stderr, "pando-osd: %s\n", err);
		return -1;
	}
	return 0;
}

static int open_log(struct osd_daemon *d)
{
	d->log = NULL;
	if (d->cfg.log_file[0]) {
		d->log = fopen(d->cfg.log_file, "a");
		if (!d->log) {
			fprintf(stderr, "pando-osd: %s: %s\n", d->cfg.log_file, strerror(errno));
			return -1;
		}
	}
	log_init(d->cfg.log_level, d->log);
	return 0;
}

static int load_key(struct osd_daemon *d)
{
	const char *why = "";

	if (cluster_key_load(d->cfg.key_file, &d->key, &why)) {
		log_error("cluster key %s: %s", d->cfg.key_file, why);
		return -1;
	}
	return 0;
}

static uint64_t fsid_from_uuid(const uint8_t uuid[16])
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | (uint64_t)(uuid[i] ^ uuid[i + 8]);
	return v;
}

/* A rotation under way: the directory was formatted for the previous key
 * and from now on belongs to the current one, so that it still opens once
 * the previous key is dropped from the key file. */
static int follow_new_key(struct osd_daemon *d, uint32_t new_id, uint32_t old_id)
{
	int rc = objstore_set_key_id(d->ctx.store, new_id);

	if (rc) {
		log_error("%s: cannot record the new cluster key %u: %s", d->cfg.data_dir, new_id,
			  strerror(-rc));
		return -1;
	}
	log_info("%s: cluster key %u replaces key %u (still accepted while the key file "
		 "names it previous_id)",
		 d->cfg.data_dir, new_id, old_id);
	return 0;
}

static int open_store(struct osd_daemon *d)
{
	const struct objstore_superblock *sb;
	int rc;

	if (d->format) {
		rc = objstore_format(d->cfg.data_dir, d->cfg.osd_id, d->key.id);
		if (rc && rc != -EEXIST) {
			log_error("format %s: %s", d->cfg.data_dir, strerror(-rc));
			return -1;
		}
	}
	rc = objstore_open(d->cfg.data_dir, &d->ctx.store);
	if (rc) {
		log_error("open %s: %s%s", d->cfg.data_dir, strerror(-rc),
			  rc == -ENOENT ? " (not formatted? see pando-osd-tool format)" : "");
		return -1;
	}
	sb = objstore_superblock(d->ctx.store);
	if (sb->osd_id != d->cfg.osd_id || !cluster_key_secret(&d->key, sb->key_id)) {
		log_error("%s was formatted for osd %u with key %u, not osd %u with key %u%s",
			  d->cfg.data_dir, sb->osd_id, sb->key_id, d->cfg.osd_id, d->key.id,
			  d->key.previous_id ? " or its previous key" : "");
		objstore_close(d->ctx.store);
		return -1;
	}
	if (sb->key_id != d->key.id && follow_new_key(d, d->key.id, sb->key_id)) {
		objstore_close(d->ctx.store);
		return -1;
	}
	d->ctx.osd_id = d->cfg.osd_id;
	d->ctx.fsid = fsid_from_uuid(sb->uuid);
	/* A fresh verifier on every start tells clients that UNSTABLE writes
	 * they have not COMMITted may be gone. */
	if (getrandom(d->ctx.verf_base, sizeof(d->ctx.verf_base), 0) != sizeof(d->ctx.verf_base)) {
		log_error("no randomness for the write verifier");
		objstore_close(d->ctx.store);
		return -1;
	}
	return 0;
}

/* The control program's keys (derived for this target from the cluster
 * key and, during a rotation, the previous one) and replay cache. */
static int start_ctl_auth(struct osd_daemon *d)
{
	if (osd_keys_init(&d->keys, &d->key, d->cfg.osd_id)) {
		log_error("cannot derive the control keys (HMAC failed)");
		return -1;
	}
	explicit_bzero(&d->key, sizeof(d->key));
	d->ctx.keys = &d->keys;
	d->ctx.replay = ctl_replay_new(CTL_REPLAY_MAX_ENTRIES, CTL_AUTH_MAX_SKEW_S);
	if (!d->ctx.replay) {
		log_error("no memory for the control replay cache");
		return -1;
	}
	return 0;
}

static int start_servers(struct osd_daemon *d)
{
	struct rpc_server_config nfs_cfg = {
		.listen = d->cfg.nfs_listen,
		.threads = d->cfg.threads,
		.max_conns = d->cfg.max_conns,
		.max_record = OSD_MAX_RECORD,
		.max_inflight = 32,
		.max_conns_per_source = d->cfg.max_conns_per_source,
		.idle_timeout_s = d->cfg.idle_timeout,
		.record_timeout_s = d->cfg.record_timeout,
		.send_timeout_s = d->cfg.send_timeout,
		.reply_budget = d->cfg.reply_budget,
	};
	struct rpc_server_config ctl_cfg = nfs_cfg;
	struct rpc_program nfs = { "nfs3",        NFS3_PROGRAM, NFS3_VERSION,
				   nfs3_dispatch, &d->ctx,      nfs3_admit };
	struct rpc_program ctl = { "osdctl",     PANDO_OSD_CTL, PANDO_OSD_CTL_V1,
				   ctl_dispatch, &d->ctx,       ctl_admit };
	const char *why = "";
	int rc;

	ctl_cfg.listen = d->cfg.ctl_listen;
	rc = rpc_server_start(&nfs_cfg, &nfs, &d->nfs, &why);
	if (rc) {
		log_error("nfs3 on %s: %s: %s", d->cfg.nfs_listen, why, strerror(-rc));
		return -1;
	}
	rc = rpc_server_start(&ctl_cfg, &ctl, &d->ctl, &why);
	if (rc) {
		log_error("osdctl on %s: %s: %s", d->cfg.ctl_listen, why, strerror(-rc));
		rpc_server_stop(d->nfs);
		return -1;
	}
	return 0;
}

/* "HOST:PORT" of a bound program: the configured host, the actual port
 * (the configured one may be 0). */
static void bound_addr(const char *listen, const struct rpc_server *srv, char *out, size_t cap)
{
	const char *colon = strrchr(listen, ':');
	int hostlen = colon ? (int)(colon - listen) : (int)strlen(listen);

	snprintf(out, cap, "%.*s:%u", hostlen, listen, rpc_server_port(srv));
}

/* After the servers are up, so the presence names ports that answer.
 * Only etcd settings that cannot work fail here; etcd itself is never
 * waited for. */
static int start_presence(struct osd_daemon *d)
{
	char nfs[300], ctl[300];
	int rc;

	bound_addr(d->cfg.nfs_listen, d->nfs, nfs, sizeof(nfs));
	bound_addr(d->cfg.ctl_listen, d->ctl, ctl, sizeof(ctl));
	rc = osd_presence_start(&d->cfg, &d->ctx, nfs, ctl, &d->presence);
	return rc ? -1 : 0; /* logged by osd_presence_start */
}

static void log_cap(const char *what, uint64_t rate, uint64_t burst)
{
	if (!rate)
		log_info("disk model: %s bandwidth unlimited", what);
	else
		log_info(
			"disk model: %s bandwidth capped at %llu bytes/s (%.1f MiB/s), burst %llu bytes",
			what, (unsigned long long)rate, (double)rate / (1 << 20),
			(unsigned long long)burst);
}

/* The token buckets of the disk model; NULL in the context when off, so
 * the I/O paths test one pointer. */
static void start_throttles(struct osd_daemon *d)
{
	osd_throttle_init(&d->throttle_read, d->cfg.read_bandwidth);
	osd_throttle_init(&d->throttle_write, d->cfg.write_bandwidth);
	d->ctx.throttle_read = d->cfg.read_bandwidth ? &d->throttle_read : NULL;
	d->ctx.throttle_write = d->cfg.write_bandwidth ? &d->throttle_write : NULL;
	log_cap("read", d->throttle_read.rate, d->throttle_read.burst);
	log_cap("write", d->throttle_write.rate, d->throttle_write.burst);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Logs the counters if they moved since the last line (an idle target
 * stays quiet); logged holds that line's values. */
static void log_counters_if_changed(const struct osd_stats *stats, uint64_t logged[OSD_STAT_COUNT])
{
	uint64_t now[OSD_STAT_COUNT];

	osd_stats_snapshot(stats, now);
	if (!memcmp(now, logged, sizeof(now)))
		return;
	osd_stats_log(now, "since start");
	memcpy(logged, now, sizeof(now));
}

/* SIGHUP: the key file again, for a rotation without a restart (README.md,
 * "Cluster key file").  A file that cannot be read, or that holds neither
 * of the data directory's keys, leaves the keys in use as they are. */
static void reload_key(struct osd_daemon *d)
{
	const struct objstore_superblock *sb = objstore_superblock(d->ctx.store);
	uint32_t in_use = d->keys.file.id; /* only this thread writes it */
	struct cluster_key key;
	const char *why = "";

	if (cluster_key_load(d->cfg.key_file, &key, &why)) {
		log_error("SIGHUP: cluster key %s: %s; keeping cluster key %u", d->cfg.key_file,
			  why, in_use);
		return;
	}
	if (!cluster_key_secret(&key, sb->key_id)) {
		log_error("SIGHUP: %s holds neither key %u of %s; keeping cluster key %u",
			  d->cfg.key_file, sb->key_id, d->cfg.data_dir, in_use);
	} else if (osd_keys_replace(&d->keys, &key, d->cfg.osd_id)) {
		log_error("SIGHUP: cannot derive the control keys; keeping cluster key %u", in_use);
	} else {
		if (sb->key_id != key.id)
			follow_new_key(d, key.id, sb->key_id);
		if (key.previous_id)
			log_info("SIGHUP: cluster key %u (previous %u) in use", key.id,
				 key.previous_id);
		else
			log_info("SIGHUP: cluster key %u in use", key.id);
	}
	explicit_bzero(&key, sizeof(key));
}

/* Waits for SIGTERM or SIGINT, logging the counters every stats_interval
 * seconds meanwhile, and reloads the key file on SIGHUP; the next line is
 * due on a fixed schedule, so a SIGHUP does not put it off. */
static int wait_for_stop(struct osd_daemon *d)
{
	uint64_t logged[OSD_STAT_COUNT] = { 0 };
	int64_t interval_ms = (int64_t)d->cfg.stats_interval * 1000;
	int64_t due = now_ms() + interval_ms;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		int64_t left = due - now_ms();
		struct timespec ts = { .tv_sec = left > 0 ? left / 1000 : 0,
				       .tv_nsec = left > 0 ? left % 1000 * 1000000 : 0 };

		sig = sigtimedwait(&set, NULL, &ts);
		if (sig < 0 && errno == EAGAIN) {
			log_counters_if_changed(d->ctx.stats, logged);
			due += interval_ms;
			continue;
		}
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0)
			return -1;
		if (sig != SIGHUP)
			return sig;
		reload_key(d);
	}
}

/* Signals are taken synchronously by main; every thread inherits this mask. */
static void block_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int main(int argc, char **argv)
{
	static struct osd_daemon d;
	uint64_t final[OSD_STAT_COUNT];
	int sig;

	if (parse_args(&d, argc, argv) || open_log(&d))
		return 2;
	block_signals();
	if (load_key(&d) || open_store(&d))
		return 1;
	if (start_ctl_auth(&d)) {
		objstore_close(d.ctx.store);
		return 1;
	}
	osd_stats_init(&d.stats);
	d.ctx.stats = &d.stats;
	start_throttles(&d);
	if (start_servers(&d)) {
		ctl_replay_free(d.ctx.replay);
		objstore_close(d.ctx.store);
		return 1;
	}
	if (start_presence(&d)) {
		rpc_server_stop(d.nfs);
		rpc_server_stop(d.ctl);
		ctl_replay_free(d.ctx.replay);
		objstore_close(d.ctx.store);
		return 1;
	}
	log_info("pando-osd %u serving %s: nfs %s (port %u), control %s (port %u)", d.cfg.osd_id,
		 d.cfg.data_dir, d.cfg.nfs_listen, rpc_server_port(d.nfs), d.cfg.ctl_listen,
		 rpc_server_port(d.ctl));
	sig = wait_for_stop(&d);
	log_info("%s: draining requests and stopping", sig > 0 ? strsignal(sig) : "sigwait failed");
	/* First, so the cluster sees the stop at once, not a lease later. */
	osd_presence_stop(d.presence);
	/* Requests queued at a low cap would hold the drain up for long. */
	osd_throttle_stop(&d.throttle_read);
	osd_throttle_stop(&d.throttle_write);
	rpc_server_stop(d.nfs);
	rpc_server_stop(d.ctl);
	ctl_replay_free(d.ctx.replay);
	osd_keys_destroy(&d.keys);
	/* After the drain, so the last requests are in. */
	osd_stats_snapshot(&d.stats, final);
	osd_stats_log(final, "at shutdown");
	objstore_close(d.ctx.store);
	log_info("pando-osd %u stopped cleanly", d.cfg.osd_id);
	if (d.log)
		fclose(d.log);
	return 0;
}
