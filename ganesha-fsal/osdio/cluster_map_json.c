/* Parser for the cluster map JSON (cluster_map_json.h), with jansson. */
#include "cluster_map_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

static int fail(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (cap)
		vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A JSON integer in [min, max]: no reals, no strings, no booleans. */
static int get_int(json_t *obj, const char *name, bool need, uint64_t min, uint64_t max,
		   uint64_t *out, const char *where, char *why, size_t cap)
{
	json_t *v = json_object_get(obj, name);
	json_int_t i;

	if (!v) {
		if (need)
			return fail(why, cap, "%s: no \"%s\"", where, name);
		return 0;
	}
	if (!json_is_integer(v))
		return fail(why, cap, "%s: \"%s\" is not an integer", where, name);
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < min || (uint64_t)i > max)
		return fail(why, cap, "%s: \"%s\" = %lld is out of range [%llu, %llu]", where, name,
			    (long long)i, (unsigned long long)min, (unsigned long long)max);
	*out = (uint64_t)i;
	return 0;
}

static int get_bool(json_t *obj, const char *name, bool *out, const char *where, char *why,
		    size_t cap)
{
	json_t *v = json_object_get(obj, name);

	if (!v)
		return fail(why, cap, "%s: no \"%s\"", where, name);
	if (!json_is_boolean(v))
		return fail(why, cap, "%s: \"%s\" is not true or false", where, name);
	*out = json_is_true(v);
	return 0;
}

static int get_str(json_t *obj, const char *name, bool need, bool addr, char *dst, size_t dcap,
		   const char *where, char *why, size_t cap)
{
	json_t *v = json_object_get(obj, name);
	const char *s;

	if (!v) {
		if (need)
			return fail(why, cap, "%s: no \"%s\"", where, name);
		return 0;
	}
	if (!json_is_string(v))
		return fail(why, cap, "%s: \"%s\" is not a string", where, name);
	s = json_string_value(v);
	if (strlen(s) >= dcap || strlen(s) != json_string_length(v))
		return fail(why, cap, "%s: \"%s\" is too long or holds a NUL", where, name);
	if (addr && *s && !pando_hostport_is_address(s))
		return fail(why, cap, "%s: \"%s\" = \"%s\" is not host:port", where, name, s);
	if (addr && need && !*s)
		return fail(why, cap, "%s: \"%s\" is empty", where, name);
	strcpy(dst, s);
	return 0;
}

static int parse_osd(json_t *o, size_t idx, struct cluster_map_osd *out, char *why, size_t cap)
{
	char where[48];
	uint64_t id = 0;
	int rc;

	snprintf(where, sizeof(where), "osds[%zu]", idx);
	if (!json_is_object(o))
		return fail(why, cap, "%s is not an object", where);
	memset(out, 0, sizeof(*out));
	rc = get_int(o, "id", true, 1, UINT32_MAX, &id, where, why, cap);
	if (!rc) {
		out->id = (uint32_t)id;
		snprintf(where, sizeof(where), "osd %u", out->id);
		rc = get_str(o, "ctl", true, true, out->ctl, sizeof(out->ctl), where, why, cap);
	}
	if (!rc)
		rc = get_str(o, "nfs", true, true, out->nfs, sizeof(out->nfs), where, why, cap);
	if (!rc)
		rc = get_str(o, "advertise", false, true, out->advertise, sizeof(out->advertise),
			     where, why, cap);
	if (!rc)
		rc = get_str(o, "domain", false, false, out->domain, sizeof(out->domain), where,
			     why, cap);
	if (!rc)
		rc = get_str(o, "pool", false, false, out->pool, sizeof(out->pool), where, why,
			     cap);
	if (!rc && out->pool[0] && !cluster_map_pool_name_ok(out->pool))
		rc = fail(why, cap, "%s: \"pool\" = \"%s\" is not a pool name", where, out->pool);
	if (!rc)
		rc = get_int(o, "weight", true, 0, INT64_MAX, &out->weight, where, why, cap);
	if (!rc)
		rc = get_bool(o, "up", &out->up, where, why, cap);
	if (!rc)
		rc = get_bool(o, "in", &out->in, where, why, cap);
	if (!rc && !out->advertise[0])
		strcpy(out->advertise, out->nfs);
	return rc;
}

static int parse_osds(json_t *arr, struct cluster_map *m, char *why, size_t cap)
{
	size_t n = json_array_size(arr);
	uint32_t dup = 0;
	int rc = 0;

	if (!json_is_array(arr))
		return fail(why, cap, "\"osds\" is not an array");
	if (n > CLUSTER_MAP_MAX_OSDS)
		return fail(why, cap, "%zu OSDs: more than %d", n, CLUSTER_MAP_MAX_OSDS);
	m->osds = calloc(n ? n : 1, sizeof(*m->osds));
	if (!m->osds)
		return -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++)
		rc = parse_osd(json_array_get(arr, i), i, &m->osds[i], why, cap);
	if (rc)
		return rc;
	m->nosds = n;
	if (cluster_map_sort(m, &dup))
		return fail(why, cap, "osd %u listed twice", dup);
	return 0;
}

int cluster_map_parse(const char *json, size_t len, struct cluster_map *out, char *why, size_t cap)
{
	struct cluster_map m = { .partition = 1 };
	json_error_t err;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
	int rc;

	if (!root)
		return fail(why, cap, "not JSON: %s (line %d, column %d)", err.text, err.line,
			    err.column);
	if (!json_is_object(root))
		rc = fail(why, cap, "not a JSON object");
	else
		rc = get_int(root, "epoch", true, 1, INT64_MAX, &m.epoch, "map", why, cap);
	if (!rc)
		rc = get_int(root, "partition", false, 1, INT64_MAX, &m.partition, "map", why, cap);
	if (!rc && !json_object_get(root, "osds"))
		rc = fail(why, cap, "map: no \"osds\"");
	if (!rc)
		rc = parse_osds(json_object_get(root, "osds"), &m, why, cap);
	json_decref(root);
	if (rc) {
		cluster_map_free(&m);
		return rc;
	}
	*out = m;
	return 0;
}

#define CLUSTER_MAP_FILE_MAX (4u << 20)

int cluster_map_load(const char *path, struct cluster_map *out, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;
	int rc;

	if (!f) {
		rc = -errno;
		fail(why, cap, "%s: %s", path, strerror(-rc));
		return rc;
	}
	buf = malloc(CLUSTER_MAP_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, CLUSTER_MAP_FILE_MAX + 1, f);
	rc = ferror(f) ? -EIO : n > CLUSTER_MAP_FILE_MAX ? -EFBIG : 0;
	fclose(f);
	if (rc)
		fail(why, cap, "%s: %s", path, strerror(-rc));
	else
		rc = cluster_map_parse(buf, n, out, why, cap);
	free(buf);
	return rc;
}
