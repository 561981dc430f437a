/* Universal addresses (RFC 5665 section 5.2.3): the host part as
 * inet_ntop writes it, then ".p1.p2", the port's high and low byte in
 * decimal.  IPv6 (RFC 5952 text form) uses the same two-byte tail. */
#include "pando/ff_xdr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static int put_uaddr(struct pando_netaddr *out, const char *netid, const char *host, uint16_t port)
{
	int n = snprintf(out->uaddr, sizeof(out->uaddr), "%s.%u.%u", host, port >> 8, port & 0xffu);

	if (n < 0 || (size_t)n >= sizeof(out->uaddr))
		return -EINVAL;
	snprintf(out->netid, sizeof(out->netid), "%s", netid);
	return 0;
}

int pando_netaddr_from_sockaddr(const struct sockaddr *sa, struct pando_netaddr *out)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		if (!inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host)))
			return -EINVAL;
		return put_uaddr(out, "tcp", host, ntohs(in->sin_port));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		if (!inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host)))
			return -EINVAL;
		return put_uaddr(out, "tcp6", host, ntohs(in6->sin6_port));
	}
	return -EAFNOSUPPORT;
}

/* A decimal byte: 1 to 3 digits, at most 255. */
static int parse_byte(const char *s, size_t n, unsigned *v)
{
	*v = 0;
	if (n == 0 || n > 3)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		*v = *v * 10 + (unsigned)(s[i] - '0');
	}
	return *v > 255 ? -EINVAL : 0;
}

/* Splits "host.p1.p2" into host (copied) and port. */
static int split_port(const char *uaddr, char *host, size_t host_size, uint16_t *port)
{
	const char *p2 = strrchr(uaddr, '.'), *p1;
	unsigned hi, lo;

	if (!p2 || p2 == uaddr)
		return -EINVAL;
	for (p1 = p2 - 1; p1 > uaddr && *p1 != '.'; p1--)
		;
	if (*p1 != '.' || (size_t)(p1 - uaddr) >= host_size ||
	    parse_byte(p1 + 1, (size_t)(p2 - p1 - 1), &hi) ||
	    parse_byte(p2 + 1, strlen(p2 + 1), &lo))
		return -EINVAL;
	memcpy(host, uaddr, (size_t)(p1 - uaddr));
	host[p1 - uaddr] = '\0';
	*port = (uint16_t)(hi << 8 | lo);
	return 0;
}

int pando_netaddr_to_sockaddr(const struct pando_netaddr *na, struct sockaddr_storage *out)
{
	char host[INET6_ADDRSTRLEN];
	uint16_t port;

	memset(out, 0, sizeof(*out));
	if (split_port(na->uaddr, host, sizeof(host), &port))
		return -EINVAL;
	if (strcmp(na->netid, "tcp") == 0) {
		struct sockaddr_in *in = (struct sockaddr_in *)out;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -EINVAL;
	}
	if (strcmp(na->netid, "tcp6") == 0) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	return -EINVAL;
}
