#include "pando/cluster_key.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "hex.h"

static int parse_secret(const char *hex, size_t len, uint8_t *out)
{
	if (len != 2 * CLUSTER_KEY_SECRET_LEN)
		return -1;
	for (size_t i = 0; i < CLUSTER_KEY_SECRET_LEN; i++) {
		int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static size_t trimmed_len(const char *s, size_t len)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	return len;
}

/* One "name = value" line; blank lines and '#' comments are skipped. */
static int parse_line(const char *line, size_t len, struct cluster_key *key,
		      unsigned *seen, const char **why)
{
	const char *eq, *val;
	size_t nlen, vlen;

	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (!len || *line == '#')
		return 0;
	eq = memchr(line, '=', len);
	if (!eq) {
		*why = "line without '='";
		return -EINVAL;
	}
	nlen = trimmed_len(line, (size_t)(eq - line));
	val = eq + 1;
	vlen = len - (size_t)(val - line);
	while (vlen && (*val == ' ' || *val == '\t')) {
		val++;
		vlen--;
	}
	vlen = trimmed_len(val, vlen);
	if (nlen == 2 && memcmp(line, "id", 2) == 0) {
		char num[16];
		char *end;
		unsigned long id;

		if (vlen == 0 || vlen >= sizeof(num)) {
			*why = "bad key id";
			return -EINVAL;
		}
		memcpy(num, val, vlen);
		num[vlen] = 0;
		id = strtoul(num, &end, 10);
		if (*end || id == 0 || id > UINT16_MAX) {
			*why = "key id must be 1..65535";
			return -EINVAL;
		}
		key->id = (uint16_t)id;
		*seen |= 1;
		return 0;
	}
	if (nlen == 6 && memcmp(line, "secret", 6) == 0) {
		if (parse_secret(val, vlen, key->secret)) {
			*why = "secret must be 64 hex digits";
			return -EINVAL;
		}
		*seen |= 2;
		return 0;
	}
	*why = "unknown name (expected id or secret)";
	return -EINVAL;
}

int cluster_key_parse(const char *text, struct cluster_key *key, const char **why)
{
	unsigned seen = 0;
	const char *p = text;

	memset(key, 0, sizeof(*key));
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int rc = parse_line(p, len, key, &seen, why);

		if (rc)
			return rc;
		p += len + (nl ? 1 : 0);
	}
	if (seen != 3) {
		*why = "key file needs both id and secret";
		return -EINVAL;
	}
	return 0;
}

int cluster_key_load(const char *path, struct cluster_key *key, const char **why)
{
	char text[1024];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		int err = errno;

		*why = strerror(err);
		return -err;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	if (ferror(f) || !feof(f)) {
		fclose(f);
		*why = "unreadable or longer than 1 KiB";
		return -EINVAL;
	}
	fclose(f);
	text[n] = 0;
	return cluster_key_parse(text, key, why);
}

int cluster_key_generate(uint16_t id, struct cluster_key *key)
{
	key->id = id;
	if (getrandom(key->secret, sizeof(key->secret), 0) != (ssize_t)sizeof(key->secret))
		return -EIO;
	return 0;
}

void cluster_key_format(const struct cluster_key *key, char *buf, size_t cap)
{
	char hex[2 * CLUSTER_KEY_SECRET_LEN + 1];

	for (size_t i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", key->secret[i]);
	snprintf(buf, cap, "id = %u\nsecret = %s\n", key->id, hex);
}
