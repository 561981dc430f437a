#include "hostport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int port_valid(const char *p)
{
	unsigned long v = 0;
	size_t n = strlen(p);

	if (n == 0 || n > 5)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	return v <= 65535;
}

int pando_hostport_split(const char *spec, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon = strrchr(spec, ':');
	const char *h = spec;
	size_t hlen;

	if (!colon || !port_valid(colon + 1) || strlen(colon + 1) >= pcap)
		return -EINVAL;
	hlen = (size_t)(colon - spec);
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (hlen == 0 || hlen >= hcap)
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

bool pando_hostport_is_address(const char *spec)
{
	char host[256], port[6];

	return !pando_hostport_split(spec, host, sizeof(host), port, sizeof(port)) &&
	       strtoul(port, NULL, 10) != 0;
}
