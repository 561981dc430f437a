#include "pando/cluster_key.h"

#include <errno.h>
#include <stdbool.h>
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

static int parse_id(const char *val, size_t vlen, uint16_t *id, const char **why)
{
	char num[16];
	char *end;
	unsigned long n;

	if (vlen == 0 || vlen >= sizeof(num)) {
		*why = "bad key id";
		return -EINVAL;
	}
	memcpy(num, val, vlen);
	num[vlen] = 0;
	n = strtoul(num, &end, 10);
	if (*end || n == 0 || n > UINT16_MAX) {
		*why = "key id must be 1..65535";
		return -EINVAL;
	}
	*id = (uint16_t)n;
	return 0;
}

/* The names a key file may hold, and the bit of `seen` each sets. */
enum { SEEN_ID = 1, SEEN_SECRET = 2, SEEN_PREV_ID = 4, SEEN_PREV_SECRET = 8 };

static int set_field(struct cluster_key *key, const char *name, size_t nlen, const char *val,
		     size_t vlen, unsigned *seen, const char **why)
{
	bool prev = nlen > 9 && memcmp(name, "previous_", 9) == 0;
	uint16_t *id = prev ? &key->previous_id : &key->id;
	uint8_t *secret = prev ? key->previous_secret : key->secret;

	if (prev) {
		name += 9;
		nlen -= 9;
	}
	if (nlen == 2 && memcmp(name, "id", 2) == 0) {
		*seen |= prev ? SEEN_PREV_ID : SEEN_ID;
		return parse_id(val, vlen, id, why);
	}
	if (nlen == 6 && memcmp(name, "secret", 6) == 0) {
		*seen |= prev ? SEEN_PREV_SECRET : SEEN_SECRET;
		if (!parse_secret(val, vlen, secret))
			return 0;
		*why = "secret must be 64 hex digits";
		return -EINVAL;
	}
	*why = "unknown name (expected id, secret, previous_id or previous_secret)";
	return -EINVAL;
}

/* One "name = value" line; blank lines and '#' comments are skipped. */
static int parse_line(const char *line, size_t len, struct cluster_key *key, unsigned *seen,
		      const char **why)
{
	const char *eq, *val;
	size_t vlen;

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
	val = eq + 1;
	vlen = len - (size_t)(val - line);
	while (vlen && (*val == ' ' || *val == '\t')) {
		val++;
		vlen--;
	}
	return set_field(key, line, trimmed_len(line, (size_t)(eq - line)), val,
			 trimmed_len(val, vlen), seen, why);
}

static int check_seen(const struct cluster_key *key, unsigned seen, const char **why)
{
	if ((seen & (SEEN_ID | SEEN_SECRET)) != (SEEN_ID | SEEN_SECRET)) {
		*why = "key file needs both id and secret";
		return -EINVAL;
	}
	seen &= SEEN_PREV_ID | SEEN_PREV_SECRET;
	if (seen && seen != (SEEN_PREV_ID | SEEN_PREV_SECRET)) {
		*why = "a previous key needs both previous_id and previous_secret";
		return -EINVAL;
	}
	if (seen && key->previous_id == key->id) {
		*why = "previous_id must differ from id";
		return -EINVAL;
	}
	return 0;
}

int cluster_key_parse(const char *text, struct cluster_key *key, const char **why)
{
	unsigned seen = 0;
	const char *p = text;
	int rc = 0;

	memset(key, 0, sizeof(*key));
	while (*p && !rc) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		rc = parse_line(p, len, key, &seen, why);
		p += len + (nl ? 1 : 0);
	}
	if (!rc)
		rc = check_seen(key, seen, why);
	if (rc)
		explicit_bzero(key, sizeof(*key));
	return rc;
}

const uint8_t *cluster_key_secret(const struct cluster_key *key, uint32_t id)
{
	if (id == key->id)
		return key->secret;
	if (key->previous_id && id == key->previous_id)
		return key->previous_secret;
	return NULL;
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
	memset(key, 0, sizeof(*key));
	key->id = id;
	if (getrandom(key->secret, sizeof(key->secret), 0) != (ssize_t)sizeof(key->secret))
		return -EIO;
	return 0;
}

static void hex_secret(const uint8_t *secret, char hex[2 * CLUSTER_KEY_SECRET_LEN + 1])
{
	for (size_t i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", secret[i]);
}

void cluster_key_format(const struct cluster_key *key, char *buf, size_t cap)
{
	char hex[2 * CLUSTER_KEY_SECRET_LEN + 1];
	int n;

	hex_secret(key->secret, hex);
	n = snprintf(buf, cap, "id = %u\nsecret = %s\n", key->id, hex);
	if (key->previous_id && n > 0 && (size_t)n < cap) {
		hex_secret(key->previous_secret, hex);
		snprintf(buf + n, cap - (size_t)n, "previous_id = %u\nprevious_secret = %s\n",
			 key->previous_id, hex);
	}
	explicit_bzero(hex, sizeof(hex));
}
