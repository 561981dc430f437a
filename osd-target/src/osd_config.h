/* pando-osd configuration: a "name = value" file, overridden by flags of
 * the same names (--data-dir for data_dir).  Keys in README.md. */
#ifndef PANDO_OSD_CONFIG_H
#define PANDO_OSD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_map.h"
#include "log.h"

struct osd_config {
	uint32_t osd_id;
	char data_dir[PATH_MAX];
	char key_file[PATH_MAX];
	char nfs_listen[256];
	char ctl_listen[256];
	char log_file[PATH_MAX];
	unsigned threads;
	unsigned max_conns;
	/* The transport's limits (README.md "Connections"). */
	unsigned max_conns_per_source;
	unsigned idle_timeout;   /* seconds; 0: never */
	unsigned record_timeout; /* seconds; 0: never */
	unsigned send_timeout;   /* seconds; 0: never */
	uint64_t reply_budget;   /* bytes */
	unsigned stats_interval; /* seconds between counter log lines */
	enum log_level log_level;
	/* etcd presence (mgr/README.md); etcd empty: none */
	char etcd[1024];        /* endpoints, https://HOST:PORT[,...] or http:// */
	char etcd_ca[PATH_MAX]; /* CA of the members' certificates; "": the system's */
	char etcd_user[256];    /* "": no authentication */
	char etcd_password_file[PATH_MAX];
	char etcd_prefix[256];
	unsigned etcd_ttl;               /* lease TTL, seconds */
	unsigned etcd_interval;          /* seconds between puts of the presence value */
	char advertise[256];             /* HOST:PORT clients are told; "": nfs_listen */
	char domain[128];                /* failure domain; "": the OSD alone */
	char pool[CLUSTER_MAP_POOL_MAX]; /* the pool it serves; "": none */
	/* The disk model (osd_throttle.h): bytes per second; 0 unlimited. */
	uint64_t read_bandwidth;
	uint64_t write_bandwidth;
};

void osd_config_defaults(struct osd_config *cfg);
/* Sets one key; 0 or -1 with a message in err. */
int osd_config_set(struct osd_config *cfg, const char *name, const char *value, char *err,
		   size_t errcap);
int osd_config_load(struct osd_config *cfg, const char *path, char *err, size_t errcap);
/* "4M", "512K", "1G" (powers of 1024) or plain bytes, into *out;
 * -1 for anything else (a sign, a fraction, other suffixes, overflow). */
int osd_config_parse_bytes(const char *value, uint64_t *out);
/* Checks that everything required is set. */
int osd_config_check(const struct osd_config *cfg, char *err, size_t errcap);

#endif
