/* base64 per RFC 4648 section 4: etcd's gateway encodes keys and values
 * (protobuf bytes fields) this way, always padded. */
#include "etcd_base64.h"

#include <errno.h>
#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

size_t base64_encode(const void *in, size_t n, char *out)
{
	const unsigned char *p = in;
	size_t o = 0, i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

static int sextet(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* One quantum of four characters; the last may carry one or two '='. */
static int decode_quantum(const char *q, int last, unsigned char *out, size_t *got)
{
	int pad = 0, s[4], k;

	if (last)
		pad = (q[3] == '=') + (q[2] == '=' && q[3] == '=');
	for (k = 0; k < 4 - pad; k++) {
		s[k] = sextet(q[k]);
		if (s[k] < 0)
			return -EINVAL;
	}
	for (; k < 4; k++)
		s[k] = 0;
	uint32_t v = (uint32_t)s[0] << 18 | (uint32_t)s[1] << 12 | (uint32_t)s[2] << 6 |
		     (uint32_t)s[3];
	out[0] = v >> 16;
	if (pad < 2)
		out[1] = v >> 8 & 0xff;
	if (pad < 1)
		out[2] = v & 0xff;
	/* Bits below the last character must be zero (canonical form). */
	if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
		return -EINVAL;
	*got = 3 - (size_t)pad;
	return 0;
}

int base64_decode(const char *in, size_t n, void *out, size_t *outlen)
{
	unsigned char *o = out;
	size_t total = 0, got;

	if (n % 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 4) {
		int rc = decode_quantum(in + i, i + 4 == n, o + total, &got);
		if (rc)
			return rc;
		total += got;
	}
	*outlen = total;
	return 0;
}
