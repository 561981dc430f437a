#include "osd_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

void osd_config_defaults(struct osd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->nfs_listen, sizeof(cfg->nfs_listen), "127.0.0.1:20491");
	snprintf(cfg->ctl_listen, sizeof(cfg->ctl_listen), "127.0.0.1:20591");
	cfg->threads = 8;
	cfg->max_conns = 256;
	cfg->max_conns_per_source = 32;
	cfg->idle_timeout = 360;
	cfg->record_timeout = 30;
	cfg->send_timeout = 30;
	cfg->reply_budget = 4u << 20;
	cfg->stats_interval = 60;
	cfg->log_level = LOG_INFO;
	snprintf(cfg->etcd_prefix, sizeof(cfg->etcd_prefix), "/pando/");
	cfg->etcd_ttl = 5;
	cfg->etcd_interval = 2;
}

static int set_uint(const char *value, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(value, &end, 10);
	if (errno || end == value || *end || *out > max || value[0] == '-')
		return -1;
	return 0;
}

static int set_string(char *dst, size_t cap, const char *value)
{
	if (strlen(value) >= cap)
		return -1;
	strcpy(dst, value);
	return 0;
}

int osd_config_parse_bytes(const char *value, uint64_t *out)
{
	unsigned long long n;
	unsigned shift = 0;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)value[0]))
		return -1;
	n = strtoull(value, &end, 10);
	if (errno || end == value)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

/* The etcd presence keys; their meaning in README.md "Presence in etcd". */
static int set_presence(struct osd_config *cfg, const char *name, const char *value, char *err,
			size_t errcap)
{
	unsigned long n;
	int rc;

	if (!strcmp(name, "etcd")) {
		rc = set_string(cfg->etcd, sizeof(cfg->etcd), value);
	} else if (!strcmp(name, "etcd_ca")) {
		rc = set_string(cfg->etcd_ca, sizeof(cfg->etcd_ca), value);
	} else if (!strcmp(name, "etcd_user")) {
		rc = set_string(cfg->etcd_user, sizeof(cfg->etcd_user), value);
	} else if (!strcmp(name, "etcd_password_file")) {
		rc = set_string(cfg->etcd_password_file, sizeof(cfg->etcd_password_file), value);
	} else if (!strcmp(name, "etcd_prefix")) {
		/* Keys are <prefix>osd/<id>: the prefix ends with a slash. */
		size_t len = strlen(value);
		rc = !len || value[len - 1] != '/' ||
		     set_string(cfg->etcd_prefix, sizeof(cfg->etcd_prefix), value);
	} else if (!strcmp(name, "etcd_ttl")) {
		rc = set_uint(value, 3600, &n) || n < 2;
		cfg->etcd_ttl = (unsigned)n;
	} else if (!strcmp(name, "etcd_interval")) {
		rc = set_uint(value, 3600, &n) || n == 0;
		cfg->etcd_interval = (unsigned)n;
	} else if (!strcmp(name, "advertise")) {
		rc = (*value && !pando_hostport_is_address(value)) ||
		     set_string(cfg->advertise, sizeof(cfg->advertise), value);
	} else if (!strcmp(name, "domain")) {
		rc = set_string(cfg->domain, sizeof(cfg->domain), value);
	} else if (!strcmp(name, "pool")) {
		rc = (*value && !cluster_map_pool_name_ok(value)) ||
		     set_string(cfg->pool, sizeof(cfg->pool), value);
	} else {
		snprintf(err, errcap, "unknown setting '%s'", name);
		return -1;
	}
	if (rc)
		snprintf(err, errcap, "bad value '%s' for %s", value, name);
	return rc ? -1 : 0;
}

static bool is_transport_key(const char *name)
{
	static const char *const keys[] = { "max_conns_per_source", "idle_timeout",
					    "record_timeout", "send_timeout", "reply_budget" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(name, keys[i]))
			return true;
	return false;
}

/* The transport's limits; their meaning in README.md "Connections". */
static int set_transport(struct osd_config *cfg, const char *name, const char *value, char *err,
			 size_t errcap)
{
	unsigned long n;
	int rc;

	if (!strcmp(name, "reply_budget")) {
		/* At least one largest reply, or nothing could be read. */
		rc = osd_config_parse_bytes(value, &cfg->reply_budget) ||
		     cfg->reply_budget < (1u << 20) || cfg->reply_budget > (1ull << 32);
	} else if (!strcmp(name, "max_conns_per_source")) {
		rc = set_uint(value, 65536, &n) || n == 0;
		cfg->max_conns_per_source = (unsigned)n;
	} else {
		unsigned *dst = !strcmp(name, "idle_timeout")     ? &cfg->idle_timeout
				: !strcmp(name, "record_timeout") ? &cfg->record_timeout
								  : &cfg->send_timeout;

		rc = set_uint(value, 86400, &n);
		*dst = (unsigned)n;
	}
	if (rc)
		snprintf(err, errcap, "bad value '%s' for %s", value, name);
	return rc ? -1 : 0;
}

int osd_config_set(struct osd_config *cfg, const char *name, const char *value, char *err,
		   size_t errcap)
{
	unsigned long n;
	int rc = 0;

	if (!strcmp(name, "osd_id")) {
		rc = set_uint(value, UINT32_MAX, &n);
		cfg->osd_id = (uint32_t)n;
	} else if (!strcmp(name, "data_dir")) {
		rc = set_string(cfg->data_dir, sizeof(cfg->data_dir), value);
	} else if (!strcmp(name, "key_file")) {
		rc = set_string(cfg->key_file, sizeof(cfg->key_file), value);
	} else if (!strcmp(name, "nfs_listen")) {
		rc = set_string(cfg->nfs_listen, sizeof(cfg->nfs_listen), value);
	} else if (!strcmp(name, "ctl_listen")) {
		rc = set_string(cfg->ctl_listen, sizeof(cfg->ctl_listen), value);
	} else if (!strcmp(name, "log_file")) {
		rc = set_string(cfg->log_file, sizeof(cfg->log_file), value);
	} else if (!strcmp(name, "threads")) {
		rc = set_uint(value, 1024, &n) || n == 0;
		cfg->threads = (unsigned)n;
	} else if (!strcmp(name, "max_conns")) {
		rc = set_uint(value, 65536, &n) || n == 0;
		cfg->max_conns = (unsigned)n;
	} else if (!strcmp(name, "stats_interval")) {
		rc = set_uint(value, 86400, &n) || n == 0;
		cfg->stats_interval = (unsigned)n;
	} else if (!strcmp(name, "read_bandwidth") || !strcmp(name, "write_bandwidth")) {
		uint64_t *dst = name[0] == 'r' ? &cfg->read_bandwidth : &cfg->write_bandwidth;

		if (osd_config_parse_bytes(value, dst)) {
			snprintf(err, errcap,
				 "bad value '%s' for %s: want bytes per second, "
				 "a whole number with an optional K, M or G (powers of 1024), "
				 "0 for unlimited",
				 value, name);
			return -1;
		}
	} else if (!strcmp(name, "log_level")) {
		rc = log_level_parse(value, &cfg->log_level);
	} else if (is_transport_key(name)) {
		return set_transport(cfg, name, value, err, errcap);
	} else if (!strncmp(name, "etcd", 4) || !strcmp(name, "advertise") ||
		   !strcmp(name, "domain") || !strcmp(name, "pool")) {
		return set_presence(cfg, name, value, err, errcap);
	} else {
		snprintf(err, errcap, "unknown setting '%s'", name);
		return -1;
	}
	if (rc) {
		snprintf(err, errcap, "bad value '%s' for %s", value, name);
		return -1;
	}
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

int osd_config_load(struct osd_config *cfg, const char *path, char *err, size_t errcap)
{
	char line[1024];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errcap, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *eq, *name;
		char why[256];

		lineno++;
		if (hash)
			*hash = 0;
		name = trim(line);
		if (!*name)
			continue;
		eq = strchr(name, '=');
		if (!eq) {
			snprintf(err, errcap, "%s:%u: expected name = value", path, lineno);
			fclose(f);
			return -1;
		}
		*eq = 0;
		if (osd_config_set(cfg, trim(name), trim(eq + 1), why, sizeof(why))) {
			snprintf(err, errcap, "%s:%u: %s", path, lineno, why);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

int osd_config_check(const struct osd_config *cfg, char *err, size_t errcap)
{
	if (!cfg->osd_id)
		snprintf(err, errcap, "osd_id is required (1 or more)");
	else if (!cfg->data_dir[0])
		snprintf(err, errcap, "data_dir is required");
	else if (!cfg->key_file[0])
		snprintf(err, errcap, "key_file is required");
	else if (!cfg->etcd_user[0] != !cfg->etcd_password_file[0])
		snprintf(err, errcap, "etcd_user and etcd_password_file go together");
	else
		return 0;
	return -1;
}
