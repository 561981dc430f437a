/* "HOST:PORT" as daemons and tools take addresses on the command line.
 *
 * The string splits at its last colon, so a bare IPv6 address works
 * ("::1:2049") as well as the bracketed form ("[::1]:2049", brackets
 * dropped).  The port is decimal digits only, 0 to 65535: getaddrinfo()
 * would take "+80" or " 80" and wrap 70000 to 4464 without a word.  Port 0
 * is valid here (a listener then gets one from the kernel). */
#ifndef PANDO_HOSTPORT_H
#define PANDO_HOSTPORT_H

#include <stdbool.h>
#include <stddef.h>

/* Fills host (hcap bytes) and port (pcap bytes, 6 are enough), both
 * NUL-terminated; 0, or -EINVAL for anything else (no colon, an empty
 * host or port, a bad port, a part longer than its buffer). */
int pando_hostport_split(const char *spec, char *host, size_t hcap, char *port, size_t pcap);
/* Whether spec is an address a peer can be reached at: it splits as
 * above (host under 256 bytes) and its port is 1..65535, not 0. */
bool pando_hostport_is_address(const char *spec);

#endif
