/* Parser for cluster.conf (cluster_conf.h). */
#include "cluster_conf.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

struct parse {
	const char *path;
	int line;
	char *why;
	size_t cap;
	char key_file[PATH_MAX];
};

static int fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->why, p->cap, "%s:%d: ", p->path, p->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->cap)
		vsnprintf(p->why + n, p->cap - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* Digits only: strtoull alone would take a sign and skip leading control
 * characters, so "\r-1" would become 2^64 - 1. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* host:port or [v6]:port, with a port in 1..65535, that fits a field. */
static int valid_addr(const char *s)
{
	return strlen(s) < CLUSTER_MAP_ADDR_MAX && pando_hostport_is_address(s);
}

static int osd_option(struct parse *p, struct cluster_map_osd *o, char *opt)
{
	char *eq = strchr(opt, '=');
	char *dst = NULL;

	if (!eq)
		return fail(p, "expected name=value, got \"%s\"", opt);
	*eq = 0;
	if (!strcmp(opt, "capacity"))
		return parse_u64(eq + 1, &o->weight) ? fail(p, "bad capacity") : 0;
	if (!strcmp(opt, "pool")) {
		if (!cluster_map_pool_name_ok(eq + 1) || strlen(eq + 1) >= sizeof(o->pool))
			return fail(p, "pool: \"%s\" is not a pool name", eq + 1);
		strcpy(o->pool, eq + 1);
		return 0;
	}
	if (!strcmp(opt, "ctl"))
		dst = o->ctl;
	else if (!strcmp(opt, "nfs"))
		dst = o->nfs;
	else if (!strcmp(opt, "advertise"))
		dst = o->advertise;
	else
		return fail(p, "unknown osd option \"%s\"", opt);
	if (!valid_addr(eq + 1))
		return fail(p, "%s: \"%s\" is not host:port", opt, eq + 1);
	strcpy(dst, eq + 1);
	return 0;
}

static int parse_osd(struct parse *p, struct cluster_map *m, char *rest)
{
	struct cluster_map_osd o = { .up = true, .in = true };
	char *save = NULL, *tok = strtok_r(rest, " \t", &save);
	uint64_t id;
	int rc;

	if (!tok || parse_u64(tok, &id) || id == 0 || id > UINT32_MAX)
		return fail(p, "osd needs an id in 1..4294967295");
	o.id = (uint32_t)id;
	while ((tok = strtok_r(NULL, " \t", &save)))
		if ((rc = osd_option(p, &o, tok)))
			return rc;
	if (!o.ctl[0] || !o.nfs[0])
		return fail(p, "osd %u needs ctl= and nfs=", o.id);
	if (!o.advertise[0])
		strcpy(o.advertise, o.nfs);
	if (!o.weight)
		o.weight = CLUSTER_CONF_DEFAULT_WEIGHT;
	for (size_t i = 0; i < m->nosds; i++)
		if (m->osds[i].id == o.id)
			return fail(p, "osd %u listed twice", o.id);
	if (m->nosds == CLUSTER_MAP_MAX_OSDS)
		return fail(p, "more than %d OSDs", CLUSTER_MAP_MAX_OSDS);
	m->osds[m->nosds++] = o;
	return 0;
}

static int parse_setting(struct parse *p, struct cluster_map *m, char *name, char *value)
{
	name = trim(name);
	value = trim(value);
	if (!strcmp(name, "key_file")) {
		if (!*value || strlen(value) >= sizeof(p->key_file))
			return fail(p, "bad key_file");
		strcpy(p->key_file, value);
		return 0;
	}
	if (!strcmp(name, "partition"))
		return parse_u64(value, &m->partition) || m->partition == 0
			       ? fail(p, "partition must be a positive integer")
			       : 0;
	return fail(p, "unknown setting \"%s\"", name);
}

static int parse_line(struct parse *p, struct cluster_map *m, char *line)
{
	char *hash = strchr(line, '#'), *eq;

	if (hash)
		*hash = 0;
	line = trim(line);
	if (!*line)
		return 0;
	if (!strncmp(line, "osd", 3) && (line[3] == ' ' || line[3] == '\t'))
		return parse_osd(p, m, line + 4);
	eq = strchr(line, '=');
	if (!eq)
		return fail(p, "expected \"name = value\" or \"osd ID ...\"");
	*eq = 0;
	return parse_setting(p, m, line, eq + 1);
}

static int load_key(struct parse *p, struct cluster_conf *c)
{
	char dir[PATH_MAX], full[PATH_MAX * 2];
	const char *why = NULL;
	int rc;

	if (!p->key_file[0])
		return fail(p, "no key_file");
	if (p->key_file[0] == '/') {
		snprintf(full, sizeof(full), "%s", p->key_file);
	} else {
		snprintf(dir, sizeof(dir), "%s", p->path);
		snprintf(full, sizeof(full), "%s/%s", dirname(dir), p->key_file);
	}
	if (strlen(full) >= sizeof(c->key_path))
		return fail(p, "key_file path too long");
	strcpy(c->key_path, full);
	rc = cluster_key_load(full, &c->key, &why);
	if (rc) {
		snprintf(p->why, p->cap, "%s: key file %s: %s", p->path, full,
			 why ? why : strerror(-rc));
		return rc;
	}
	return 0;
}

int cluster_conf_load(const char *path, struct cluster_conf *out, char *why, size_t cap)
{
	struct parse p = { .path = path, .why = why, .cap = cap };
	struct cluster_conf c = { .map.partition = 1 };
	char line[1024];
	uint32_t dup;
	int rc = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		rc = -errno;
		snprintf(why, cap, "%s: %s", path, strerror(errno));
		return rc;
	}
	c.map.osds = calloc(CLUSTER_MAP_MAX_OSDS, sizeof(*c.map.osds));
	if (!c.map.osds) {
		fclose(f);
		snprintf(why, cap, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		p.line++;
		if (!strchr(line, '\n') && !feof(f))
			rc = fail(&p, "line too long");
		else
			rc = parse_line(&p, &c.map, line);
	}
	/* fgets stops on a read error as on EOF: without this the lines read so
	 * far would pass for the whole file. */
	if (!rc && ferror(f)) {
		rc = errno ? -errno : -EIO;
		snprintf(why, cap, "%s: %s", path, strerror(-rc));
	}
	fclose(f);
	if (!rc && c.map.nosds == 0)
		rc = fail(&p, "no osd lines");
	if (!rc)
		rc = load_key(&p, &c);
	if (!rc)
		rc = cluster_map_sort(&c.map, &dup);
	if (rc) {
		cluster_conf_free(&c);
		return rc;
	}
	*out = c;
	return 0;
}

void cluster_conf_free(struct cluster_conf *c)
{
	cluster_map_free(&c->map);
}
