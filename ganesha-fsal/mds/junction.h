/* A junction's blob (ns_junction_set): the volume a directory in the root
 * stands for, by the directory's own name, and where its manager group
 * serves it, which is what an NFSv4 client crossing the directory is
 * referred to (fs_locations, RFC 8881 section 11.16).  Text, one line per
 * field in this order, so a dump of the store reads it:
 *
 *   volume vol1        the volume, also the junction's name in the root
 *   path /pando        its path on its servers (fs_locations' rootpath)
 *   server 10.0.0.2    1..PANDO_JUNCTION_SERVERS lines: its group's
 *                      service address first, then its members
 *
 * A server is a host name or an IPv4 or IPv6 address; NFSv4 referrals
 * carry no port, so a volume's servers listen on 2049. */
#ifndef PANDO_JUNCTION_H
#define PANDO_JUNCTION_H

#include <stddef.h>
#include <stdint.h>

#define PANDO_JUNCTION_SERVERS 4
#define PANDO_VOLUME_NAME_MAX 63
#define PANDO_JUNCTION_PATH_MAX 255
#define PANDO_JUNCTION_SERVER_MAX 253
/* A buffer that holds the longest blob the fields allow, and the NUL
 * the encoder ends it with (not part of the blob): within NS_JUNCTION_MAX. */
#define PANDO_JUNCTION_BLOB_MAX \
	(8 + PANDO_VOLUME_NAME_MAX + 6 + PANDO_JUNCTION_PATH_MAX + \
	 PANDO_JUNCTION_SERVERS * (8 + PANDO_JUNCTION_SERVER_MAX) + 1)

struct pando_junction {
	char volume[PANDO_VOLUME_NAME_MAX + 1];
	char path[PANDO_JUNCTION_PATH_MAX + 1];
	uint32_t servers;
	char server[PANDO_JUNCTION_SERVERS][PANDO_JUNCTION_SERVER_MAX + 1];
};

/* What is wrong with a junction's fields, in words, or NULL:
 *   - volume: 1..63 of [A-Za-z0-9_.-], not starting with '.' or '-';
 *   - path: "/" or "/" components of those characters, none "." or "..",
 *     no empty one, at most 255 bytes;
 *   - servers: 1..PANDO_JUNCTION_SERVERS, each 1..253 of [A-Za-z0-9.:-]. */
const char *pando_junction_problem(const struct pando_junction *j);
/* -EINVAL for a junction with a problem; -ENOSPC if cap is too small. */
int pando_junction_encode(const struct pando_junction *j, char *buf, size_t cap, size_t *len);
/* -EINVAL unless buf is exactly what pando_junction_encode writes for a
 * junction without a problem. */
int pando_junction_decode(const void *buf, size_t len, struct pando_junction *out);

#endif
