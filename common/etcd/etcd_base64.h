/* Standard base64 (RFC 4648 section 4, with padding): etcd's JSON gateway
 * carries every key and value this way. */
#ifndef PANDO_ETCD_BASE64_H
#define PANDO_ETCD_BASE64_H

#include <stddef.h>

/* The encoded length of n bytes, without the NUL. */
size_t base64_encoded_len(size_t n);
/* Writes the encoding of in[n] and a NUL to out (base64_encoded_len(n) + 1
 * bytes); returns the length without the NUL. */
size_t base64_encode(const void *in, size_t n, char *out);
/* Decodes in[n] (padding required, no whitespace) into out, which holds at
 * least n / 4 * 3 bytes; *outlen gets the byte count.  -EINVAL for
 * anything that is not canonical base64. */
int base64_decode(const char *in, size_t n, void *out, size_t *outlen);

#endif
