/* Junction blobs (junction.h).  Decoding is strict, one field per line in
 * the order written, so a blob has one reading and pando-fsck can compare
 * bytes. */
#include "junction.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ns_store.h"

_Static_assert(PANDO_JUNCTION_BLOB_MAX <= NS_JUNCTION_MAX, "a junction's blob fits the store's");

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

static bool server_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == ':' || c == '-';
}

static bool all_of(const char *s, size_t len, bool (*ok)(char))
{
	for (size_t i = 0; i < len; i++)
		if (!ok(s[i]))
			return false;
	return true;
}

/* One path component: s[0..len). */
static bool component_ok(const char *s, size_t len)
{
	if (!len || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	return all_of(s, len, name_char);
}

static bool path_ok(const char *p)
{
	size_t len = strnlen(p, PANDO_JUNCTION_PATH_MAX + 1);

	if (len > PANDO_JUNCTION_PATH_MAX || p[0] != '/')
		return false;
	if (len == 1)
		return true;
	for (const char *c = p + 1;;) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);

		if (!component_ok(c, n))
			return false;
		if (!slash)
			return true;
		c = slash + 1;
	}
}

const char *pando_junction_problem(const struct pando_junction *j)
{
	size_t vlen = strnlen(j->volume, sizeof(j->volume));

	if (!vlen || vlen >= sizeof(j->volume) || !all_of(j->volume, vlen, name_char) ||
	    j->volume[0] == '.' || j->volume[0] == '-')
		return "a volume name is 1 to 63 of A-Z a-z 0-9 _ . -, not starting with . or -";
	if (!path_ok(j->path))
		return "a volume path is / or /-separated names, at most 255 bytes";
	if (j->servers < 1 || j->servers > PANDO_JUNCTION_SERVERS)
		return "a junction names 1 to 4 servers";
	for (uint32_t i = 0; i < j->servers; i++) {
		size_t n = strnlen(j->server[i], sizeof(j->server[i]));

		if (!n || n >= sizeof(j->server[i]) || !all_of(j->server[i], n, server_char))
			return "a server is a host name or an address, 1 to 253 of A-Z a-z 0-9 . : -";
	}
	return NULL;
}

int pando_junction_encode(const struct pando_junction *j, char *buf, size_t cap, size_t *len)
{
	size_t at = 0;
	int n;

	if (pando_junction_problem(j))
		return -EINVAL;
	n = snprintf(buf, cap, "volume %s\npath %s\n", j->volume, j->path);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	at = (size_t)n;
	for (uint32_t i = 0; i < j->servers; i++) {
		n = snprintf(buf + at, cap - at, "server %s\n", j->server[i]);
		if (n < 0 || (size_t)n >= cap - at)
			return -ENOSPC;
		at += (size_t)n;
	}
	*len = at;
	return 0;
}

/* The line at *at that starts with `key` and a space: its value, copied
 * into out (of size cap), and *at moved past its newline. */
static int take_line(const char *buf, size_t len, size_t *at, const char *key, char *out,
		     size_t cap)
{
	size_t klen = strlen(key), start = *at + klen + 1;
	const char *nl;

	if (len - *at < klen + 1 || memcmp(buf + *at, key, klen) || buf[*at + klen] != ' ')
		return -EINVAL;
	nl = memchr(buf + start, '\n', len - start);
	if (!nl || (size_t)(nl - (buf + start)) >= cap ||
	    memchr(buf + start, 0, nl - (buf + start)))
		return -EINVAL;
	memcpy(out, buf + start, nl - (buf + start));
	out[nl - (buf + start)] = 0;
	*at = (size_t)(nl - buf) + 1;
	return 0;
}

int pando_junction_decode(const void *data, size_t len, struct pando_junction *out)
{
	const char *buf = data;
	size_t at = 0;

	memset(out, 0, sizeof(*out));
	if (take_line(buf, len, &at, "volume", out->volume, sizeof(out->volume)) ||
	    take_line(buf, len, &at, "path", out->path, sizeof(out->path)))
		return -EINVAL;
	while (at < len) {
		if (out->servers == PANDO_JUNCTION_SERVERS ||
		    take_line(buf, len, &at, "server", out->server[out->servers],
			      sizeof(out->server[0])))
			return -EINVAL;
		out->servers++;
	}
	return pando_junction_problem(out) ? -EINVAL : 0;
}
